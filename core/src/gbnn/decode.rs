//! Compact results: a cluster's state decoded to its lowest active symbol and the number of
//! active neurons, 4 bytes instead of `⌈L/64⌉` words (64× less to move for `L = 2048`).

use super::{Geometry, ERASED};
use crate::Word;

/// One cluster's final state, packed in a `u32` (the GPU writes it as such): the lowest active
/// symbol in the low half ([`ERASED`] when none is active), the number of active neurons in the
/// high half (`L ≤ 65 534`, so it never saturates). A retrieval succeeded in this cluster when
/// exactly one neuron is active; more than one is an ambiguous answer, flagged by the count.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, decode::{decode_cluster, Decoded}};
/// let g = Geometry::new(2, 100).unwrap(); // 2 words per cluster
/// let v = [0u64, 1 << 7, 0b1010, 0];      // cluster 0: neuron 71; cluster 1: neurons 1 and 3
/// assert_eq!(decode_cluster(&g, &v, 0), Decoded::new(71, 1));
/// let d = decode_cluster(&g, &v, 1);
/// assert_eq!((d.symbol(), d.count(), d.unique()), (Some(1), 2, None));
/// assert_eq!(decode_cluster(&g, &[0; 4], 0).symbol(), None);
/// assert_eq!(Decoded::new(ERASED, 0).0, 0xFFFF);
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Decoded(pub u32);

impl Decoded {
    /// Packs `symbol` (or [`ERASED`]) and `count`.
    pub const fn new(symbol: u16, count: u16) -> Decoded {
        Decoded(symbol as u32 | (count as u32) << 16)
    }

    /// The lowest active symbol, `None` when no neuron is active.
    pub const fn symbol(self) -> Option<u16> {
        match self.0 as u16 {
            ERASED => None,
            s => Some(s),
        }
    }

    /// Active neurons in the cluster.
    pub const fn count(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// The symbol when exactly one neuron is active.
    pub const fn unique(self) -> Option<u16> {
        if self.count() == 1 {
            self.symbol()
        } else {
            None
        }
    }
}

/// Decodes cluster `c` of state `v` (a row of [`Geometry::row_words`] words).
#[inline]
pub fn decode_cluster(geom: &Geometry, v: &[Word], c: usize) -> Decoded {
    let wpc = geom.words_per_cluster();
    let mut d = Decoder::default();
    for (wi, &x) in v[c * wpc..(c + 1) * wpc].iter().enumerate() {
        d.word(wi, x);
    }
    d.done()
}

/// [`decode_cluster`] reading only the words that the cluster's occupancy marks as nonzero
/// (`occ`: its [`occupancy_words`](super::rules::occupancy_words) parts, as the joint rule keeps
/// them), so the other words of `v` may hold anything: one or two loads instead of `⌈L/64⌉`.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, decode::*, rules::occupancy_part};
/// let g = Geometry::new(2, 100).unwrap();
/// let v = [0u64, 1 << 7, 0b1010, 0];
/// for c in 0..2 {
///     let occ = [occupancy_part(&g, &v, c, 0)];
///     let mut junk = v;
///     junk[c * 2 + (occ[0] == 1) as usize] = u64::MAX; // a word the occupancy marks as zero
///     assert_eq!(decode_cluster_occ(&g, &junk, c, &occ), decode_cluster(&g, &v, c));
/// }
/// ```
#[inline]
pub fn decode_cluster_occ(geom: &Geometry, v: &[Word], c: usize, occ: &[u64]) -> Decoded {
    let wpc = geom.words_per_cluster();
    let mut d = Decoder::default();
    for (part, &o) in occ.iter().enumerate() {
        for k in crate::bits::set_bits(o) {
            d.word(part * 64 + k, v[c * wpc + part * 64 + k]);
        }
    }
    d.done()
}

/// The lowest active symbol and the count, over a cluster's words in increasing index.
struct Decoder {
    symbol: u16,
    count: u32,
}

impl Default for Decoder {
    #[inline(always)]
    fn default() -> Self {
        Decoder { symbol: ERASED, count: 0 }
    }
}

impl Decoder {
    #[inline(always)]
    fn word(&mut self, wi: usize, x: Word) {
        if x != 0 && self.symbol == ERASED {
            self.symbol = (wi * 64 + x.trailing_zeros() as usize) as u16;
        }
        self.count += x.count_ones();
    }

    #[inline(always)]
    fn done(self) -> Decoded {
        Decoded::new(self.symbol, self.count as u16)
    }
}

/// Decodes every cluster of state `v` into `out` (`C` entries).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, decode::{decode_state, Decoded}};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut out = [Decoded::default(); 3];
/// decode_state(&g, &[0b010, 0b100, 0b011], &mut out);
/// assert_eq!(out.map(|d| d.unique()), [Some(1), Some(2), None]);
/// ```
#[inline]
pub fn decode_state(geom: &Geometry, v: &[Word], out: &mut [Decoded]) {
    for (c, o) in out.iter_mut().enumerate().take(geom.clusters()) {
        *o = decode_cluster(geom, v, c);
    }
}

/// The decoded form of a cluster that holds only its known symbol's neuron (the initial state of
/// a known cluster, kept by rules that [keep known clusters](super::Rule::keeps_known)).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, decode::{decode_cluster, decode_known}, schedule::initial_word};
/// let g = Geometry::new(2, 100).unwrap();
/// let probe = [71u16, neurobits_core::gbnn::ERASED];
/// let v: Vec<u64> = (0..4).map(|i| initial_word(&g, &probe, Rule::Joint, i / 2, i % 2)).collect();
/// assert_eq!(decode_known(71), decode_cluster(&g, &v, 0));
/// ```
pub const fn decode_known(symbol: u16) -> Decoded {
    Decoded::new(symbol, 1)
}

/// Cluster `c` of a probe's final state as compact results give it: a known cluster of a rule
/// that [keeps known clusters](super::Rule::keeps_known) from its `symbol` (its words may not be
/// in `v`), any other through the occupancy `occ` when given (a sparse state: see
/// [`decode_cluster_occ`]), else from its words.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, ERASED, decode::*};
/// let g = Geometry::new(2, 100).unwrap();
/// let v = [0u64, 1 << 7, u64::MAX, 0b1010]; // cluster 1: junk in word 0, neurons 65 and 67
/// assert_eq!(decode_result(&g, Rule::Joint, 71, &v, 0, None), decode_known(71));
/// assert_eq!(decode_result(&g, Rule::SumOfMax, 71, &v, 0, None), decode_cluster(&g, &v, 0));
/// assert_eq!(decode_result(&g, Rule::Joint, ERASED, &v, 1, Some(&[0b10])), Decoded::new(65, 2));
/// ```
#[inline(always)]
pub fn decode_result(
    geom: &Geometry,
    rule: super::Rule,
    symbol: u16,
    v: &[Word],
    c: usize,
    occ: Option<&[u64]>,
) -> Decoded {
    if rule.keeps_known() && symbol != ERASED {
        decode_known(symbol)
    } else if let Some(occ) = occ {
        decode_cluster_occ(geom, v, c, occ)
    } else {
        decode_cluster(geom, v, c)
    }
}
