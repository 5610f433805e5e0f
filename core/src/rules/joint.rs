use super::{bail_out_early_word, init_word};
use crate::{Geometry, Word, ERASED};

/// The joint rule's first pass (Algorithm 2, lines 1–5) for word `wi` of cluster `c`. Erased
/// clusters start off, so a neuron's sum-of-sum score is the number of known neurons it is
/// connected to, and keeping "the neurons with `C − e` signals" keeps exactly the neurons
/// connected to *every* known neuron: the AND of the known neurons' rows. Known clusters keep
/// their symbol. (A probe with no known cluster keeps all neurons: all have `0 = C − e` signals.)
///
/// ```
/// use neurobits_core::{Geometry, ERASED, store::store_message, rules::joint_first_word};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// assert_eq!(joint_first_word(&g, &w, &[ERASED, 2, 0], 0, 0), 0b010);
/// ```
#[inline]
pub fn joint_first_word(geom: &Geometry, w: &[Word], symbols: &[u16], c: usize, wi: usize) -> Word {
    if symbols[c] != ERASED {
        return init_word(geom, symbols, c, wi, false);
    }
    let col = c * geom.words_per_cluster() + wi;
    let rw = geom.row_words();
    let mut acc = geom.valid_bits(wi);
    for (c2, &s) in symbols.iter().enumerate().take(geom.clusters()) {
        if s != ERASED {
            acc &= w[geom.neuron(c2, s as usize) * rw + col];
            if acc == 0 {
                break;
            }
        }
    }
    acc
}

/// A later joint iteration (Algorithm 2, lines 8–13) for word `wi` of cluster `c`: known
/// clusters are frozen; erased clusters run bail-out-early. Every candidate left by the first
/// pass is connected to all known neurons, and known clusters never change, so only the erased
/// clusters (`erased` mask) need checking.
///
/// ```
/// use neurobits_core::{Geometry, ERASED, store::store_message, rules::joint_iter_word};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b011u64, 0b100, 0b001]; // clusters 0, 1 erased; (0,0) has no support in cluster 1
/// assert_eq!(joint_iter_word(&g, &w, &v, &[ERASED, ERASED, 0], 0, 0), 0b010);
/// ```
#[inline]
pub fn joint_iter_word(geom: &Geometry, w: &[Word], v: &[Word], symbols: &[u16], c: usize, wi: usize) -> Word {
    if symbols[c] != ERASED {
        return v[c * geom.words_per_cluster() + wi];
    }
    bail_out_early_word(geom, w, v, c, wi, geom.erased_mask(symbols))
}
