//! The winner-take-all updates of the noisy and sparse modes ([`crate::gbnn::Mode`]).
//!
//! * Sum-of-max with a per-cluster winner-take-all (noisy probes): the sum-of-max score of Eq. 6
//!   (Yao, Gripon & Rabbat 2013) with `γ = 1`, `s_i = v_i + Σ_{c'≠c} max_{j∈c'} v_j·w_ji`, and in
//!   each cluster the neurons reaching the cluster maximum stay on (Eq. 4–5 applied to it). The
//!   threshold `s_i = γ + C − 1` of Eq. 7 assumes the known neurons are right and cannot turn on a
//!   neuron that is off, so a wrong symbol could never be corrected.
//! * Global winner-take-all (sparse messages, Aliabadi, Berrou, Gripon & Jiang 2014): the
//!   sum-of-sum score (Eq. 3) or the sum-of-max score above, and the neurons whose score equals the
//!   maximum over *all* neurons of the network stay on; silent clusters have no winner.
//!
//! With every score 0, every neuron reaches the maximum and is on (as [`super::select_max`]).

use super::{score, select_max};
use crate::gbnn::Geometry;
use crate::{Word, WORD_BITS};

/// Mask of the clusters of `v` with at least one active neuron.
#[inline(always)]
pub fn active_clusters(geom: &Geometry, v: &[Word]) -> u64 {
    let wpc = geom.words_per_cluster();
    let mut mask = 0u64;
    for c in 0..geom.clusters() {
        let any = v[c * wpc..(c + 1) * wpc].iter().fold(0, |a, &x| a | x);
        mask |= ((any != 0) as u64) << c;
    }
    mask
}

/// Sum-of-max score of neuron `l` of cluster `c` (Eq. 6 with `γ = 1`): its own activity plus the
/// number of other clusters with at least one active neuron connected to it.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::max_score};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b011u64, 0b100, 0b001];
/// assert_eq!(max_score(&g, &w, &v, 0, 1), 3); // on, and heard from both other clusters
/// assert_eq!(max_score(&g, &w, &v, 0, 0), 1); // on, heard from nobody
/// ```
#[inline(always)]
pub fn max_score(geom: &Geometry, w: &[Word], v: &[Word], c: usize, l: usize) -> u32 {
    let wpc = geom.words_per_cluster();
    let row = geom.row(w, geom.neuron(c, l));
    let (own_word, own_bit) = geom.bit(c, l);
    let mut s = (v[own_word] & own_bit != 0) as u32;
    for c2 in 0..geom.clusters() {
        if c2 != c {
            let any = (c2 * wpc..(c2 + 1) * wpc).fold(0, |a, k| a | (row[k] & v[k]));
            s += (any != 0) as u32;
        }
    }
    s
}

/// Noisy sum-of-max for cluster `c`: [`max_score`] of every neuron, then the cluster's
/// winner-take-all ([`select_max`]); writes `⌈L/64⌉` words into `out`.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::sum_of_max_wta_cluster};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b001u64, 0b100, 0b001]; // cluster 0 holds a wrong symbol
/// let mut out = [0u64];
/// sum_of_max_wta_cluster(&g, &w, &v, 0, &mut out);
/// assert_eq!(out[0], 0b010); // 2 signals beat the wrong neuron's own activity
/// ```
#[inline]
pub fn sum_of_max_wta_cluster(geom: &Geometry, w: &[Word], v: &[Word], c: usize, out: &mut [Word]) {
    select_max(geom.neurons_per_cluster(), |l| max_score(geom, w, v, c, l), out);
}

/// The score a global winner-take-all ranks neuron `l` of cluster `c` by: the sum-of-sum score
/// (Eq. 3, `γ` through [`Geometry::effective_gamma`], which keeps the global ranking too) when
/// `sum_of_max` is false, else [`max_score`]. `active`: [`active_clusters`] of `v`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn global_score(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    active: u64,
    sum_of_max: bool,
    gamma: u32,
    c: usize,
    l: usize,
) -> u32 {
    if sum_of_max {
        max_score(geom, w, v, c, l)
    } else {
        score(geom, w, v, active, c, l, gamma)
    }
}

/// The maximum [`global_score`] over word `wi` of cluster `c` (0 for no neuron): one term of the
/// global maximum, which a GPU reduces over the words of a probe.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn global_max_word(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    active: u64,
    sum_of_max: bool,
    gamma: u32,
    c: usize,
    wi: usize,
) -> u32 {
    let first = wi * WORD_BITS;
    let last = (first + WORD_BITS).min(geom.neurons_per_cluster());
    (first..last).map(|l| global_score(geom, w, v, active, sum_of_max, gamma, c, l)).max().unwrap_or(0)
}

/// The maximum [`global_score`] over every neuron of the network.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::{active_clusters, global_max}};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b010u64, 0b100, 0];
/// assert_eq!(global_max(&g, &w, &v, active_clusters(&g, &v), false, 1), 2);
/// ```
#[inline]
pub fn global_max(geom: &Geometry, w: &[Word], v: &[Word], active: u64, sum_of_max: bool, gamma: u32) -> u32 {
    let mut best = 0;
    for c in 0..geom.clusters() {
        for wi in 0..geom.words_per_cluster() {
            best = best.max(global_max_word(geom, w, v, active, sum_of_max, gamma, c, wi));
        }
    }
    best
}

/// Word `wi` of a cluster's next state under the global winner-take-all, from its `neurons`
/// neurons' scores: the neurons of that word whose score equals `max`, the global maximum. What
/// [`global_word`] computes from W, and what a circuit computes from its score registers.
///
/// ```
/// use neurobits_core::gbnn::rules::select_equal;
/// assert_eq!(select_equal(4, 0, |l| [1, 3, 0, 3][l], 3), 0b1010);
/// assert_eq!(select_equal(4, 0, |l| [1, 2, 0, 2][l], 3), 0); // the maximum is in another cluster
/// ```
#[inline(always)]
pub fn select_equal(neurons: usize, wi: usize, mut score: impl FnMut(usize) -> u32, max: u32) -> Word {
    let first = wi * WORD_BITS;
    let last = (first + WORD_BITS).min(neurons);
    let mut out = 0;
    for l in first..last {
        if score(l) == max {
            out |= 1 << (l - first);
        }
    }
    out
}

/// Word `wi` of cluster `c` of the next state under the global winner-take-all: the neurons whose
/// [`global_score`] equals `max` ([`global_max`] of the same `v`; [`select_equal`]).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::*};
/// let g = Geometry::new(4, 3).unwrap();
/// let mut w = vec![0u64; g.weight_words()];
/// store_message(&g, &mut w, &[1, 2, 0, neurobits_core::gbnn::SILENT]); // clusters 0–2 active
/// let v = [0b010u64, 0b100, 0, 0]; // cluster 2 erased, cluster 3 silent
/// let a = active_clusters(&g, &v);
/// let m = global_max(&g, &w, &v, a, false, 1);
/// let next: Vec<u64> = (0..4).map(|c| global_word(&g, &w, &v, a, false, 1, c, 0, m)).collect();
/// assert_eq!(next, [0b010, 0b100, 0b001, 0]);
/// ```
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn global_word(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    active: u64,
    sum_of_max: bool,
    gamma: u32,
    c: usize,
    wi: usize,
    max: u32,
) -> Word {
    select_equal(geom.neurons_per_cluster(), wi, |l| global_score(geom, w, v, active, sum_of_max, gamma, c, l), max)
}
