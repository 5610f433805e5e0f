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

    /// [`Shard::stride`] in 32-bit arithmetic (at most 64 · 1024 words), for index arithmetic
    /// that a GPU thread does in one wide multiply.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, shard::Shard};
    /// let g = Geometry::new(8, 100).unwrap();
    /// let s = Shard { c0: 2, c1: 5 };
    /// assert_eq!(s.stride32(&g) as usize, s.stride(&g));
    /// ```
    #[inline(always)]
    pub const fn stride32(&self, geom: &Geometry) -> u32 {
        (self.c1 - self.c0) * geom.words_per_cluster() as u32
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

/// Nonzero words a sparse exchange record carries inline.
pub const SPARSE_WORDS: usize = 2;
/// Words per sparse record: a header and [`SPARSE_WORDS`] words.
pub const RECORD_WORDS: usize = 1 + SPARSE_WORDS;

/// Encodes one cluster's words (`⌈L/64⌉ ≤ 1024` of them) for the exchange between shards: the
/// number of nonzero words in bits 0–15 of `rec[0]`, and, when at most [`SPARSE_WORDS`], their
/// indices in bits 16–31 and 32–47 with the words in `rec[1..]`. Returns whether they fit;
/// otherwise the caller sends the words densely and stores that copy's index with
/// [`sparse_overflow`]. After a joint update a cluster has one or two active words, so a record
/// is 3 words instead of `⌈L/64⌉`.
///
/// ```
/// use neurobits_core::gbnn::shard::{sparse_record, sparse_word, RECORD_WORDS};
/// let mut rec = [0u64; RECORD_WORDS];
/// let words = [0u64, 5, 0, 0, 9, 0];
/// assert!(sparse_record(&words, &mut rec));
/// assert_eq!((0..6).map(|wi| sparse_word(&rec, wi)).collect::<Vec<_>>(), words.map(Some));
/// assert!(!sparse_record(&[1, 2, 3], &mut rec));
/// assert_eq!(sparse_word(&rec, 0), None);
/// ```
#[inline]
pub fn sparse_record(words: &[Word], rec: &mut [Word; RECORD_WORDS]) -> bool {
    let mut n = 0usize;
    let mut header = 0u64;
    for (wi, &x) in words.iter().enumerate() {
        if x != 0 {
            if n < SPARSE_WORDS {
                header |= (wi as u64) << (16 + 16 * n);
                rec[1 + n] = x;
            }
            n += 1;
        }
    }
    rec[0] = header | n.min(0xFFFF) as u64;
    n <= SPARSE_WORDS
}

/// Marks an overflowing record as sent densely at slot `index` of the overflow block.
#[inline]
pub fn sparse_overflow(rec: &mut [Word; RECORD_WORDS], index: u32) {
    rec[0] = (rec[0] & 0xFFFF) | (index as u64) << 16;
}

/// Word `wi` of a record's cluster, `None` when it was sent densely (then
/// [`sparse_overflow_index`] says where).
#[inline]
pub fn sparse_word(rec: &[Word], wi: usize) -> Option<Word> {
    let n = (rec[0] & 0xFFFF) as usize;
    if n > SPARSE_WORDS {
        return None;
    }
    for j in 0..n {
        if (rec[0] >> (16 + 16 * j)) & 0xFFFF == wi as u64 {
            return Some(rec[1 + j]);
        }
    }
    Some(0)
}

/// The overflow slot of a record that [`sparse_word`] could not answer.
///
/// ```
/// use neurobits_core::gbnn::shard::{sparse_overflow, sparse_overflow_index, sparse_record, RECORD_WORDS};
/// let mut rec = [0u64; RECORD_WORDS];
/// assert!(!sparse_record(&[1, 2, 3], &mut rec));
/// sparse_overflow(&mut rec, 7);
/// assert_eq!(sparse_overflow_index(&rec), 7);
/// ```
#[inline]
pub fn sparse_overflow_index(rec: &[Word]) -> usize {
    ((rec[0] >> 16) & 0xFFFF_FFFF) as usize
}
