//! Building the dense coupling's lane rows from the points, a warp per row (see
//! `neurobits_core::ocnn::kernels::LanePointsWidthF32`): lane `l` walks the columns `l, l + 32,
//! …` in ascending order, each pair's weight by the core's `coupling_weight` with the core's
//! `exp` on `fma.rn.f64` — the host's bits — so no `n × n` weights and no host pass.

use core::cell::Cell;
use core::slice::from_raw_parts;
use neurobits_core::exp::{exp, Fma};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::ocnn::kernels::{LanePointsFillF32, LanePointsFillF64, LanePointsWidthF32, LanePointsWidthF64};
use neurobits_core::ocnn::{coupling_weight, lane_sum, squared, Real};

use super::rows::fill_lane;
use super::warp_butterfly;
use crate::{gid, kernel, split, warp_reduce, xor_lane};

extern "C" {
    #[link_name = "llvm.fma.f64"]
    fn llvm_fma(a: f64, b: f64, c: f64) -> f64;
}

/// The GPU's fused multiply-add, `fma.rn.f64`: one rounding, as the core's `exp` needs.
struct DeviceFma;

impl Fma for DeviceFma {
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        // SAFETY: a pure arithmetic intrinsic.
        unsafe { llvm_fma(a, b, c) }
    }
}

/// The weight of the pair `(i, col)` (zero on the diagonal: `J_ii = 0`).
///
/// # Safety
/// `coords` holds `dim` coordinates of point `col`.
#[inline(always)]
unsafe fn weight<T: Real>(
    coords: DevPtr<f64>,
    dim: usize,
    (i, pi): (usize, &[f64]),
    col: usize,
    scale: f64,
    r2: f64,
) -> T {
    if col == i {
        return T::ZERO;
    }
    let pc = unsafe { from_raw_parts(coords.0.add(col * dim), dim) };
    coupling_weight::<T>(squared(pi, pc), scale, r2, exp::<DeviceFma>)
}

macro_rules! lane_points_kernels {
    ($t:ty, $width:ident, $Width:ident, $fill:ident, $Fill:ident) => {
        kernel! {
            /// Row `i`'s width (its fullest lane's nonzero weights) and norm (the core's `lane_sum`
            /// per lane, then the butterfly: the dense row's `C_i`).
            fn $width(a: $Width {
                n: u32,
                dim: u32,
                coords: DevPtr<f64>,
                scale: f64,
                r2: f64,
                width: DevMut<u32>,
                norm: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                let (n, dim) = (a.n as usize, a.dim as usize);
                if i >= n {
                    return; // the whole warp: i is per warp
                }
                let pi = (i, from_raw_parts(a.coords.0.add(i * dim), dim));
                let count = Cell::new(0u32);
                let sum = lane_sum(n, lane, |col| {
                    let w = weight::<$t>(a.coords, dim, pi, col, a.scale, a.r2);
                    count.set(count.get() + (w != <$t as Real>::ZERO) as u32);
                    w
                });
                let count = warp_reduce(count.get(), xor_lane, u32::max);
                let sum = warp_butterfly(sum);
                if lane == 0 {
                    *a.width.0.add(i) = count;
                    *a.norm.0.add(i) = sum;
                }
            }
        }

        kernel! {
            /// Lane `l` of row `i`'s warp writes its `k`-th nonzero weight at `lane_entry(k, l)`.
            fn $fill(a: $Fill {
                n: u32,
                dim: u32,
                coords: DevPtr<f64>,
                scale: f64,
                r2: f64,
                ptr: DevPtr<u64>,
                cols: DevMut<u32>,
                vals: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                let (n, dim) = (a.n as usize, a.dim as usize);
                if i >= n {
                    return;
                }
                let pi = (i, from_raw_parts(a.coords.0.add(i * dim), dim));
                let w = |col| weight::<$t>(a.coords, dim, pi, col, a.scale, a.r2);
                fill_lane(n, lane, *a.ptr.0.add(i) as usize, w, a.cols, a.vals);
            }
        }
    };
}

lane_points_kernels!(f32, ocnn_lane_points_width_f32, LanePointsWidthF32, ocnn_lane_points_fill_f32, LanePointsFillF32);
lane_points_kernels!(f64, ocnn_lane_points_width_f64, LanePointsWidthF64, ocnn_lane_points_fill_f64, LanePointsFillF64);
