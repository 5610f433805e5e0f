//! The joint rule on a shard of W's columns (several GPUs): the first pass and the iterations
//! read only the columns the shard holds.

use super::occupancy_words;
use crate::bits::set_bits;
use crate::gbnn::shard::Shard;
use crate::gbnn::Geometry;
use crate::{Word, WORD_BITS};
/// [`joint_first_word_rows`](super::joint_first_word_rows) on a [`Shard`] of `W` that owns cluster `c`: the known rows'
/// words in `c`'s columns are all in the shard.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message, rules::*};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// let s = Shard { c0: 0, c1: 1 };
/// let mut part = [0u64; 9];
/// s.columns_of(&g, &w, &mut part);
/// assert_eq!(joint_first_word_cols(&g, &part, &s, &[5, 6], 0, 0), joint_first_word_rows(&g, &w, &[5, 6], 0, 0));
/// ```
#[inline]
pub fn joint_first_word_cols(geom: &Geometry, w: &[Word], shard: &Shard, rows: &[u32], c: usize, wi: usize) -> Word {
    joint_first_words_cols::<1, 4>(geom, w, shard, rows, [(c, wi)])[0]
}

/// [`joint_first_word_cols`] for `N` words at once (cluster and word index each), sharing the
/// reads of the known rows, `R` rows at a time: a GPU lane with several words of a probe issues
/// all their loads of a group of rows together instead of waiting on one word's loads before the
/// next word's.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message, rules::*};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// let s = Shard::all(&g);
/// let both = joint_first_words_cols::<2, 4>(&g, &w, &s, &[5], [(0, 0), (2, 0)]);
/// assert_eq!(both, [0, 1].map(|c| joint_first_word_cols(&g, &w, &s, &[5], [0, 2][c], 0)));
/// ```
#[inline]
pub fn joint_first_words_cols<const N: usize, const R: usize>(
    geom: &Geometry,
    w: &[Word],
    shard: &Shard,
    rows: &[u32],
    words: [(usize, usize); N],
) -> [Word; N] {
    let (cols, rw) = (words.map(|(c, wi)| shard.at(geom, 0, c, wi)), shard.stride(geom));
    let n = geom.neurons();
    // Every row below `n` then has its word in W: `row·rw + col < n·rw ≤ w.len()`.
    assert!(cols.iter().all(|&col| col < rw) && n * rw <= w.len(), "column past W");
    let acc = words.map(|(_, wi)| geom.valid_bits(wi));
    let words = Words { w, rw: shard.stride32(geom), cols };
    // SAFETY: `Words` reads row `r < n` at columns below `rw` (both checked above).
    unsafe { and_rows::<N, R, _>(rows, n as u32, acc, &words) }
}

/// [`joint_first_words_cols`] for the two adjacent words `wi` and `wi + 1` (`wi + 1 < ⌈L/64⌉`) of
/// erased cluster `c`, read as one 16-byte load per known row when W's start, its row stride and
/// the pair's column are 16-byte aligned (two loads otherwise): a GPU lane with two words of a
/// probe issues half the loads and address computations.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message, rules::*};
/// let g = Geometry::new(3, 128).unwrap();
/// let mut w = vec![0u64; g.weight_words()];
/// store_message(&g, &mut w, &[1, 70, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// let s = Shard::all(&g);
/// let rows = [128 + 70, 256];
/// let want = joint_first_words_cols::<2, 4>(&g, &w, &s, &rows, [(0, 0), (0, 1)]);
/// assert_eq!(joint_first_pair_cols::<4>(&g, &w, &s, &rows, (0, 0)), want);
/// assert_eq!(want, [0b10, 0]);
/// ```
#[inline]
pub fn joint_first_pair_cols<const R: usize>(
    geom: &Geometry,
    w: &[Word],
    shard: &Shard,
    rows: &[u32],
    (c, wi): (usize, usize),
) -> [Word; 2] {
    assert!(wi + 1 < geom.words_per_cluster(), "a pair past the cluster");
    let (col, rw) = (shard.at(geom, 0, c, wi), shard.stride(geom));
    // Masks, not `is_multiple_of`: this form is the GPU code that was measured and tested on the
    // device; the other compiled to a different schedule.
    if (w.as_ptr() as usize | rw | col) & 1 != 0 || (w.as_ptr() as usize) & 15 != 0 {
        return joint_first_words_cols::<2, R>(geom, w, shard, rows, [(c, wi), (c, wi + 1)]);
    }
    let n = geom.neurons();
    // Every row below `n` then has its pair in W: `row·rw + col + 1 < n·rw ≤ w.len()`.
    assert!(col + 1 < rw && n * rw <= w.len(), "column past W");
    let acc = [geom.valid_bits(wi), geom.valid_bits(wi + 1)];
    let pairs = Pairs { w: w.as_ptr().cast(), rw: shard.stride32(geom) / 2, col: (col / 2) as u32 };
    // SAFETY: `Pairs` reads row `r < n`'s 16-byte aligned pair at `col` (checked above).
    unsafe { and_rows::<2, R, _>(rows, n as u32, acc, &pairs) }
}

/// How [`and_rows`] reads `N` words of a known row.
trait RowWords<const N: usize> {
    /// The AND over the rows `r` of their `N` words.
    ///
    /// # Safety
    /// Each row is below the network's neuron count.
    unsafe fn and<const R: usize>(&self, r: [u32; R]) -> [Word; N];
}

/// `N` words of a row at any columns.
struct Words<'a, const N: usize> {
    w: &'a [Word],
    rw: u32,
    cols: [usize; N],
}

impl<const N: usize> RowWords<N> for Words<'_, N> {
    #[inline(always)]
    unsafe fn and<const R: usize>(&self, r: [u32; R]) -> [Word; N] {
        // SAFETY: as the caller promises, with the columns checked by the constructor's caller.
        self.cols.map(|col| unsafe { word_at(self.w, r, self.rw, col) })
    }
}

/// Two adjacent words at a 16-byte aligned column: one vector load.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Pair([Word; 2]);

/// The pairs of a row at one column (`rw` and `col` in pairs).
struct Pairs {
    w: *const Pair,
    rw: u32,
    col: u32,
}

impl RowWords<2> for Pairs {
    #[inline(always)]
    unsafe fn and<const R: usize>(&self, r: [u32; R]) -> [Word; 2] {
        // 32-bit factors in one wide multiply (see `word_at`).
        let at = r.map(|x| (x as u64 * self.rw as u64) as usize + self.col as usize);
        // SAFETY: as the caller promises: each pair lies in W and is 16-byte aligned.
        at.iter().fold([Word::MAX; 2], |a, &i| {
            let p = unsafe { *self.w.add(i) };
            [a[0] & p.0[0], a[1] & p.0[1]]
        })
    }
}

/// The joint first pass's loop: `acc` ANDed with the words `f` reads of the known `rows`, `R`
/// rows at a time, stopping once every word is zero.
///
/// # Safety
/// `f.and` is safe for rows below `n`.
#[inline(always)]
unsafe fn and_rows<const N: usize, const R: usize, F: RowWords<N>>(
    rows: &[u32],
    n: u32,
    mut acc: [Word; N],
    f: &F,
) -> [Word; N] {
    // Groups of `R` independent loads per word, then one early-exit test: memory-level
    // parallelism for a GPU thread, still an early exit for a CPU. One bounds check for the
    // group's rows, after its row numbers: with a check per word, the compiler loaded each row
    // number only after the check before it, so a GPU thread waited on the loads in turn.
    // Counters and row numbers in 32-bit arithmetic (at most 64 rows): a GPU thread spent a
    // third of this loop on 64-bit index arithmetic.
    let len = rows.len() as u32;
    let mut i = 0;
    while i + R as u32 <= len && acc.iter().any(|&x| x != 0) {
        // SAFETY: `i + R - 1 < len` keeps every index below `rows.len()`.
        let r: [u32; R] = core::array::from_fn(|j| unsafe { *rows.get_unchecked((i + j as u32) as usize) });
        assert!(r.iter().fold(0, |m, &x| m.max(x)) < n, "row past W");
        // SAFETY: each row is below `n` (checked above).
        let x = unsafe { f.and(r) };
        acc = core::array::from_fn(|k| acc[k] & x[k]);
        i += R as u32;
    }
    // The last `len mod R` rows one at a time: a group padded with repeats of the last row cost
    // a GPU thread as many instructions as a whole group.
    while i < len && acc.iter().any(|&x| x != 0) {
        let r = rows[i as usize];
        assert!(r < n, "row past W");
        // SAFETY: as above, for one row.
        let x = unsafe { f.and([r]) };
        acc = core::array::from_fn(|k| acc[k] & x[k]);
        i += 1;
    }
    acc
}

/// The AND of the words of `W` at column `col` of the rows `r` (rows of `rw` words).
///
/// # Safety
/// `r[j]·rw + col < w.len()` for each `j`.
#[inline(always)]
unsafe fn word_at<const R: usize>(w: &[Word], r: [u32; R], rw: u32, col: usize) -> Word {
    // A stride is at most 64 · 1024 words and a row below 2^22: 32-bit factors, so a GPU
    // thread multiplies them in one wide multiply instead of a 64-bit sequence.
    let at = r.map(|x| (x as u64 * rw as u64) as usize + col);
    // SAFETY: as the caller promises.
    at.iter().fold(Word::MAX, |a, &i| a & unsafe { *w.get_unchecked(i) })
}

/// A later joint iteration for word `wi` of erased cluster `c`, computed from `c`'s columns of
/// `W` (a [`Shard`] owning `c`): the support that erased cluster `c2` sends to the 64 neurons of
/// the word is the OR of the rows of `c2`'s active neurons (their words in `c`'s columns), and a
/// neuron stays on iff every other erased cluster supports it. W is symmetric, so this is
/// [`joint_iter_word_occ`](super::joint_iter_word_occ)'s predicate (each active neuron's row checked against the active
/// neurons), read from the other side; tested equal. `occ`: [`occupancy_words`] parts per
/// cluster ([`occupancy_part`](super::occupancy_part)), so any `L` works.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message, rules::*};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b011u64, 0b110, 0b001];
/// let occ: Vec<u64> = (0..3).map(|c| occupancy(&g, &v, c)).collect();
/// let s = Shard::all(&g);
/// assert_eq!(joint_iter_word_cols(&g, &w, &s, &v, 0b011, 0, 0, &occ), 0b010);
/// assert_eq!(joint_iter_word_cols(&g, &w, &s, &v, 0b011, 0, 0, &occ), joint_iter_word(&g, &w, &v, 0b011, 0, 0));
/// ```
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn joint_iter_word_cols(
    geom: &Geometry,
    w: &[Word],
    shard: &Shard,
    v: &[Word],
    erased: u64,
    c: usize,
    wi: usize,
    occ: &[u64],
) -> Word {
    let acc = v[c * geom.words_per_cluster() + wi];
    if erased & (1 << c) == 0 || acc == 0 {
        return acc;
    }
    acc & joint_support_cols(geom, w, shard, v, erased & !(1u64 << c), c, wi, occ)
}

/// The support that the clusters of `from` send together to the 64 neurons of word `wi` of
/// cluster `c` (a [`Shard`] owning `c`): for each cluster `c2` of `from`, the OR of the rows of
/// its active neurons in `v` (their words in `c`'s columns), and the AND of those over `from`
/// (all ones when `from` is empty). [`joint_iter_word_cols`] is the word ANDed with the support
/// of the other erased clusters. `occ`: [`occupancy_words`] parts per cluster.
///
/// Clusters go four at a time: when each of the four has one occupied word holding one neuron
/// (after the first pass, nearly always), their occupancies, words and rows are read in three
/// rounds of four independent loads; a GPU thread walking them one by one waited on three
/// dependent loads per cluster. Any other group takes the general walk, cluster by cluster.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, shard::Shard, store::store_message, rules::*};
/// let g = Geometry::new(4, 3).unwrap();
/// let mut w = vec![0u64; 12 * 4];
/// store_message(&g, &mut w, &[1, 2, 0, 1]);
/// store_message(&g, &mut w, &[0, 2, 1, 2]);
/// let v = [0b011u64, 0b100, 0b011, 0b110];
/// let occ: Vec<u64> = (0..4).map(|c| occupancy(&g, &v, c)).collect();
/// let s = Shard::all(&g);
/// let (a, b) = (joint_support_cols(&g, &w, &s, &v, 0b0100, 0, 0, &occ), joint_support_cols(&g, &w, &s, &v, 0b1000, 0, 0, &occ));
/// assert_eq!(a & b, joint_support_cols(&g, &w, &s, &v, 0b1100, 0, 0, &occ));
/// assert_eq!(v[0] & a & b, joint_iter_word_cols(&g, &w, &s, &v, 0b1101, 0, 0, &occ));
/// ```
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn joint_support_cols(
    geom: &Geometry,
    w: &[Word],
    shard: &Shard,
    v: &[Word],
    from: u64,
    c: usize,
    wi: usize,
    occ: &[u64],
) -> Word {
    let wpc = geom.words_per_cluster();
    let col = shard.at(geom, 0, c, wi);
    let (stride, ow, n) = (shard.stride(geom), occupancy_words(geom), geom.neurons());
    // Every neuron below `n` then has its word in W (see `joint_first_word_cols`).
    assert!(col < stride && n * stride <= w.len(), "column past W");
    let mut acc = Word::MAX;
    let mut rest = from;
    while rest != 0 && acc != 0 {
        // The next four clusters (fewer at the end: the last repeats, and an AND is idempotent),
        // in straight-line code: a loop filling an array left it in a GPU thread's local memory.
        let (c0, r1) = (rest.trailing_zeros(), rest & (rest - 1));
        let c1 = if r1 != 0 { r1.trailing_zeros() } else { c0 };
        let r2 = r1 & r1.wrapping_sub(1);
        let c2 = if r2 != 0 { r2.trailing_zeros() } else { c1 };
        let r3 = r2 & r2.wrapping_sub(1);
        let c3 = if r3 != 0 { r3.trailing_zeros() } else { c2 };
        let r4 = r3 & r3.wrapping_sub(1);
        let (group, cs) = (rest & !r4, [c0, c1, c2, c3].map(|x| x as usize));
        rest = r4;
        let o: [u64; 4] = core::array::from_fn(|j| if ow == 1 { occ[cs[j]] } else { 0 });
        let k: [usize; 4] = core::array::from_fn(|j| (o[j].trailing_zeros() as usize).min(wpc - 1));
        let x: [Word; 4] = core::array::from_fn(|j| v[cs[j] * wpc + k[j]]);
        if (0..4).all(|j| o[j].count_ones() == 1 && x[j].count_ones() == 1) {
            // The neuron indices in 32-bit arithmetic (below 2^22 for any valid cluster and bit).
            let l = geom.neurons_per_cluster() as u32;
            let r: [u32; 4] =
                core::array::from_fn(|j| cs[j] as u32 * l + k[j] as u32 * WORD_BITS as u32 + x[j].trailing_zeros());
            assert!(r[0].max(r[1]).max(r[2]).max(r[3]) < n as u32, "row past W");
            // SAFETY: each row is below `n` (checked above), so each index is below `w.len()`.
            acc &= unsafe { word_at(w, r, shard.stride32(geom), col) };
        } else {
            // The group's own clusters only: its repeats would walk the last one again.
            for c2 in set_bits(group) {
                acc &= cluster_support(geom, w, (stride, col), v, c2, occ);
            }
        }
    }
    acc
}

/// Cluster `c2`'s support at column `col` of a `W` with rows of `stride` words: the OR of the rows
/// of its active neurons in `v`, walking its occupied words. Kept out of line: the rare path of
/// [`joint_support_cols`], whose common path a GPU thread should hold in few registers.
#[inline(never)]
fn cluster_support(
    geom: &Geometry,
    w: &[Word],
    (stride, col): (usize, usize),
    v: &[Word],
    c2: usize,
    occ: &[u64],
) -> Word {
    let (wpc, ow) = (geom.words_per_cluster(), occupancy_words(geom));
    let mut s = 0;
    for part in 0..ow {
        for k in set_bits(occ[c2 * ow + part]) {
            let k = part * 64 + k;
            for b in set_bits(v[c2 * wpc + k]) {
                s |= w[geom.neuron(c2, k * WORD_BITS + b) * stride + col];
            }
        }
    }
    s
}
