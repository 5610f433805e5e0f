use crate::bits::set_bits;
use crate::gbnn::Geometry;
use crate::{Word, WORD_BITS};

/// Whether `row` (the neighbours of a neuron of cluster `own`) reaches an active neuron of `v` in
/// every cluster of `check` other than `own`, checked cluster by cluster and word by word with an
/// early exit at the first cluster that sends no signal (paper Section IV-D).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::supported};
/// let g = Geometry::new(3, 3).unwrap();
/// let row = [0u64, 0b001, 0b100];
/// assert!(supported(&g, &row, &[0b1, 0b011, 0b110], 0, 0b111));
/// assert!(!supported(&g, &row, &[0b1, 0b010, 0b110], 0, 0b111));
/// ```
#[inline(always)]
pub fn supported(geom: &Geometry, row: &[Word], v: &[Word], own: usize, check: u64) -> bool {
    let wpc = geom.words_per_cluster();
    for c2 in set_bits(check & !(1u64 << own)) {
        let mut k = c2 * wpc;
        loop {
            if k == (c2 + 1) * wpc {
                return false;
            }
            // The state is small and hot; W is large and cold: read W only where v has a bit.
            let x = v[k];
            if x != 0 && row[k] & x != 0 {
                break;
            }
            k += 1;
        }
    }
    true
}

/// Occupancy of cluster `c` of `v`: bit `k` set iff word `k` of the cluster is nonzero. Needs
/// `⌈L/64⌉ ≤ 64` (`L ≤ 4096`). With it, [`supported_occ`] reads only the words that matter.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::occupancy};
/// let g = Geometry::new(2, 200).unwrap(); // 4 words per cluster
/// assert_eq!(occupancy(&g, &[0, 0, 0, 0, 0, 5, 0, 1], 1), 0b1010);
/// ```
#[inline(always)]
pub fn occupancy(geom: &Geometry, v: &[Word], c: usize) -> u64 {
    occupancy_part(geom, v, c, 0)
}

/// Occupancy words per cluster: `⌈⌈L/64⌉/64⌉` (1 for `L ≤ 4096`).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::occupancy_words};
/// assert_eq!(occupancy_words(&Geometry::new(2, 4096).unwrap()), 1);
/// assert_eq!(occupancy_words(&Geometry::new(2, 16384).unwrap()), 4);
/// ```
#[inline(always)]
pub const fn occupancy_words(geom: &Geometry) -> usize {
    geom.words_per_cluster().div_ceil(64)
}

/// Part `part` of the occupancy of cluster `c` (words `64·part ..` of the cluster), for any
/// `L`: a cluster's occupancy is [`occupancy_words`] of these.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::occupancy_part};
/// let g = Geometry::new(1, 64 * 70).unwrap(); // 70 words: two parts
/// let mut v = vec![0u64; 70];
/// v[3] = 1;
/// v[66] = 8;
/// assert_eq!((occupancy_part(&g, &v, 0, 0), occupancy_part(&g, &v, 0, 1)), (1 << 3, 1 << 2));
/// ```
#[inline(always)]
pub fn occupancy_part(geom: &Geometry, v: &[Word], c: usize, part: usize) -> u64 {
    let wpc = geom.words_per_cluster();
    let (lo, hi) = (part * 64, wpc.min(part * 64 + 64));
    let mut occ = 0u64;
    for k in lo..hi {
        occ |= ((v[c * wpc + k] != 0) as u64) << (k - lo);
    }
    occ
}

/// [`supported`], reading only the words of `v` (and of `row`) that `occ` marks as nonzero
/// (`occ[c]` = [`occupancy`] of cluster `c`). Same predicate, tested equal; on a GPU it turns a
/// scan of every word of every cluster into one or two loads per cluster.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::{occupancy, supported, supported_occ}};
/// let g = Geometry::new(3, 3).unwrap();
/// let (row, v) = ([0u64, 0b001, 0b100], [0b1u64, 0b011, 0b110]);
/// let occ: Vec<u64> = (0..3).map(|c| occupancy(&g, &v, c)).collect();
/// assert_eq!(supported_occ(&g, &row, &v, 0, 0b111, &occ), supported(&g, &row, &v, 0, 0b111));
/// ```
#[inline(always)]
pub fn supported_occ(geom: &Geometry, row: &[Word], v: &[Word], own: usize, check: u64, occ: &[u64]) -> bool {
    let wpc = geom.words_per_cluster();
    for c2 in set_bits(check & !(1u64 << own)) {
        if !set_bits(occ[c2]).any(|k| row[c2 * wpc + k] & v[c2 * wpc + k] != 0) {
            return false;
        }
    }
    true
}

/// [`bail_out_early_word`] through [`supported_occ`].
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::*};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b111u64, 0b111, 0b001];
/// let occ: Vec<u64> = (0..3).map(|c| occupancy(&g, &v, c)).collect();
/// assert_eq!(bail_out_early_word_occ(&g, &w, &v, 0, 0, 0b111, &occ), bail_out_early_word(&g, &w, &v, 0, 0, 0b111));
/// ```
#[inline]
pub fn bail_out_early_word_occ(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    c: usize,
    wi: usize,
    check: u64,
    occ: &[u64],
) -> Word {
    keep_supported(geom, w, v, c, wi, |row| supported_occ(geom, row, v, c, check, occ))
}

/// The active neurons of word `wi` of cluster `c` whose row passes `keep`; off neurons are never
/// looked at (Lemma 1).
#[inline(always)]
fn keep_supported(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    c: usize,
    wi: usize,
    keep: impl Fn(&[Word]) -> bool,
) -> Word {
    let mut out = 0;
    for b in set_bits(v[c * geom.words_per_cluster() + wi]) {
        if keep(geom.row(w, geom.neuron(c, wi * WORD_BITS + b))) {
            out |= 1 << b;
        }
    }
    out
}

/// Bail-out-early for word `wi` of cluster `c`: off neurons stay off (Lemma 1) without being
/// looked at; an on neuron stays on iff it is [`supported`] by every cluster of `check`. With
/// `check` = all clusters this is the sum-of-max update (Theorem 1).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::{bail_out_early_word, sum_of_max_word}};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b111u64, 0b111, 0b001];
/// assert_eq!(bail_out_early_word(&g, &w, &v, 0, 0, 0b111), sum_of_max_word(&g, &w, &v, 0, 0));
/// ```
#[inline]
pub fn bail_out_early_word(geom: &Geometry, w: &[Word], v: &[Word], c: usize, wi: usize, check: u64) -> Word {
    keep_supported(geom, w, v, c, wi, |row| supported(geom, row, v, c, check))
}
