//! The sparse sum of [`lanes32_sparse`] over a row whose entries are *grouped by lane*: lane 0's
//! columns (ascending), then lane 1's, …, lane 31's. The lanes and the order within each lane
//! are those of the CSR row, so the result is the same bits; what changes is that the lane of
//! an entry no longer picks an accumulator at run time. One GPU thread per row then keeps all
//! 32 partial sums in registers (a run-time index puts them in local memory), where a warp per
//! row leaves most lanes idle on rows of a few dozen entries (the `--cutoff` coupling at 10⁶
//! points has ~34 per row).
//!
//! [`lanes32_sparse`]: super::lanes32_sparse

use super::dynamics::butterfly;
use super::Real;

/// Adds the entries of lane `$l` (a literal: a fixed accumulator) from position `$k` on.
macro_rules! lane_run {
    ($acc:ident, $k:ident, $len:ident, $col:ident, $term:ident; $($l:literal)*) => {
        $(
            while $k < $len && $col($k) % 32 == $l {
                $acc[$l] = $acc[$l] + $term($k);
                $k += 1;
            }
        )*
    };
}

/// [`super::lanes32_sparse`] over a row grouped by lane (`cols[k] mod 32` non-decreasing, the
/// columns of one lane ascending): `term(k)` belongs to `cols[k]`. Entries out of that order
/// are not summed (the caller's layout guarantees it; `debug_assert`ed).
///
/// ```
/// use neurobits_core::ocnn::{lanes32_grouped, lanes32_sparse};
/// let (cols, vals) = ([1u32, 33, 40, 65], [0.5f32, 0.25, 2.0, 1.0]);
/// // Lane 1: columns 1, 33, 65; lane 8: column 40.
/// let (g_cols, g_vals) = ([1u32, 33, 65, 40], [0.5f32, 0.25, 1.0, 2.0]);
/// assert_eq!(lanes32_grouped(&g_cols, |k| g_vals[k]), lanes32_sparse(&cols, |k| vals[k]));
/// ```
#[inline(always)]
pub fn lanes32_grouped<T: Real>(cols: &[u32], term: impl Fn(usize) -> T) -> T {
    lanes32_grouped_at(cols.len(), |k| cols[k], term)
}

/// [`lanes32_grouped`] over a row of `len` entries stored anywhere: `col(k)` is entry `k`'s
/// column (a SELL row's, see `kernels::sell_entry`).
#[inline(always)]
pub fn lanes32_grouped_at<T: Real>(len: usize, col: impl Fn(usize) -> u32, term: impl Fn(usize) -> T) -> T {
    let mut acc = [T::ZERO; 32];
    let mut k = 0;
    lane_run!(acc, k, len, col, term; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
    debug_assert_eq!(k, len, "a row not grouped by lane");
    butterfly(acc)
}

/// [`super::update_neuron_sparse`] over a row grouped by lane (see [`lanes32_grouped`]).
#[inline]
pub fn update_neuron_grouped<T: Real>(cols: &[u32], vals: &[T], norm: T, f: &[T]) -> T {
    update_neuron_grouped_at(cols.len(), |k| cols[k], |k| vals[k], norm, |j| f[j])
}

/// [`update_neuron_grouped`] over a row of `len` entries stored anywhere: entry `k` has column
/// `col(k)` and weight `val(k)`; `f(j)` is neuron `j`'s transfer value.
#[inline(always)]
pub fn update_neuron_grouped_at<T: Real>(
    len: usize,
    col: impl Fn(usize) -> u32,
    val: impl Fn(usize) -> T,
    norm: T,
    f: impl Fn(usize) -> T,
) -> T {
    lanes32_grouped_at(len, &col, |k| val(k) * f(col(k) as usize)) / norm
}

/// Whether `cols` is grouped by lane as [`lanes32_grouped`] needs.
pub fn grouped_by_lane(cols: &[u32]) -> bool {
    cols.windows(2).all(|w| (w[0] % 32, w[0]) < (w[1] % 32, w[1]))
}
