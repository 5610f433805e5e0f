//! The sparse coupling's rows for a thread per row, and the argument struct of the kernel that
//! makes them (see [`crate::kernel`]; the step's is `kernels::StepGroupedF32`): each CSR row's
//! entries *grouped by lane* (lane 0's columns ascending, then lane 1's, …) in the
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

/// The argument struct of the kernel that groups the rows, once per working type (the step's
/// is `kernels::StepGroupedF32`, a step over rows like the others).
macro_rules! group_fill {
    ($t:ty, $Fill:ident => $KFill:ident) => {
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

group_fill!(f32, GroupFillF32 => OcnnGroupFillF32);
group_fill!(f64, GroupFillF64 => OcnnGroupFillF64);
