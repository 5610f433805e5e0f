//! The working type of the dynamics: `f32` (default) or `f64`, with only the IEEE operations the
//! model uses.

use core::ops::{Add, Div, Mul, Sub};

/// A floating-point working type. Only `+ − × ÷` and comparisons: results are IEEE-exact and the
/// same on every target that does not contract or flush (see the crate docs).
pub trait Real:
    Copy + PartialEq + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// `+0.0`.
    const ZERO: Self;
    /// `1.0`.
    const ONE: Self;
    /// `2.0`.
    const TWO: Self;
    /// The nearest value to an `f64` (round to nearest even).
    fn from_f64(x: f64) -> Self;
    /// Exactly, as `f64`.
    fn to_f64(self) -> f64;
    /// Absolute value (clears the sign bit).
    fn abs(self) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const TWO: Self = 2.0;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const TWO: Self = 2.0;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
}
