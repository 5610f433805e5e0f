//! Storing: a message adds the edges of its clique (Gripon & Berrou 2011).

use super::Geometry;
use crate::Word;

/// The one word of `W` that storing `msg` changes for the edge from its neuron in cluster `a`
/// to its neuron in cluster `b ≠ a`: `(index into W, bit to OR in)`. Drivers apply it with a
/// plain OR (CPU, firmware, FPGA model) or an atomic OR (GPU).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::clique_word};
/// let g = Geometry::new(3, 3).unwrap();
/// // Neuron (0, 1) is row 1; its edge to (2, 0) sets bit 0 of word 2.
/// assert_eq!(clique_word(&g, &[1, 2, 0], 0, 2), (1 * 3 + 2, 1));
/// ```
#[inline(always)]
pub fn clique_word(geom: &Geometry, msg: &[u16], a: usize, b: usize) -> (usize, Word) {
    let row = geom.neuron(a, msg[a] as usize);
    let (wi, bit) = geom.bit(b, msg[b] as usize);
    (row * geom.row_words() + wi, bit)
}

/// Stores one message (already checked with [`Geometry::check_symbols`]) into `w`.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[0, 0, 0]);
/// assert_eq!(w.iter().map(|x| x.count_ones()).sum::<u32>(), 6); // 3 edges, both directions
/// ```
#[inline]
pub fn store_message(geom: &Geometry, w: &mut [Word], msg: &[u16]) {
    let c = geom.clusters();
    for a in 0..c {
        for b in 0..c {
            if a != b {
                let (idx, bit) = clique_word(geom, msg, a, b);
                w[idx] |= bit;
            }
        }
    }
}
