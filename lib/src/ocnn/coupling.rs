//! The host's side of the coupling weight (the rule itself is the core's `coupling_weight`):
//! the core's `exp` with this CPU's fused multiply-add, and the dense coupling's lane rows built
//! on a GPU from the points with the same rule.

use anyhow::Result;
use neurobits_core::exp::{exp, Fma};
use neurobits_gpu_host::ocnn::{GpuReal, OcnnGpu};
use neurobits_gpu_host::Gpu;

use super::points::Points;
use super::weights::Uncoupled;

/// The weight of a pair at squared distance `d2` for scale `a`, in `f64`.
///
/// ```
/// assert_eq!(neurobits::ocnn::weights::weight(0.0, 1.0), 1.0);
/// assert!((neurobits::ocnn::weights::weight(2.0, 1.0) - (-1f64).exp()).abs() < 1e-15);
/// ```
pub fn weight(d2: f64, a: f64) -> f64 {
    host_exp(-(d2 / ((2.0 * a) * a)))
}

/// The host's fused multiply-add for the core's `exp`: `f64::mul_add`, one rounding (the FMA
/// instruction where the code is compiled for it, else a correctly rounded library call).
struct HostFma;

impl Fma for HostFma {
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// The core's `exp` on this CPU: with the FMA instruction where it has one (runtime dispatch;
/// the same bits either way, the library call is only slower).
#[inline]
pub(crate) fn host_exp(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has FMA (checked just above).
        return unsafe { exp_fma(x) };
    }
    exp::<HostFma>(x)
}

/// [`host_exp`] compiled for the FMA instruction.
///
/// # Safety
/// The CPU must have FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn exp_fma(x: f64) -> f64 {
    exp::<HostFma>(x)
}

/// The dense coupling of `p` with scale `a` as lane rows, built on `g` from the points (see
/// `Gpu::ocnn_lane_rows_from_points`): the host's [`super::weights::lane_rows`] entry for
/// entry, without its pass or its upload. Fails as it does on a point whose weights all vanish
/// ([`Uncoupled`]).
pub fn lane_rows_gpu<'g, T: GpuReal>(g: &'g Gpu, p: &Points, a: f64) -> Result<OcnnGpu<'g, T>> {
    let (dev, norm) = g.ocnn_lane_rows_from_points::<T>(&p.coords, p.dim, a, f64::INFINITY)?;
    Uncoupled::check(&norm)?;
    Ok(dev)
}
