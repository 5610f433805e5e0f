use super::active_clusters;
use crate::bits::set_bits;
use crate::gbnn::Geometry;
use crate::{Word, WORD_BITS};

/// Sum-of-sum score of neuron `l` of cluster `c` (Eq. 3): `γ·v_i + Σ_j v_j·w_ji`, with `γ` taken
/// through [`Geometry::effective_gamma`] (same dynamics, no overflow for any `u32` `γ`). `active`
/// is the mask of clusters of `v` that have any neuron on (others contribute nothing, so they are
/// skipped).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::score};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[0, 0, 0]);
/// let v = [1u64, 1, 0]; // (0,0) and (1,0) on
/// assert_eq!(score(&g, &w, &v, 0b011, 2, 0, 5), 2); // neuron (2,0) hears both
/// assert_eq!(score(&g, &w, &v, 0b011, 0, 0, 5), 6); // (0,0): γ + the signal of (1,0)
/// ```
#[inline(always)]
pub fn score(geom: &Geometry, w: &[Word], v: &[Word], active: u64, c: usize, l: usize, gamma: u32) -> u32 {
    let wpc = geom.words_per_cluster();
    let row = geom.row(w, geom.neuron(c, l));
    let (own_word, own_bit) = geom.bit(c, l);
    let mut s = if v[own_word] & own_bit != 0 { geom.effective_gamma(gamma) } else { 0 };
    for c2 in set_bits(active) {
        for k in c2 * wpc..(c2 + 1) * wpc {
            s += (row[k] & v[k]).count_ones();
        }
    }
    s
}

/// Eq. 4–5 for one cluster: given each neuron's score, turns on every neuron whose score equals
/// the cluster maximum (so all of them when every score is 0). One pass with a running maximum:
/// no score buffer is needed. Generic over the score type so the dense-float baseline selects with
/// the very same code.
///
/// ```
/// use neurobits_core::gbnn::rules::select_max;
/// let mut out = [0u64];
/// select_max(4, |l| [1.0f32, 3.0, 0.0, 3.0][l], &mut out);
/// assert_eq!(out[0], 0b1010);
/// ```
#[inline(always)]
pub fn select_max<T: PartialOrd + Copy + Default>(neurons: usize, mut score: impl FnMut(usize) -> T, out: &mut [Word]) {
    let mut best = T::default();
    for o in out.iter_mut() {
        *o = 0;
    }
    for l in 0..neurons {
        let s = score(l);
        let (wi, bit) = (l / WORD_BITS, 1 << (l % WORD_BITS));
        if s > best {
            best = s;
            for o in out.iter_mut() {
                *o = 0;
            }
            out[wi] = bit;
        } else if s == best {
            out[wi] |= bit;
        }
    }
}

/// Sum-of-sum (Eq. 3–5) for cluster `c`: writes its next state into `out` (`⌈L/64⌉` words):
/// [`score`] of every neuron, then [`select_max`].
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::sum_of_sum_cluster};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b010u64, 0, 0b001]; // cluster 1 erased
/// let mut out = [0u64];
/// sum_of_sum_cluster(&g, &w, &v, 1, 1, &mut out);
/// assert_eq!(out[0], 0b100);
/// ```
#[inline]
pub fn sum_of_sum_cluster(geom: &Geometry, w: &[Word], v: &[Word], c: usize, gamma: u32, out: &mut [Word]) {
    let active = active_clusters(geom, v);
    select_max(geom.neurons_per_cluster(), |l| score(geom, w, v, active, c, l, gamma), out);
}
