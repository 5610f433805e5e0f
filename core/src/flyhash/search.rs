//! Hamming top-r of one query, written once for the CPU driver and the GPU kernel: exact, nearest
//! first, ties to the lower database index.

use super::{kth_largest, select};

/// Calls `emit(i)` for the `r` database codes nearest to a query (`dist(i)`: distance of code `i`,
/// `i < n`, `r ≤ n`), in index order, choosing by (distance, index) through the radix select.
///
/// ```
/// use neurobits_core::flyhash::top_r;
/// let d = [5u32, 1, 3, 1, 0];
/// let mut out = vec![];
/// top_r(5, 3, |i| d[i], &mut [0; 256], |i| out.push(i));
/// assert_eq!(out, [1, 3, 4]); // distances 1, 1, 0
/// ```
#[inline]
pub fn top_r(n: usize, r: usize, dist: impl Fn(usize) -> u32, hist: &mut [u32; 256], emit: impl FnMut(usize)) {
    // Smaller distance = larger key: the radix select finds the r largest keys.
    let key = |i: usize| u32::MAX - dist(i);
    let (t, above) = kth_largest(n, r, key, hist);
    select(n, r, key, t, above, emit);
}

/// `(index, distance)` pairs sorted nearest first, ties by index: the order results are reported in.
///
/// ```
/// let mut v = [(4u32, 2u32), (1, 0), (0, 2)];
/// neurobits_core::flyhash::sort_hits(&mut v);
/// assert_eq!(v, [(1, 0), (0, 2), (4, 2)]);
/// ```
#[inline]
pub fn sort_hits(hits: &mut [(u32, u32)]) {
    hits.sort_unstable_by_key(|&(i, d)| (d, i));
}
