use crate::{Error, Word, WORD_BITS};

/// Most clusters a network may have: cluster sets (erased, frozen) are `u64` masks.
pub const MAX_CLUSTERS: usize = 64;
/// Most neurons per cluster: symbols are `u16` and [`super::ERASED`] is reserved.
pub const MAX_NEURONS: usize = u16::MAX as usize - 1;

/// Words of one state vector or one row of `W` of a `clusters × neurons` network: `C·⌈L/64⌉`
/// (0 when it overflows), usable in const generics.
///
/// ```
/// assert_eq!(neurobits_core::gbnn::row_words(8, 50), 8);
/// ```
pub const fn row_words(clusters: usize, neurons: usize) -> usize {
    match clusters.checked_mul(neurons.div_ceil(WORD_BITS)) {
        Some(w) => w,
        None => 0,
    }
}

/// Words of the weight matrix of a `clusters × neurons` network (0 when it overflows), usable in
/// const generics.
///
/// ```
/// // 8 clusters of 50 neurons: 400 rows of 8 words.
/// assert_eq!(neurobits_core::gbnn::weight_words(8, 50), 400 * 8);
/// ```
pub const fn weight_words(clusters: usize, neurons: usize) -> usize {
    let wpc = neurons.div_ceil(WORD_BITS);
    match clusters.checked_mul(neurons) {
        Some(n) => match n.checked_mul(clusters) {
            Some(x) => match x.checked_mul(wpc) {
                Some(w) => w,
                None => 0,
            },
            None => 0,
        },
        None => 0,
    }
}

/// Shape of a network: `C` clusters of `L` neurons, each cluster padded to whole words.
///
/// ```
/// let g = neurobits_core::gbnn::Geometry::new(16, 512).unwrap();
/// assert_eq!((g.words_per_cluster(), g.row_words(), g.neurons()), (8, 128, 8192));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Geometry {
    clusters: u32,
    neurons: u32,
    wpc: u32,
}

impl Geometry {
    /// Checks the bounds and computes the padded layout.
    ///
    /// ```
    /// use neurobits_core::{Error, gbnn::Geometry};
    /// assert!(Geometry::new(8, 128).is_ok());
    /// assert_eq!(Geometry::new(65, 2), Err(Error::TooManyClusters(65)));
    /// ```
    pub const fn new(clusters: usize, neurons: usize) -> Result<Self, Error> {
        if clusters == 0 {
            return Err(Error::ZeroClusters);
        }
        if neurons == 0 {
            return Err(Error::ZeroNeurons);
        }
        if clusters > MAX_CLUSTERS {
            return Err(Error::TooManyClusters(clusters));
        }
        if neurons > MAX_NEURONS {
            return Err(Error::TooManyNeurons(neurons));
        }
        if weight_words(clusters, neurons) == 0 {
            return Err(Error::TooLarge);
        }
        Ok(Geometry { clusters: clusters as u32, neurons: neurons as u32, wpc: neurons.div_ceil(WORD_BITS) as u32 })
    }

    /// `C`.
    #[inline(always)]
    pub const fn clusters(&self) -> usize {
        self.clusters as usize
    }
    /// `L`.
    #[inline(always)]
    pub const fn neurons_per_cluster(&self) -> usize {
        self.neurons as usize
    }
    /// `⌈L/64⌉`.
    #[inline(always)]
    pub const fn words_per_cluster(&self) -> usize {
        self.wpc as usize
    }
    /// Words of one state vector or one row of `W`: `C·⌈L/64⌉`.
    #[inline(always)]
    pub const fn row_words(&self) -> usize {
        self.clusters as usize * self.wpc as usize
    }
    /// `n = C·L`.
    #[inline(always)]
    pub const fn neurons(&self) -> usize {
        self.clusters as usize * self.neurons as usize
    }
    /// Words of `W`: `n` rows.
    #[inline(always)]
    pub const fn weight_words(&self) -> usize {
        self.neurons() * self.row_words()
    }
    /// The sum-of-sum `γ` with the same dynamics and no overflow: a neuron hears at most
    /// `(C−1)·L` signals, so every `γ > (C−1)·L` ranks the neurons of a cluster exactly as
    /// `(C−1)·L + 1` does (each active neuron above each inactive one, ties unchanged), and scores
    /// then stay below `2·(C−1)·L + 2 < 2^23`. Every target scores with this `γ`.
    ///
    /// ```
    /// let g = neurobits_core::gbnn::Geometry::new(3, 3).unwrap();
    /// assert_eq!(g.effective_gamma(2), 2);
    /// assert_eq!(g.effective_gamma(u32::MAX), 7); // (3−1)·3 + 1
    /// ```
    #[inline(always)]
    pub const fn effective_gamma(&self, gamma: u32) -> u32 {
        let cap = (self.clusters - 1) * self.neurons + 1;
        if gamma > cap {
            cap
        } else {
            gamma
        }
    }
    /// Mask with all cluster bits set.
    #[inline(always)]
    pub const fn all_clusters(&self) -> u64 {
        if self.clusters as usize == MAX_CLUSTERS {
            u64::MAX
        } else {
            (1u64 << self.clusters) - 1
        }
    }
    /// Flat index of neuron `l` of cluster `c`.
    #[inline(always)]
    pub const fn neuron(&self, c: usize, l: usize) -> usize {
        c * self.neurons as usize + l
    }
    /// Word index (within a row) and bit mask of neuron `l` of cluster `c`.
    #[inline(always)]
    pub const fn bit(&self, c: usize, l: usize) -> (usize, Word) {
        (c * self.wpc as usize + l / WORD_BITS, 1 << (l % WORD_BITS))
    }
    /// The valid bits of word `wi` of a cluster (the last word of a cluster may be partial).
    #[inline(always)]
    pub const fn valid_bits(&self, wi: usize) -> Word {
        let rem = self.neurons as usize - wi * WORD_BITS;
        if rem >= WORD_BITS {
            Word::MAX
        } else {
            (1 << rem) - 1
        }
    }
    /// Words of row `i` of `W`.
    #[inline(always)]
    pub fn row<'a>(&self, w: &'a [Word], i: usize) -> &'a [Word] {
        let rw = self.row_words();
        &w[i * rw..(i + 1) * rw]
    }
    /// Checks a message or probe: `C` symbols, each in `[0, L)` or, if `allow_erased`, [`super::ERASED`].
    ///
    /// ```
    /// use neurobits_core::{Error, gbnn::{Geometry, ERASED}};
    /// let g = Geometry::new(2, 4).unwrap();
    /// assert_eq!(g.check_symbols(&[1, 4], false), Err(Error::Symbol(1, 4)));
    /// assert!(g.check_symbols(&[1, ERASED], true).is_ok());
    /// ```
    #[inline]
    pub fn check_symbols(&self, symbols: &[u16], allow_erased: bool) -> Result<(), Error> {
        if symbols.len() != self.clusters() {
            return Err(Error::Arity(self.clusters(), symbols.len()));
        }
        // One pass without branches first (it vectorises; a GPU batch checks 10^6 probes before
        // its first launch); the loop below runs only to name the first bad symbol.
        let l = self.neurons_per_cluster();
        let bad = symbols.iter().fold(false, |b, &s| b | (!(allow_erased & (s == super::ERASED)) & (s as usize >= l)));
        if !bad {
            return Ok(());
        }
        for (c, &s) in symbols.iter().enumerate() {
            let erased_ok = allow_erased && s == super::ERASED;
            if !erased_ok && s as usize >= self.neurons_per_cluster() {
                return Err(Error::Symbol(c, s));
            }
        }
        Ok(())
    }
    /// Mask of the erased clusters of a probe.
    #[inline]
    pub fn erased_mask(&self, symbols: &[u16]) -> u64 {
        // Without a branch: which clusters are erased is random, so a branch mispredicts half
        // the time.
        let mut m = 0;
        for (c, &s) in symbols.iter().enumerate().take(self.clusters()) {
            m |= ((s == super::ERASED) as u64) << c;
        }
        m
    }
}
