//! The coupling weight of a pair (spec §2.3): `J = exp(−d²/((2·a)·a))` in `f64`, rounded to the
//! working type, zero past the cutoff or where it underflows. Written once for the host's
//! builders and the GPU's, which differ only in the `exp` they pass: the core's
//! [`crate::exp::exp`] with the target's fused multiply-add, so the same bits.

use super::Real;

/// The squared Euclidean distance, summed over the coordinates in order (no fused
/// multiply-add: every target rounds each product and each sum).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::squared(&[0.0, 3.0], &[4.0, 0.0]), 25.0);
/// ```
#[inline(always)]
pub fn squared(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s
}

/// Past this `x = d²/((2·a)·a)`, `exp(−x)` is below half the working type's smallest subnormal
/// (2⁻¹⁵⁰ for f32: x > 150·ln 2 = 103.97; 2⁻¹⁰⁷⁵ for f64: x > 745.13), so the weight rounds to 0
/// and no `exp` is computed (margins of 0.5 and 0.9 cover `exp`'s error).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::zero_beyond::<f32>(), 104.5);
/// ```
#[inline(always)]
pub fn zero_beyond<T: Real>() -> f64 {
    if T::from_f64(1e-300) == T::ZERO {
        104.5
    } else {
        746.0
    }
}

/// The working-type weight of a pair at squared distance `d2` for scale `a`: zero beyond `r2`
/// (the cutoff's `(R·a)²`, or infinity) or past [`zero_beyond`], else `exp(−d2/((2·a)·a))`
/// rounded from `f64`. `exp` must be the core's (with the target's FMA).
///
/// ```
/// use neurobits_core::ocnn::coupling_weight;
/// let w = coupling_weight::<f32>(2.0, 1.0, f64::INFINITY, |x: f64| x.exp());
/// assert_eq!(w, (-1f64).exp() as f32);
/// assert_eq!(coupling_weight::<f32>(2.0, 1.0, 1.0, |x: f64| x.exp()), 0.0);
/// assert_eq!(coupling_weight::<f32>(210.0, 1.0, f64::INFINITY, |x: f64| x.exp()), 0.0);
/// ```
#[inline(always)]
pub fn coupling_weight<T: Real>(d2: f64, a: f64, r2: f64, exp: impl Fn(f64) -> f64) -> T {
    let x = d2 / ((2.0 * a) * a);
    if d2 <= r2 && x <= zero_beyond::<T>() {
        T::from_f64(exp(-x))
    } else {
        T::ZERO
    }
}
