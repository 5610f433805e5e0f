//! Coupling weights (spec §2.3, §11.1): `J_ij = exp(−d²/((2·a)·a))` computed once on the host in
//! `f64` and rounded to the working type; `J_ii = 0`; the row norms `C_i` in the canonical order.
//! Every target receives these same bits.

use anyhow::{bail, Result};
use neurobits_core::ocnn::{row_norm, Real};
use rayon::prelude::*;

use super::points::Points;
use super::scale::squared;
use crate::io::memory::ensure_fits;

/// Dense weights (`n × n`, row-major) and row norms.
pub struct Dense<T> {
    /// Points.
    pub n: usize,
    /// `J`, row-major, `J_ii = 0`.
    pub j: Vec<T>,
    /// `C_i = Σ_j J_ij` (lanes32 order).
    pub norm: Vec<T>,
}

/// The weight of a pair at squared distance `d2` for scale `a`, in `f64`.
///
/// ```
/// assert_eq!(neurobits::ocnn::weights::weight(0.0, 1.0), 1.0);
/// assert!((neurobits::ocnn::weights::weight(2.0, 1.0) - (-1f64).exp()).abs() < 1e-15);
/// ```
pub fn weight(d2: f64, a: f64) -> f64 {
    (-(d2 / ((2.0 * a) * a))).exp()
}

/// The dense coupling of `p` with scale `a`. Fails on a row whose weights all vanish in the
/// working type (`C_i = 0`, spec OPEN-11): a point too far from every other for this `a`.
pub fn dense<T: Real + Send + Sync>(p: &Points, a: f64) -> Result<Dense<T>> {
    let n = p.n;
    let bytes = (n as u128 * n as u128).saturating_mul(core::mem::size_of::<T>() as u128);
    ensure_fits(&format!("the dense {n}x{n} coupling"), bytes)?;
    let mut j = vec![T::ZERO; n * n];
    j.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        for (k, w) in row.iter_mut().enumerate() {
            if k != i {
                *w = T::from_f64(weight(squared(p.point(i), p.point(k)), a));
            }
        }
    });
    let norm: Vec<T> = j.par_chunks(n).map(row_norm).collect();
    if let Some(i) = norm.iter().position(|&c| c == T::ZERO) {
        bail!("point {i} has no coupling left in this precision (C = 0): raise --scale or use --dtype f64");
    }
    Ok(Dense { n, j, norm })
}
