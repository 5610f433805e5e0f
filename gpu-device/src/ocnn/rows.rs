//! OCNN kernels over rows of weights (CSR rows of the sparse network, lane rows of the dense
//! one) and the kernels that build lane rows: the same warp-per-neuron mapping as the dense step
//! in the parent module.

use core::slice::from_raw_parts;
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::ocnn::kernels::{
    lane_entry, GroupFillF32, GroupFillF64, LaneFillF32, LaneFillF64, LaneQuot16, LaneWidthF32, LaneWidthF64,
    SparseFragmentaryHitsF32, SparseFragmentaryHitsF64, StepGroupedF32, StepGroupedF64, StepLaneRowsF32,
    StepLaneRowsF64, StepLaneStatesF32, StepLaneStatesF64, StepSparseF32, StepSparseF64,
};
use neurobits_core::ocnn::{
    lane_sum, lane_sum_of_states, lane_sum_sparse, update_neuron_grouped_at, LaneColumn, Quot16, Real, SyncMode,
};

use super::{each_upper_pair, warp_butterfly};
use crate::{gid, kernel, split, warp_reduce, xor_lane};

/// Lane `l`'s part of a row laid out as CSR: the columns `≡ l (mod 32)`, wherever they stand.
#[inline(always)]
fn by_column<T: neurobits_core::ocnn::Real>(cols: &[u32], lane: usize, term: impl Fn(usize) -> T) -> T {
    lane_sum_sparse(cols, lane, term)
}

/// Lane `l`'s part of a lane row: entries `l, l + 32, …`.
#[inline(always)]
fn by_position<T: neurobits_core::ocnn::Real>(cols: &[u32], lane: usize, term: impl Fn(usize) -> T) -> T {
    lane_sum(cols.len(), lane, term)
}

/// A step over rows of weights, one warp per neuron: lane `l` adds its terms (`$lane_part`:
/// [`by_column`] for CSR rows, [`by_position`] for lane rows), then the butterfly, as in the dense
/// step.
macro_rules! rows_step_kernel {
    ($t:ty, $step:ident, $Step:ident, $lane_part:ident, $doc:literal) => {
        kernel! {
            #[doc = $doc]
            fn $step(a: $Step {
                n: u32,
                ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                vals: DevPtr<$t>,
                norm: DevPtr<$t>,
                f: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                if i >= a.n as usize {
                    return; // the whole warp: i is per warp
                }
                let (s, e) = (*a.ptr.0.add(i) as usize, *a.ptr.0.add(i + 1) as usize);
                let cols = from_raw_parts(a.cols.0.add(s), e - s);
                let vals = from_raw_parts(a.vals.0.add(s), e - s);
                let acc = warp_butterfly($lane_part(cols, lane, |k| vals[k] * *a.f.0.add(cols[k] as usize)));
                if lane == 0 {
                    *a.next.0.add(i) = acc / *a.norm.0.add(i);
                }
            }
        }
    };
}

macro_rules! sparse_kernels {
    ($t:ty, $step:ident, $Step:ident, $frag:ident, $Frag:ident) => {
        rows_step_kernel!(
            $t,
            $step,
            $Step,
            by_column,
            "The sparse step: lane `l` adds its columns' terms (the core's `lane_sum_sparse`)."
        );

        kernel! {
            /// One iteration of fragmentary synchronization on the coupled pairs, a thread per row.
            fn $frag(a: $Frag {
                n: u32,
                eps: $t,
                ptr: DevPtr<u64>,
                upper: DevPtr<u64>,
                hit_ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                x: DevPtr<$t>,
                hits: DevMut<u32>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let xi = *a.x.0.add(i);
                    each_upper_pair(i, a.ptr, a.upper, a.hit_ptr, a.cols, |slot, j| {
                        if SyncMode::Fragmentary(a.eps).close(xi, *a.x.0.add(j)) {
                            *a.hits.0.add(slot) += 1;
                        }
                    });
                }
            }
        }
    };
}

/// The sparse step a thread per neuron over rows grouped by lane, and the kernel that groups
/// them (see `neurobits_core::ocnn::kernels::StepGroupedF32`).
macro_rules! grouped_kernels {
    ($t:ty, $step:ident, $Step:ident, $fill:ident, $Fill:ident) => {
        kernel! {
            /// Row `i`'s update by the core's `update_neuron_grouped_at` over its grouped row, in
            /// thread `i`.
            fn $step(a: $Step {
                n: u32,
                ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                vals: DevPtr<$t>,
                norm: DevPtr<$t>,
                f: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let (s, e) = (*a.ptr.0.add(i) as usize, *a.ptr.0.add(i + 1) as usize);
                    *a.next.0.add(i) = update_neuron_grouped_at(
                        e - s,
                        |k| *a.cols.0.add(s + k),
                        |k| *a.vals.0.add(s + k),
                        *a.norm.0.add(i),
                        |j| *a.f.0.add(j),
                    );
                }
            }
        }

        kernel! {
            /// Row `i`'s CSR entries into the same place, lane by lane (ascending columns in each).
            fn $fill(a: $Fill {
                n: u32,
                ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                vals: DevPtr<$t>,
                out_cols: DevMut<u32>,
                out_vals: DevMut<$t>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let (s, e) = (*a.ptr.0.add(i) as usize, *a.ptr.0.add(i + 1) as usize);
                    let mut at = s;
                    for lane in 0..32u32 {
                        for j in s..e {
                            let c = *a.cols.0.add(j);
                            if c % 32 == lane {
                                *a.out_cols.0.add(at) = c;
                                *a.out_vals.0.add(at) = *a.vals.0.add(j);
                                at += 1;
                            }
                        }
                    }
                }
            }
        }
    };
}

grouped_kernels!(f32, ocnn_step_grouped_f32, StepGroupedF32, ocnn_group_fill_f32, GroupFillF32);
grouped_kernels!(f64, ocnn_step_grouped_f64, StepGroupedF64, ocnn_group_fill_f64, GroupFillF64);

sparse_kernels!(f32, ocnn_step_sparse_f32, StepSparseF32, ocnn_sparse_fragmentary_hits_f32, SparseFragmentaryHitsF32);
sparse_kernels!(f64, ocnn_step_sparse_f64, StepSparseF64, ocnn_sparse_fragmentary_hits_f64, SparseFragmentaryHitsF64);

/// The dense step over lane rows (see `neurobits_core::ocnn::kernels`).
macro_rules! lane_rows_kernel {
    ($t:ty, $step:ident, $Step:ident) => {
        rows_step_kernel!(
            $t,
            $step,
            $Step,
            by_position,
            "The dense step over lane rows: lane `l` runs the core's `lane_sum` over the row's entries `l, l + 32, …` (its nonzero weights, ascending columns, then zero padding)."
        );
    };
}

lane_rows_kernel!(f32, ocnn_step_lane_rows_f32, StepLaneRowsF32);
lane_rows_kernel!(f64, ocnn_step_lane_rows_f64, StepLaneRowsF64);

/// Lane `lane` of a row's warp writes its nonzero weights `w(col)`, over the columns `lane,
/// lane + 32, …` below `n` in order, at the row's entries `start + lane_entry(k, lane)`.
///
/// # Safety
/// `cols` and `vals` hold the row's entries from `start`, as many per lane as its width.
#[inline(always)]
pub(super) unsafe fn fill_lane<T: Real>(
    n: usize,
    lane: usize,
    start: usize,
    w: impl Fn(usize) -> T,
    cols: DevMut<u32>,
    vals: DevMut<T>,
) {
    let (mut k, mut col) = (0, lane);
    while col < n {
        let v = w(col);
        if v != T::ZERO {
            let e = start + lane_entry(k, lane);
            // SAFETY: as the caller promises (entry `k` of this lane is inside the row).
            unsafe {
                *cols.0.add(e) = col as u32;
                *vals.0.add(e) = v;
            }
            k += 1;
        }
        col += 32;
    }
}

/// Building lane rows from the dense `J` (see `neurobits_core::ocnn::kernels`): a warp per row.
macro_rules! lane_rows_build_kernels {
    ($t:ty, $width:ident, $Width:ident, $fill:ident, $Fill:ident) => {
        kernel! {
            /// Row `i`'s width: the most nonzero weights in one lane.
            fn $width(a: $Width {
                n: u32,
                j: DevPtr<$t>,
                width: DevMut<u32>,
            }) {
                let (i, lane) = split(gid(), 32);
                let n = a.n as usize;
                if i >= n {
                    return; // the whole warp
                }
                let row = a.j.0.add(i * n);
                let (mut count, mut col) = (0u32, lane);
                while col < n {
                    count += (*row.add(col) != <$t as Real>::ZERO) as u32;
                    col += 32;
                }
                let count = warp_reduce(count, xor_lane, u32::max);
                if lane == 0 {
                    *a.width.0.add(i) = count;
                }
            }
        }

        kernel! {
            /// Lane `l` of row `i`'s warp writes its `k`-th nonzero weight at `lane_entry(k, l)`.
            fn $fill(a: $Fill {
                n: u32,
                j: DevPtr<$t>,
                ptr: DevPtr<u64>,
                cols: DevMut<u32>,
                vals: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                let n = a.n as usize;
                if i >= n {
                    return;
                }
                let row = a.j.0.add(i * n);
                fill_lane(n, lane, *a.ptr.0.add(i) as usize, |col| *row.add(col), a.cols, a.vals);
            }
        }
    };
}

lane_rows_build_kernels!(f32, ocnn_lane_width_f32, LaneWidthF32, ocnn_lane_fill_f32, LaneFillF32);
lane_rows_build_kernels!(f64, ocnn_lane_width_f64, LaneWidthF64, ocnn_lane_fill_f64, LaneFillF64);

kernel! {
    /// Each lane-row entry's column as the core's `Quot16` (thread `e`: entry `e`, lane `e mod 32`).
    fn ocnn_lane_quot16(a: LaneQuot16 {
        total: u64,
        cols: DevPtr<u32>,
        quot: DevMut<u16>,
    }) {
        let e = gid();
        if (e as u64) < a.total {
            *a.quot.0.add(e) = Quot16::encode(*a.cols.0.add(e) as usize).0;
        }
    }
}

/// The dense step over lane rows with `Quot16` columns, from the states (see
/// `neurobits_core::ocnn::kernels::StepLaneStatesF32`): lane `l` runs the core's
/// `lane_sum_of_states` over the row's entries `l, l + 32, …`, then the butterfly.
macro_rules! lane_states_kernel {
    ($t:ty, $step:ident, $Step:ident) => {
        kernel! {
            /// Row `i`'s update from the states, the transfer applied term by term.
            fn $step(a: $Step {
                n: u32,
                ptr: DevPtr<u64>,
                cols: DevPtr<u16>,
                vals: DevPtr<$t>,
                norm: DevPtr<$t>,
                x: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                if i >= a.n as usize {
                    return; // the whole warp: i is per warp
                }
                let (s, e) = (*a.ptr.0.add(i) as usize, *a.ptr.0.add(i + 1) as usize);
                // SAFETY: `Quot16` is `repr(transparent)` over `u16`.
                let cols = from_raw_parts(a.cols.0.add(s).cast::<Quot16>(), e - s);
                let vals = from_raw_parts(a.vals.0.add(s), e - s);
                let acc = warp_butterfly(lane_sum_of_states(cols, vals, lane, a.n - 1, |j| *a.x.0.add(j)));
                if lane == 0 {
                    *a.next.0.add(i) = acc / *a.norm.0.add(i);
                }
            }
        }
    };
}

lane_states_kernel!(f32, ocnn_step_lane_states_f32, StepLaneStatesF32);
lane_states_kernel!(f64, ocnn_step_lane_states_f64, StepLaneStatesF64);
