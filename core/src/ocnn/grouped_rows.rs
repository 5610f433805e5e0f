//! Argument structs of the sparse coupling's thread-per-row step (see [`crate::kernel`]): each
//! CSR row's entries *grouped by lane* (lane 0's columns ascending, then lane 1's, …) in the
//! row's own place, so that one thread per row keeps the 32 accumulators of
//! [`lanes32_grouped_at`] in registers and gives the CSR row's bits.
//!
//! Measured on one H200 (10⁵ points, `--cutoff` 3, 6, 12: 34, 135, 529 entries per row), the
//! thread per row over grouped rows stepped 2.7×, 2.9× and 3.2× faster than a warp per CSR row.
//! Sliced ELL (the `k`-th entries of 32 rows side by side) was tried and dropped: the threads
//! of a warp stand at different `k` (each lane's run has its own length), so its loads did not
//! coalesce, and it was 1.1× (34 per row) to 1.75× (529) slower than rows left in place.
//!
//! [`lanes32_grouped_at`]: super::lanes32_grouped_at

use crate::kernel::{kernel_struct, DevMut, DevPtr};

/// The grouped-row kernels' argument structs, once per working type.
macro_rules! grouped_rows {
    ($t:ty, $Step:ident => $KStep:ident, $Fill:ident => $KFill:ident) => {
        kernel_struct! {
            /// The sparse step, one thread per neuron over its grouped row (the core's
            /// `update_neuron_grouped_at`), `s_i / C_i` written: the CSR row's bits.
            $Step => $KStep {
                /// Neurons.
                n: u32,
                /// Row offsets (`n + 1`), the CSR ones.
                ptr: DevPtr<u64>,
                /// Columns, each row grouped by lane.
                cols: DevPtr<u32>,
                /// Weights, likewise.
                vals: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// Groups each CSR row by lane on the device, one thread per row.
            $Fill => $KFill {
                /// Neurons.
                n: u32,
                /// Row offsets.
                ptr: DevPtr<u64>,
                /// CSR columns, ascending per row.
                cols: DevPtr<u32>,
                /// CSR weights.
                vals: DevPtr<$t>,
                /// Grouped columns, written.
                out_cols: DevMut<u32>,
                /// Grouped weights, written.
                out_vals: DevMut<$t>,
            }
        }
    };
}

grouped_rows!(f32, StepGroupedF32 => OcnnStepGroupedF32, GroupFillF32 => OcnnGroupFillF32);
grouped_rows!(f64, StepGroupedF64 => OcnnStepGroupedF64, GroupFillF64 => OcnnGroupFillF64);
