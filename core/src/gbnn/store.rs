//! Storing: a message adds the edges of its clique (Gripon & Berrou 2011).

use super::shard::Shard;
use super::{Geometry, SILENT};
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
    clique_word_in(geom, &Shard::all(geom), msg, a, b)
}

/// [`clique_word`] in a [`Shard`] that owns cluster `b` (the edge lands in `b`'s columns).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::clique_word_in};
/// let g = Geometry::new(3, 3).unwrap();
/// // Shard {2..3} has 1 word per row; row 1, bit 0.
/// assert_eq!(clique_word_in(&g, &Shard { c0: 2, c1: 3 }, &[1, 2, 0], 0, 2), (1, 1));
/// ```
#[inline(always)]
pub fn clique_word_in(geom: &Geometry, shard: &Shard, msg: &[u16], a: usize, b: usize) -> (usize, Word) {
    let row = geom.neuron(a, msg[a] as usize);
    let l = msg[b] as usize;
    (shard.at(geom, row, b, l / 64), 1 << (l % 64))
}

/// Stores one message (already checked with [`super::mode::check_message`]) into `w`: the clique
/// of its active clusters; a [`SILENT`] cluster adds no edge (Aliabadi et al. 2014), so a message
/// of `c` active clusters adds `c(c−1)` directed edges.
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
            if a != b && msg[a] != SILENT && msg[b] != SILENT {
                let (idx, bit) = clique_word(geom, msg, a, b);
                w[idx] |= bit;
            }
        }
    }
}
