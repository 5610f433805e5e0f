//! W split over several devices by clusters. `W` is symmetric, so the rows of a cluster's
//! neurons are also its columns: a shard owning clusters `c0..c1` keeps, for every one of the `n`
//! rows, the words of its own clusters' columns (`stride = (c1 − c0)·wpc` words per row). One
//! word then holds 64 of its neurons' links to one other neuron, which is what the joint rule
//! reads to update those 64 neurons ([`super::rules::joint_first_word_cols`],
//! [`super::rules::joint_iter_word_cols`]). The whole `W` is the shard `0..C`.

use super::Geometry;
use crate::Word;

/// The clusters `c0..c1` one device owns.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard};
/// let g = Geometry::new(5, 64).unwrap();
/// assert_eq!(Shard::of(&g, 0, 2), Shard { c0: 0, c1: 3 });
/// assert_eq!(Shard::of(&g, 1, 2), Shard { c0: 3, c1: 5 });
/// assert_eq!(Shard::all(&g).stride(&g), g.row_words());
/// assert_eq!(Shard::of(&g, 1, 2).words(&g), 5 * 64 * 2);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// First cluster owned.
    pub c0: u32,
    /// One past the last.
    pub c1: u32,
}

impl Shard {
    /// The whole network.
    pub const fn all(geom: &Geometry) -> Shard {
        Shard { c0: 0, c1: geom.clusters() as u32 }
    }

    /// Shard `rank` of `ranks`: clusters dealt in contiguous runs, the first `C mod ranks` runs
    /// one longer (`ranks ≤ C`).
    pub const fn of(geom: &Geometry, rank: usize, ranks: usize) -> Shard {
        let c = geom.clusters();
        let (base, extra) = (c / ranks, c % ranks);
        let c0 = rank * base + if rank < extra { rank } else { extra };
        let len = base + (rank < extra) as usize;
        Shard { c0: c0 as u32, c1: (c0 + len) as u32 }
    }

    /// Whether cluster `c` is owned.
    #[inline(always)]
    pub const fn owns(&self, c: usize) -> bool {
        c >= self.c0 as usize && c < self.c1 as usize
    }

    /// Words per row.
    #[inline(always)]
    pub const fn stride(&self, geom: &Geometry) -> usize {
        (self.c1 - self.c0) as usize * geom.words_per_cluster()
    }

    /// Words of the shard (`n` rows).
    pub const fn words(&self, geom: &Geometry) -> usize {
        geom.neurons() * self.stride(geom)
    }

    /// Index of word `wi` of (owned) cluster `c` in row `row`.
    #[inline(always)]
    pub const fn at(&self, geom: &Geometry, row: usize, c: usize, wi: usize) -> usize {
        row * self.stride(geom) + (c - self.c0 as usize) * geom.words_per_cluster() + wi
    }

    /// Mask of the owned clusters.
    #[inline(always)]
    pub const fn mask(&self) -> u64 {
        let hi = if self.c1 >= 64 { u64::MAX } else { (1u64 << self.c1) - 1 };
        hi & !((1u64 << self.c0) - 1)
    }

    /// Copies this shard's columns out of a whole `W` (`out`: [`Shard::words`] words).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message};
    /// let g = Geometry::new(3, 3).unwrap();
    /// let mut w = [0u64; 27];
    /// store_message(&g, &mut w, &[1, 2, 0]);
    /// let s = Shard { c0: 2, c1: 3 };
    /// let mut part = [0u64; 9];
    /// s.columns_of(&g, &w, &mut part);
    /// assert_eq!(part[1], 0b001); // neuron (0, 1) links to (2, 0)
    /// ```
    pub fn columns_of(&self, geom: &Geometry, w: &[Word], out: &mut [Word]) {
        let (rw, sw, off) = (geom.row_words(), self.stride(geom), self.c0 as usize * geom.words_per_cluster());
        for (row, o) in out.chunks_mut(sw).enumerate().take(geom.neurons()) {
            o.copy_from_slice(&w[row * rw + off..row * rw + off + sw]);
        }
    }
}
