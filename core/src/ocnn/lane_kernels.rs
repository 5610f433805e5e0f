//! Argument structs of the lane-row kernels added for issue 37 (re-exported by
//! [`super::kernels`]): the lane rows built from the points, and the dense step over lane rows
//! with two-byte columns and the transfer applied term by term.

use crate::kernel::{kernel_struct, DevMut, DevPtr};

/// Building the lane rows on the device from the points (no `J` anywhere): the same two passes
/// as [`super::kernels::LaneWidthF32`]/[`super::kernels::LaneFillF32`], each pair's weight
/// computed where it is needed by the core's `coupling_weight` with the core's `exp` on the
/// GPU's `fma.rn.f64` — the host's `weights::lane_rows` entry for entry; the width pass also
/// writes each row's norm `C_i` (lane sums of its nonzero weights in ascending columns, then the
/// butterfly: `lanes32_sparse`).
macro_rules! lane_rows_points {
    ($t:ty, $Width:ident => $KWidth:ident, $Fill:ident => $KFill:ident) => {
        kernel_struct! {
            /// Each row's width and norm, from the points.
            $Width => $KWidth {
                /// Points.
                n: u32,
                /// Coordinates per point.
                dim: u32,
                /// `n · dim` coordinates, point by point.
                coords: DevPtr<f64>,
                /// The scale `a`.
                scale: f64,
                /// `(R·a)²` of a cutoff, or infinity.
                r2: f64,
                /// Widths, written.
                width: DevMut<u32>,
                /// Norms `C_i`, written.
                norm: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// Each lane's nonzero weights and columns, in order, into its row, from the points.
            $Fill => $KFill {
                /// Points.
                n: u32,
                /// Coordinates per point.
                dim: u32,
                /// `n · dim` coordinates, point by point.
                coords: DevPtr<f64>,
                /// The scale `a`.
                scale: f64,
                /// `(R·a)²` of a cutoff, or infinity.
                r2: f64,
                /// Row offsets (`n + 1`, from the widths).
                ptr: DevPtr<u64>,
                /// Columns, written (zero where padding).
                cols: DevMut<u32>,
                /// Weights, written (zero where padding).
                vals: DevMut<$t>,
            }
        }
    };
}

lane_rows_points!(f32, LanePointsWidthF32 => OcnnLanePointsWidthF32, LanePointsFillF32 => OcnnLanePointsFillF32);
lane_rows_points!(f64, LanePointsWidthF64 => OcnnLanePointsWidthF64, LanePointsFillF64 => OcnnLanePointsFillF64);

kernel_struct! {
    /// Each lane-row entry's column as its quotient by 32 (the core's `Quot16`), a thread per
    /// entry: rows start at multiples of 32, so entry `e` belongs to lane `e mod 32`.
    LaneQuot16 => OcnnLaneQuot16 {
        /// Entries.
        total: u64,
        /// Columns (`u32`).
        cols: DevPtr<u32>,
        /// Quotients, written.
        quot: DevMut<u16>,
    }
}

/// The dense step over lane rows whose columns are stored as quotients by 32 (`Quot16`: two
/// bytes an entry instead of four; the step streams its rows every iteration), reading the
/// states `x` and applying the transfer term by term (the core's `lane_sum_of_states`), so no
/// transfer kernel runs: one warp per neuron, the butterfly, lane 0 writes `s_i / C_i` — the
/// bits of [`super::kernels::StepLaneRowsF32`] after the transfer kernel.
macro_rules! lane_states {
    ($t:ty, $Step:ident => $KStep:ident) => {
        kernel_struct! {
            /// One warp per neuron over its lane row (quotient columns), from the states.
            $Step => $KStep {
                /// Neurons.
                n: u32,
                /// Row offsets.
                ptr: DevPtr<u64>,
                /// Column quotients by 32.
                cols: DevPtr<u16>,
                /// Weights.
                vals: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// States.
                x: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }
    };
}

lane_states!(f32, StepLaneStatesF32 => OcnnStepLaneStatesF32);
lane_states!(f64, StepLaneStatesF64 => OcnnStepLaneStatesF64);
