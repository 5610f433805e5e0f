use crate::gbnn::Geometry;
use crate::{Word, WORD_BITS};

/// Sum-of-max (Eq. 6–7) for word `wi` of cluster `c`, evaluated literally: for *every* neuron
/// (on or off) the score `γ·v_i + Σ_{c'} max_j v_j·w_ji` counts the self loop and each other
/// cluster sending at least one signal, with no early exit; the neuron is on iff the score is
/// `γ + C − 1`. Any `γ > 0` gives the same dynamics (Theorem 1), so `γ = 1` is used.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::sum_of_max_word};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b111u64, 0b111, 0b001]; // clusters 0 and 1 erased, all on
/// assert_eq!(sum_of_max_word(&g, &w, &v, 0, 0), 0b010);
/// ```
#[inline]
pub fn sum_of_max_word(geom: &Geometry, w: &[Word], v: &[Word], c: usize, wi: usize) -> Word {
    let wpc = geom.words_per_cluster();
    let clusters = geom.clusters() as u32;
    let valid = geom.valid_bits(wi);
    let mut out = 0;
    for b in 0..WORD_BITS {
        if valid & (1 << b) == 0 {
            break;
        }
        let row = geom.row(w, geom.neuron(c, wi * WORD_BITS + b));
        let mut s = ((v[c * wpc + wi] >> b) & 1) as u32;
        for c2 in 0..geom.clusters() {
            if c2 == c {
                continue;
            }
            let mut any = 0;
            for k in c2 * wpc..(c2 + 1) * wpc {
                any |= row[k] & v[k];
            }
            s += (any != 0) as u32;
        }
        out |= ((s == clusters) as Word) << b;
    }
    out
}
