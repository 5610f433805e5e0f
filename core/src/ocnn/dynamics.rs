//! One iteration of the map: `x_i(t+1) = (1/C_i)·Σ_j J_ij·f(x_j(t))`, in the canonical order.

use super::{LaneColumn, Real};
use crate::prng::draw;

/// The transfer function `f(x) = 1 − (2·x)·x` (two roundings, no FMA).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::transfer(0.5f32), 0.5);
/// assert_eq!(neurobits_core::ocnn::transfer(-1.0f64), -1.0);
/// ```
#[inline(always)]
pub fn transfer<T: Real>(x: T) -> T {
    let two_x = T::TWO * x;
    let sq = two_x * x;
    T::ONE - sq
}

/// Neuron `i`'s initial state for `seed`: output `i` of SplitMix64(seed), its top 24 bits `k`,
/// `k·2⁻²³ − 1`: uniform on `[−1, 1)`, exact in `f32` and `f64`.
///
/// ```
/// let x = neurobits_core::ocnn::initial_state::<f32>(1, 0);
/// assert!((-1.0..1.0).contains(&x));
/// assert_eq!(x as f64, neurobits_core::ocnn::initial_state::<f64>(1, 0));
/// ```
#[inline(always)]
pub fn initial_state<T: Real>(seed: u64, i: u64) -> T {
    let k = draw(seed, i) >> 40;
    T::from_f64(k as f64 / (1u64 << 23) as f64 - 1.0)
}

/// Combines 32 lane sums by the xor-butterfly `d = 16, 8, 4, 2, 1`: at each step every lane
/// becomes `acc[l] + acc[l ^ d]`. IEEE addition is commutative, so all lanes end equal; the
/// result is lane 0's.
///
/// ```
/// let mut acc = [0f32; 32];
/// acc[3] = 1.5;
/// acc[31] = 2.0;
/// assert_eq!(neurobits_core::ocnn::butterfly(acc), 3.5);
/// ```
#[inline(always)]
pub fn butterfly<T: Real>(mut acc: [T; 32]) -> T {
    let mut d = 16;
    while d > 0 {
        let prev = acc;
        for (l, a) in acc.iter_mut().enumerate() {
            *a = combine(prev[l], prev[l ^ d]);
        }
        d /= 2;
    }
    acc[0]
}

/// Lane `lane`'s part of a lanes32 sum: `term(j)` for `j ≡ lane (mod 32)`, `j < n`, added in
/// ascending order from `+0.0`. A CPU runs the 32 lanes in turn ([`lanes32`]); a GPU warp runs
/// them at once, one per thread, then combines them with the same butterfly ([`combine`]).
///
/// ```
/// use neurobits_core::ocnn::lane_sum;
/// assert_eq!(lane_sum(70, 3, |j| j as f32), 3.0 + 35.0 + 67.0);
/// ```
#[inline(always)]
pub fn lane_sum<T: Real>(n: usize, lane: usize, term: impl Fn(usize) -> T) -> T {
    let mut acc = T::ZERO;
    let mut j = lane;
    while j < n {
        acc = acc + term(j);
        j += 32;
    }
    acc
}

/// One butterfly step of two lanes' partial sums: `mine + theirs` (lane `l` and lane `l ^ d`).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::combine(1.5f32, 2.0), 3.5);
/// ```
#[inline(always)]
pub fn combine<T: Real>(mine: T, theirs: T) -> T {
    mine + theirs
}

/// `Σ_j term(j)` over `j < n` in the lanes32 order: the 32 lanes' ascending sums (each lane's
/// [`lane_sum`]), combined by the xor-butterfly `d = 16, 8, 4, 2, 1`. The lanes advance together,
/// 32 consecutive terms at a time, so a CPU compiler vectorises the loop; each lane still adds
/// its own terms in ascending order, so the result is bit-identical to the lane-by-lane form
/// (tested).
///
/// ```
/// use neurobits_core::ocnn::lanes32;
/// let v: Vec<f32> = (0..100).map(|i| i as f32).collect();
/// assert_eq!(lanes32(100, |j| v[j]), 4950.0);
/// ```
#[inline(always)]
pub fn lanes32<T: Real>(n: usize, term: impl Fn(usize) -> T) -> T {
    let mut acc = [T::ZERO; 32];
    let full = n / 32 * 32;
    let mut base = 0;
    while base < full {
        for (l, a) in acc.iter_mut().enumerate() {
            *a = *a + term(base + l);
        }
        base += 32;
    }
    for (l, a) in acc.iter_mut().enumerate().take(n - full) {
        *a = *a + term(full + l);
    }
    butterfly(acc)
}

/// [`lanes32`] lane by lane: what a GPU warp computes, one lane per thread.
#[cfg(test)]
fn lanes32_by_lane<T: Real>(n: usize, term: impl Fn(usize) -> T) -> T {
    let mut acc = [T::ZERO; 32];
    for (l, a) in acc.iter_mut().enumerate() {
        *a = lane_sum(n, l, &term);
    }
    butterfly(acc)
}

/// `C_i = Σ_j J_ij` of a dense row, in the lanes32 order.
///
/// ```
/// assert_eq!(neurobits_core::ocnn::row_norm(&[0.0f32, 0.5, 0.25]), 0.75);
/// ```
#[inline]
pub fn row_norm<T: Real>(row: &[T]) -> T {
    lanes32(row.len(), |j| row[j])
}

/// The next state of neuron `i` from its dense weight row, its norm `C_i` and the current
/// transfer values `f_j = f(x_j)`: `(Σ_j J_ij·f_j) / C_i` (products rounded, then summed).
///
/// ```
/// use neurobits_core::ocnn::{row_norm, transfer, update_neuron};
/// let row = [0.0f32, 1.0, 1.0];
/// let f = [transfer(0.1f32), transfer(0.3), transfer(0.5)];
/// let x = update_neuron(&row, row_norm(&row), &f);
/// assert_eq!(x, (f[1] + f[2]) / 2.0);
/// ```
#[inline]
pub fn update_neuron<T: Real>(row: &[T], norm: T, f: &[T]) -> T {
    let s = lanes32(row.len(), |j| row[j] * f[j]);
    s / norm
}

/// [`lanes32`] over a sparse row: `term(k)` belongs to column `cols[k]` (ascending), and goes to
/// lane `cols[k] mod 32`. The same sum as [`lanes32`] over the dense row with zeros elsewhere:
/// a lane that starts at `+0.0` never holds `−0.0`, so adding a zero term changes nothing
/// (tested against the dense form).
///
/// ```
/// use neurobits_core::ocnn::{lanes32, lanes32_sparse};
/// let (cols, vals) = ([1u32, 33, 40], [0.5f32, 0.25, 2.0]);
/// let dense = |j: usize| cols.iter().position(|&c| c as usize == j).map_or(0.0, |k| vals[k]);
/// assert_eq!(lanes32_sparse(&cols, |k| vals[k]), lanes32(41, dense));
/// ```
#[inline(always)]
pub fn lanes32_sparse<T: Real>(cols: &[u32], term: impl Fn(usize) -> T) -> T {
    let mut acc = [T::ZERO; 32];
    for (k, &j) in cols.iter().enumerate() {
        let l = j as usize % 32;
        acc[l] = acc[l] + term(k);
    }
    butterfly(acc)
}

/// Lane `lane`'s part of a [`lanes32_sparse`] sum: the terms of the columns `≡ lane (mod 32)`,
/// in ascending order from `+0.0` — what one thread of a GPU warp adds before the butterfly.
///
/// ```
/// use neurobits_core::ocnn::{butterfly, lane_sum_sparse, lanes32_sparse};
/// let (cols, vals) = ([1u32, 33, 40, 65], [0.5f32, 0.25, 2.0, 1.0]);
/// let lanes: [f32; 32] = core::array::from_fn(|l| lane_sum_sparse(&cols, l, |k| vals[k]));
/// assert_eq!(butterfly(lanes), lanes32_sparse(&cols, |k| vals[k]));
/// ```
#[inline(always)]
pub fn lane_sum_sparse<T: Real>(cols: &[u32], lane: usize, term: impl Fn(usize) -> T) -> T {
    let mut acc = T::ZERO;
    for (k, &j) in cols.iter().enumerate() {
        if j as usize % 32 == lane {
            acc = acc + term(k);
        }
    }
    acc
}

/// [`update_neuron`] over a sparse row (`cols` ascending, `vals` their weights): bit-identical to
/// the dense update of the same row with zeros elsewhere.
///
/// ```
/// use neurobits_core::ocnn::{row_norm, transfer, update_neuron, update_neuron_sparse};
/// let row = [0.0f32, 0.75, 0.0, 0.5];
/// let f: Vec<f32> = [0.1f32, 0.3, 0.5, 0.7].iter().map(|&x| transfer(x)).collect();
/// let c = row_norm(&row);
/// assert_eq!(update_neuron_sparse(&[1, 3], &[0.75, 0.5], c, &f), update_neuron(&row, c, &f));
/// ```
#[inline]
pub fn update_neuron_sparse<T: Real>(cols: &[u32], vals: &[T], norm: T, f: &[T]) -> T {
    let s = lanes32_sparse(cols, |k| vals[k] * f[cols[k] as usize]);
    s / norm
}

/// [`update_neuron`] over a lane row: entry `k·32 + l` is lane `l`'s `k`-th nonzero weight
/// (columns `≡ l mod 32`, ascending) with its column ([`LaneColumn`]: the column or its quotient by
/// 32), zero weights pad every lane to the row's width. [`lanes32`] over the entries gives lane `l`
/// exactly its nonzero terms in ascending column order — the dense row's sum, since a zero term
/// changes no lane (a lane that starts at `+0.0` never holds `−0.0`).
///
/// ```
/// use neurobits_core::ocnn::{row_norm, transfer, update_neuron, update_neuron_lanes, Quot8};
/// let mut row = [0.0f32; 40];
/// (row[1], row[33], row[7]) = (0.75, 0.5, 0.25);
/// let f: Vec<f32> = (0..40).map(|j| transfer(j as f32 / 40.0)).collect();
/// let c = row_norm(&row);
/// // Lane 1: columns 1, 33; lane 7: column 7 then padding; width 2.
/// let (mut cols, mut vals) = ([0u32; 64], [0.0f32; 64]);
/// (cols[1], vals[1], cols[33], vals[33], cols[7], vals[7]) = (1, 0.75, 33, 0.5, 7, 0.25);
/// assert_eq!(update_neuron_lanes(&cols, &vals, c, &f), update_neuron(&row, c, &f));
/// // The same row with its columns stored as quotients by 32.
/// let q = cols.map(|c| Quot8((c / 32) as u8));
/// assert_eq!(update_neuron_lanes(&q, &vals, c, &f), update_neuron(&row, c, &f));
/// ```
///
/// Written as whole blocks of 32 entries with each column clamped to `f`'s last index: the clamp
/// proves every read in bounds, so the loop has no branch and a CPU compiler turns it into vector
/// gathers of 16 (a row's columns are all `< n`, so it moves none; padding has zero weight
/// wherever it reads); the adds are [`lanes32`]'s, a partial last block added as its tail.
#[inline(always)]
pub fn update_neuron_lanes<T: Real, C: LaneColumn>(cols: &[C], vals: &[T], norm: T, f: &[T]) -> T {
    // In u32, so that a gather takes 16 indices at a time.
    let last = f.len().checked_sub(1).expect("a transfer value per neuron").min(u32::MAX as usize) as u32;
    let term = |c: C, l: usize, v: T| v * f[c.column(l as u32).min(last) as usize];
    let mut acc = [T::ZERO; 32];
    let (cb, vb) = (cols.chunks_exact(32), vals.chunks_exact(32));
    let (ct, vt) = (cb.remainder(), vb.remainder());
    for (c, v) in cb.zip(vb) {
        for l in 0..32 {
            acc[l] = acc[l] + term(c[l], l, v[l]);
        }
    }
    for (l, (a, (&c, &v))) in acc.iter_mut().zip(ct.iter().zip(vt)).enumerate() {
        *a = *a + term(c, l, v);
    }
    butterfly(acc) / norm
}

/// Lane `lane`'s part of [`update_neuron_lanes`] over a lane row, from the states `x` instead
/// of the transfer values: each term is `vals[k]·f(x_j)` with [`transfer`] applied where the
/// term is made — the same value as a transfer pass before it, so the same bits, without that
/// pass (a GPU kernel launch per iteration). Columns are clamped to `last` (`n − 1`) as in
/// [`update_neuron_lanes`] (padding has zero weight wherever it reads).
///
/// ```
/// use neurobits_core::ocnn::{butterfly, lane_sum_of_states, transfer, update_neuron_lanes, Quot16};
/// let (mut cols, mut vals) = ([Quot16(0); 64], [0.0f32; 64]);
/// (cols[1], vals[1], cols[33], vals[33], cols[7], vals[7]) = (Quot16(0), 0.75, Quot16(1), 0.5, Quot16(0), 0.25);
/// let x: Vec<f32> = (0..40).map(|j| j as f32 / 40.0 - 0.5).collect();
/// let f: Vec<f32> = x.iter().map(|&v| transfer(v)).collect();
/// let mut acc = [0.0f32; 32];
/// for (l, a) in acc.iter_mut().enumerate() {
///     *a = lane_sum_of_states(&cols, &vals, l, 39, |j| x[j]);
/// }
/// assert_eq!(butterfly(acc) / 2.0, update_neuron_lanes(&cols, &vals, 2.0, &f));
/// ```
#[inline(always)]
pub fn lane_sum_of_states<T: Real, C: LaneColumn>(
    cols: &[C],
    vals: &[T],
    lane: usize,
    last: u32,
    x: impl Fn(usize) -> T,
) -> T {
    let term = |k: usize| vals[k] * transfer(x(cols[k].column(lane as u32).min(last) as usize));
    // Four of the lane's terms are made before they are added, in order (so `lane_sum`'s sum,
    // bit for bit): a GPU thread then has four independent gathers in flight instead of one
    // (the step waits on its loads, not on its bytes).
    let n = cols.len();
    let (mut acc, mut k) = (T::ZERO, lane);
    while k + 96 < n {
        let (t0, t1, t2, t3) = (term(k), term(k + 32), term(k + 64), term(k + 96));
        acc = acc + t0;
        acc = acc + t1;
        acc = acc + t2;
        acc = acc + t3;
        k += 128;
    }
    while k < n {
        acc = acc + term(k);
        k += 32;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_together_equal_lanes_one_by_one() {
        for n in [0usize, 1, 31, 32, 33, 100, 1000, 4097] {
            let t32 = |j: usize| (crate::prng::draw(5, j as u64) >> 40) as f32 * 1e-3 - 7000.0;
            let t64 = |j: usize| (crate::prng::draw(6, j as u64) >> 11) as f64 * 1e-9 - 3.0;
            assert_eq!(lanes32(n, t32).to_bits(), lanes32_by_lane(n, t32).to_bits(), "f32 n={n}");
            assert_eq!(lanes32(n, t64).to_bits(), lanes32_by_lane(n, t64).to_bits(), "f64 n={n}");
        }
    }

    #[test]
    fn lane_sums_of_states_four_at_a_time_equal_lane_sum() {
        use crate::ocnn::Quot16;
        for len in [0usize, 31, 32, 100, 128, 129, 160, 700, 1000] {
            let cols: [Quot16; 1024] = core::array::from_fn(|k| Quot16((crate::prng::draw(9, k as u64) % 40) as u16));
            let vals: [f32; 1024] = core::array::from_fn(|k| (crate::prng::draw(10, k as u64) >> 40) as f32 * 1e-7);
            let x = |j: usize| (crate::prng::draw(11, j as u64) >> 40) as f32 * 1e-7 - 0.8;
            let (cols, vals) = (&cols[..len], &vals[..len]);
            for lane in 0..32 {
                let last = 40 * 32 - 1;
                let plain =
                    lane_sum(len, lane, |k| vals[k] * transfer(x(cols[k].column(lane as u32).min(last) as usize)));
                let four = lane_sum_of_states(cols, vals, lane, last, x);
                assert_eq!(four.to_bits(), plain.to_bits(), "len={len} lane={lane}");
            }
        }
    }

    #[test]
    fn sparse_rows_sum_like_dense_rows_with_zeros() {
        for n in [1usize, 40, 1000] {
            // About one column in five kept, signed terms (so lanes cancel to zero at times).
            let c = alloc_free::Cols::new(n);
            let cols = c.as_slice();
            let t = |j: usize| ((crate::prng::draw(7, j as u64) >> 60) as f32 - 7.5) * 0.25;
            let dense = |j: usize| if cols.contains(&(j as u32)) { t(j) } else { 0.0 };
            let sparse = lanes32_sparse(cols, |k| t(cols[k] as usize));
            assert_eq!(sparse.to_bits(), lanes32(n, dense).to_bits(), "n={n}");
        }
    }

    /// A fixed-capacity column list (core tests run without alloc).
    mod alloc_free {
        pub struct Cols {
            v: [u32; 1000],
            len: usize,
        }
        impl Cols {
            pub fn new(n: usize) -> Self {
                let mut c = Cols { v: [0; 1000], len: 0 };
                for j in 0..n {
                    if crate::prng::draw(8, j as u64).is_multiple_of(5) {
                        c.v[c.len] = j as u32;
                        c.len += 1;
                    }
                }
                c
            }
            pub fn as_slice(&self) -> &[u32] {
                &self.v[..self.len]
            }
        }
    }
}
