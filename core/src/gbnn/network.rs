//! The GBNN as a value: shape, stored-message count and weight matrix, with its methods written
//! once over the weight storage (heapless's `Vec`/`VecView` idea): [`Network`] keeps `W` on the
//! heap (feature `alloc`), [`FixedNetwork`] in a fixed array for microcontrollers, and
//! [`NetworkView`] borrows it read-only (e.g. `&'static [u64]` linked into flash by `neurobits gbnn
//! export`): retrieval needs only `AsRef<[Word]>`, storing `AsMut<[Word]>` as well, so every rule
//! runs on all three through the same methods.

use super::mode::check_message;
use super::retrieve::checked_retrieve_in;
use super::store::store_message;
use super::workload::message;
use super::{Geometry, Mode, Params, Rule, Stats, MAX_CLUSTERS};
use crate::{Error, Word};

/// A GBNN over weight storage `S` (a slice of at least [`Geometry::weight_words`] words). Use
/// it through [`Network`] or [`FixedNetwork`].
///
/// ```
/// use neurobits_core::gbnn::{FixedNetwork, weight_words, Rule, Params, ERASED};
/// let mut net = FixedNetwork::<{ weight_words(3, 3) }>::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
/// net.retrieve(&[ERASED, 2, 0], Rule::SumOfMax, Params::default(), &mut v, &mut s).unwrap();
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkBase<S> {
    geom: Geometry,
    stored: u64,
    w: S,
}

/// A GBNN whose weights live in a fixed array of `WORDS` words: no heap, for microcontrollers.
/// Size it with [`super::weight_words`].
///
/// ```
/// use neurobits_core::gbnn::{FixedNetwork, weight_words};
/// let mut net = FixedNetwork::<{ weight_words(8, 50) }>::new(8, 50).unwrap();
/// net.store(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
/// assert_eq!(net.stored(), 1);
/// assert!(net.store(&[50, 0, 0, 0, 0, 0, 0, 0]).is_err());
/// ```
pub type FixedNetwork<const WORDS: usize> = NetworkBase<[Word; WORDS]>;

/// A heap-backed GBNN (feature `alloc`).
///
/// ```
/// use neurobits_core::gbnn::{Network, Rule, Params, ERASED};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let (mut v, mut s) = (vec![0; 3], vec![0; 3]);
/// net.retrieve(&[ERASED, 2, 0], Rule::SumOfMax, Params::default(), &mut v, &mut s).unwrap();
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// ```
#[cfg(feature = "alloc")]
pub type Network = NetworkBase<alloc::vec::Vec<Word>>;

/// A read-only GBNN over borrowed weights: a `const` value over `&'static [Word]` in flash on a
/// microcontroller, so that retrieval needs only its two state buffers in RAM.
///
/// ```
/// use neurobits_core::gbnn::{FixedNetwork, NetworkView, weight_words, Rule, Params, ERASED};
/// static W: [u64; weight_words(3, 3)] = {
///     let mut w = [0u64; weight_words(3, 3)];
///     // message [1, 2, 0]: edges between neurons (0,1), (1,2), (2,0); row i, cluster word c.
///     (w[1 * 3 + 1], w[1 * 3 + 2]) = (0b100, 0b001);
///     (w[5 * 3 + 0], w[5 * 3 + 2]) = (0b010, 0b001);
///     (w[6 * 3 + 0], w[6 * 3 + 1]) = (0b010, 0b100);
///     w
/// };
/// const NET: NetworkView<'static> = match NetworkView::new(3, 3, 1, &W) {
///     Ok(n) => n,
///     Err(_) => panic!("W does not fit 3x3"),
/// };
/// let mut built = FixedNetwork::<{ weight_words(3, 3) }>::new(3, 3).unwrap();
/// built.store(&[1, 2, 0]).unwrap();
/// assert_eq!(built.weights(), NET.weights());
/// let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
/// NET.retrieve(&[ERASED, 2, 0], Rule::SumOfMax, Params::default(), &mut v, &mut s).unwrap();
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// ```
pub type NetworkView<'a> = NetworkBase<&'a [Word]>;

impl<'a> NetworkView<'a> {
    /// A view of `w` as the weights of a `clusters × neurons` network holding `stored` messages;
    /// `w` must be exactly [`super::weight_words`] words. `const`, for statics in flash.
    pub const fn new(clusters: usize, neurons: usize, stored: u64, w: &'a [Word]) -> Result<Self, Error> {
        let geom = match Geometry::new(clusters, neurons) {
            Ok(g) => g,
            Err(e) => return Err(e),
        };
        if w.len() != geom.weight_words() {
            return Err(Error::Capacity(geom.weight_words(), w.len()));
        }
        Ok(NetworkBase { geom, stored, w })
    }
}

impl<S: AsRef<[Word]>> NetworkBase<S> {
    /// A read-only view of this network's weights (no copy).
    ///
    /// ```
    /// let mut net = neurobits_core::gbnn::Network::new(2, 3).unwrap();
    /// net.store(&[1, 2]).unwrap();
    /// let view = net.view();
    /// assert_eq!((view.stored(), view.weights()), (1, net.weights()));
    /// ```
    pub fn view(&self) -> NetworkView<'_> {
        NetworkBase { geom: self.geom, stored: self.stored, w: self.weights() }
    }

    /// Retrieves a probe into `state` (scratch: a second buffer of the same size).
    pub fn retrieve(
        &self,
        symbols: &[u16],
        rule: Rule,
        params: Params,
        state: &mut [Word],
        scratch: &mut [Word],
    ) -> Result<Stats, Error> {
        self.retrieve_in(symbols, rule, Mode::Erasure, params, state, scratch)
    }

    /// [`NetworkBase::retrieve`] in `mode` ([`Mode::Noisy`]: known symbols may be wrong;
    /// [`Mode::Sparse`]: silent clusters, global winner-take-all).
    ///
    /// ```
    /// use neurobits_core::gbnn::{FixedNetwork, weight_words, Mode, Rule, Params, ERASED, SILENT};
    /// let mut net = FixedNetwork::<{ weight_words(4, 3) }>::new(4, 3).unwrap();
    /// net.store(&[1, 2, 0, SILENT]).unwrap();
    /// let (mut v, mut s) = ([0u64; 4], [0u64; 4]);
    /// net.retrieve_in(&[1, 2, ERASED, SILENT], Rule::SumOfSum, Mode::Sparse, Params::default(), &mut v, &mut s).unwrap();
    /// assert_eq!(v, [0b010, 0b100, 0b001, 0]);
    /// ```
    pub fn retrieve_in(
        &self,
        symbols: &[u16],
        rule: Rule,
        mode: Mode,
        params: Params,
        state: &mut [Word],
        scratch: &mut [Word],
    ) -> Result<Stats, Error> {
        checked_retrieve_in(&self.geom, self.weights(), symbols, rule, mode, &params, state, scratch)
    }

    /// The network's shape.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Messages stored so far.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// The weight matrix, row-major ([`Geometry::weight_words`] words).
    pub fn weights(&self) -> &[Word] {
        &self.w.as_ref()[..self.geom.weight_words()]
    }
}

impl<S: AsRef<[Word]> + AsMut<[Word]>> NetworkBase<S> {
    /// Stores a message (`C` symbols in `[0, L)`, or [`super::SILENT`] for the silent clusters of
    /// a sparse message: only the active clusters' clique is stored).
    pub fn store(&mut self, msg: &[u16]) -> Result<(), Error> {
        check_message(&self.geom, msg)?;
        store_message(&self.geom, self.w.as_mut(), msg);
        self.stored += 1;
        Ok(())
    }

    /// Stores messages `0..count` of the random stream `seed` ([`super::workload::message`]).
    ///
    /// ```
    /// let mut net = neurobits_core::gbnn::Network::new(4, 16).unwrap();
    /// net.store_random(7, 10);
    /// assert_eq!(net.stored(), 10);
    /// ```
    pub fn store_random(&mut self, seed: u64, count: u64) {
        let mut m = [0u16; MAX_CLUSTERS];
        let m = &mut m[..self.geom.clusters()];
        for k in 0..count {
            message(&self.geom, seed, k, m);
            store_message(&self.geom, self.w.as_mut(), m);
        }
        self.stored += count;
    }
}

impl<const WORDS: usize> FixedNetwork<WORDS> {
    /// An empty network of `clusters × neurons`; fails if it needs more than `WORDS` words.
    pub fn new(clusters: usize, neurons: usize) -> Result<Self, Error> {
        let geom = Geometry::new(clusters, neurons)?;
        if geom.weight_words() > WORDS {
            return Err(Error::Capacity(geom.weight_words(), WORDS));
        }
        Ok(NetworkBase { geom, stored: 0, w: [0; WORDS] })
    }
}

#[cfg(feature = "alloc")]
impl Network {
    /// An empty network; reports (rather than aborts on) a weight matrix that cannot be allocated.
    pub fn new(clusters: usize, neurons: usize) -> Result<Self, Error> {
        let geom = Geometry::new(clusters, neurons)?;
        let mut w = alloc::vec::Vec::new();
        w.try_reserve_exact(geom.weight_words()).map_err(|_| Error::TooLarge)?;
        w.resize(geom.weight_words(), 0);
        Ok(NetworkBase { geom, stored: 0, w })
    }

    /// A network from its parts (e.g. read from a file).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, Network};
    /// let g = Geometry::new(2, 3).unwrap();
    /// assert!(Network::from_parts(g, 0, vec![0; g.weight_words()]).is_ok());
    /// assert!(Network::from_parts(g, 0, vec![0; 1]).is_err());
    /// ```
    pub fn from_parts(geom: Geometry, stored: u64, w: alloc::vec::Vec<Word>) -> Result<Self, Error> {
        if w.len() != geom.weight_words() {
            return Err(Error::Capacity(geom.weight_words(), w.len()));
        }
        Ok(NetworkBase { geom, stored, w })
    }

    /// Shape, stored-message count and weight matrix, taken apart (see [`Network::from_parts`]).
    ///
    /// ```
    /// let (g, stored, w) = neurobits_core::gbnn::Network::new(2, 3).unwrap().into_parts();
    /// assert_eq!((stored, w.len()), (0, g.weight_words()));
    /// ```
    pub fn into_parts(self) -> (Geometry, u64, alloc::vec::Vec<Word>) {
        (self.geom, self.stored, self.w)
    }

    /// `W` as a dense `n × n` `f32` matrix with `γ` ([`Geometry::effective_gamma`], so that every
    /// score is an exact `f32` integer) on the diagonal (Eq. 10), for the dense-float baselines;
    /// symmetric, so row- and column-major alike.
    ///
    /// ```
    /// let mut net = neurobits_core::gbnn::Network::new(2, 2).unwrap();
    /// net.store(&[1, 0]).unwrap();
    /// // neurons (0,0) (0,1) (1,0) (1,1): edge (0,1)–(1,0)
    /// assert_eq!(net.dense_weights(2), [2., 0., 0., 0., 0., 2., 1., 0., 0., 1., 2., 0., 0., 0., 0., 2.]);
    /// ```
    pub fn dense_weights(&self, gamma: u32) -> alloc::vec::Vec<f32> {
        let (g, n) = (&self.geom, self.geom.neurons());
        let l = g.neurons_per_cluster();
        let gamma = g.effective_gamma(gamma);
        let mut d = alloc::vec![0f32; n * n];
        for i in 0..n {
            let row = g.row(&self.w, i);
            for j in 0..n {
                let (wi, bit) = g.bit(j / l, j % l);
                d[i * n + j] = if i == j { gamma as f32 } else { (row[wi] & bit != 0) as u8 as f32 };
            }
        }
        d
    }
}
