//! One iteration of the map: `x_i(t+1) = (1/C_i)·Σ_j J_ij·f(x_j(t))`, in the canonical order.

use super::Real;
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
#[inline(always)]
fn butterfly<T: Real>(mut acc: [T; 32]) -> T {
    let mut d = 16;
    while d > 0 {
        let prev = acc;
        for (l, a) in acc.iter_mut().enumerate() {
            *a = prev[l] + prev[l ^ d];
        }
        d /= 2;
    }
    acc[0]
}

/// `Σ_j term(j)` over `j < n` in the lanes32 order.
///
/// ```
/// use neurobits_core::ocnn::lanes32;
/// let v: Vec<f32> = (0..100).map(|i| i as f32).collect();
/// assert_eq!(lanes32(100, |j| v[j]), 4950.0);
/// ```
#[inline(always)]
pub fn lanes32<T: Real>(n: usize, term: impl Fn(usize) -> T) -> T {
    let mut acc = [T::ZERO; 32];
    let mut base = 0;
    while base < n {
        let end = if n - base < 32 { n - base } else { 32 };
        for (l, a) in acc.iter_mut().enumerate().take(end) {
            *a = *a + term(base + l);
        }
        base += 32;
    }
    butterfly(acc)
}

/// [`lanes32`] over a sparse row: `(column, term)` pairs in ascending column order; the missing
/// columns' terms are `0` (adding `±0` changes no IEEE sum, so this equals the dense sum).
///
/// ```
/// use neurobits_core::ocnn::{lanes32, lanes32_sparse};
/// let dense = [0.5f32, 0.0, 0.25, 0.0, 3.0];
/// let sparse = [(0u32, 0.5f32), (2, 0.25), (4, 3.0)];
/// assert_eq!(lanes32_sparse(sparse.iter().copied()), lanes32(5, |j| dense[j]));
/// ```
#[inline(always)]
pub fn lanes32_sparse<T: Real>(terms: impl Iterator<Item = (u32, T)>) -> T {
    let mut acc = [T::ZERO; 32];
    for (j, t) in terms {
        let l = (j % 32) as usize;
        acc[l] = acc[l] + t;
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

/// [`update_neuron`] over a sparse row (`cols` ascending, `vals` their weights).
///
/// ```
/// use neurobits_core::ocnn::{update_neuron, update_neuron_sparse};
/// let f = [0.5f32, -0.25, 0.75];
/// let dense = [0.0f32, 0.5, 1.0];
/// assert_eq!(update_neuron_sparse(&[1, 2], &[0.5, 1.0], 1.5, &f), update_neuron(&dense, 1.5, &f));
/// ```
#[inline]
pub fn update_neuron_sparse<T: Real>(cols: &[u32], vals: &[T], norm: T, f: &[T]) -> T {
    let s = lanes32_sparse(cols.iter().zip(vals).map(|(&j, &w)| (j, w * f[j as usize])));
    s / norm
}
