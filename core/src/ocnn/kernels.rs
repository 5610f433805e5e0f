//! Argument structs of the OCNN kernels (see [`crate::kernel`]). Buffers: `j`: the dense `n × n`
//! weights, row-major; `norm`: `C_i`; `x`, `next`: states; `f`: transfer values; `words`: one
//! phase word per neuron (bit `t` = iteration `t` of the current 64-block); `hits`: the full
//! `n × n` hit matrix, row-major (its diagonal counts every observed iteration).

use crate::kernel::{kernel_struct, DevMut, DevPtr};

pub use super::grouped_rows::{GroupFillF32, GroupFillF64};
pub use super::lane_kernels::{
    LanePointsFillF32, LanePointsFillF64, LanePointsWidthF32, LanePointsWidthF64, LaneQuot16, StepLaneStatesF32,
    StepLaneStatesF64,
};

/// The kernels that exist once per working type.
macro_rules! typed {
    ($t:ty, $Transfer:ident => $KTransfer:ident, $Step:ident => $KStep:ident, $Per:ident => $KPer:ident,
     $Lanes:ident => $KLanes:ident, $Combine:ident => $KCombine:ident, $Bits:ident => $KBits:ident,
     $Frag:ident => $KFrag:ident) => {
        kernel_struct! {
            /// `f_j = f(x_j)`, one thread per neuron.
            $Transfer => $KTransfer {
                /// Neurons.
                n: u32,
                /// States.
                x: DevPtr<$t>,
                /// Transfer values, written.
                f: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// One warp per neuron (the paper's X-threads): lane `l` adds its `J_ij·f_j` (the
            /// core's `lane_sum`), the warp combines the lanes by the xor-butterfly (the core's
            /// `combine`), lane 0 writes `s_i / C_i`.
            $Step => $KStep {
                /// Neurons.
                n: u32,
                /// Weights.
                j: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// The paper's thread-per-neuron: one thread per neuron runs the core's `lanes32`
            /// over column `i` of the symmetric `J` (coalesced: neighbouring threads read
            /// neighbouring columns), the same order and bits as the warp-per-neuron kernel.
            $Per => $KPer {
                /// Neurons.
                n: u32,
                /// Weights (symmetric).
                j: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// The paper's Y-threads with an ordered combine, step 1: 8 threads per neuron,
            /// thread `y` computing lanes `4y … 4y+3` (the core's `lane_sum`) into
            /// `partial[i·32 + l]`.
            $Lanes => $KLanes {
                /// Neurons.
                n: u32,
                /// Weights.
                j: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// `n · 32` lane sums, written.
                partial: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// Y-threads, step 2: one thread per neuron combines its 32 lane sums by the core's
            /// `butterfly` (fixed order, no float atomics) and divides by `C_i`.
            $Combine => $KCombine {
                /// Neurons.
                n: u32,
                /// Lane sums.
                partial: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// Bit `bit` of neuron `i`'s word = whether its output rose, one thread per neuron
            /// (the word is cleared at bit 0).
            $Bits => $KBits {
                /// Neurons.
                n: u32,
                /// Bit within the 64-block.
                bit: u32,
                /// Previous states.
                before: DevPtr<$t>,
                /// New states.
                now: DevPtr<$t>,
                /// Phase words.
                words: DevMut<u64>,
            }
        }

        kernel_struct! {
            /// Adds one iteration of `|x_i − x_j| < ε` (the core's `SyncMode::close`), one thread
            /// per `(i, j)`.
            $Frag => $KFrag {
                /// Neurons.
                n: u32,
                /// ε.
                eps: $t,
                /// States.
                x: DevPtr<$t>,
                /// Hit matrix, added to.
                hits: DevMut<u32>,
            }
        }
    };
}

typed!(f32, TransferF32 => OcnnTransferF32, StepF32 => OcnnStepF32, StepPerNeuronF32 => OcnnStepPerNeuronF32,
       LanesYF32 => OcnnLanesYF32, CombineYF32 => OcnnCombineYF32, PhaseBitsF32 => OcnnPhaseBitsF32,
       FragmentaryHitsF32 => OcnnFragmentaryHitsF32);
typed!(f64, TransferF64 => OcnnTransferF64, StepF64 => OcnnStepF64, StepPerNeuronF64 => OcnnStepPerNeuronF64,
       LanesYF64 => OcnnLanesYF64, CombineYF64 => OcnnCombineYF64, PhaseBitsF64 => OcnnPhaseBitsF64,
       FragmentaryHitsF64 => OcnnFragmentaryHitsF64);

kernel_struct! {
    /// `ocnn_phase_hits`: adds the agreements of `blocks` words of every pair, the last one's low
    /// `valid` bits (the core's `phase_hits_blocks`), one thread per `(i, j)`.
    PhaseHits => OcnnPhaseHits {
        /// Neurons.
        n: u32,
        /// Words per neuron to add (block `k`'s words at `k·n`).
        blocks: u32,
        /// Bits of the last block.
        valid: u32,
        /// Phase words, block by block.
        words: DevPtr<u64>,
        /// Hit matrix, added to.
        hits: DevMut<u32>,
    }
}

/// The argument struct of a step over rows of weights (CSR rows or lane rows: the same fields).
macro_rules! rows_step {
    ($t:ty, $Step:ident => $KStep:ident, $doc:literal) => {
        kernel_struct! {
            #[doc = $doc]
            $Step => $KStep {
                /// Neurons.
                n: u32,
                /// Row offsets.
                ptr: DevPtr<u64>,
                /// Columns.
                cols: DevPtr<u32>,
                /// Weights.
                vals: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }
    };
}

/// The sparse coupling's kernels (`--cutoff`), once per working type. Buffers: CSR rows `ptr`
/// (`n + 1` offsets), `cols` (ascending per row), `vals`; `upper[i]`: row `i`'s first entry
/// with a column above `i`; `hit_ptr[i]`: the hit slot of that entry (slots row by row).
macro_rules! sparse {
    ($t:ty, $Step:ident => $KStep:ident, $Frag:ident => $KFrag:ident) => {
        rows_step!(
            $t,
            $Step => $KStep,
            "One warp per neuron over its CSR row: lane `l` adds the terms of the columns `≡ l (mod 32)` \
             (the core's `lane_sum_sparse`), the warp combines by the butterfly, lane 0 writes `s_i / C_i` — \
             the bits of the dense step with zeros elsewhere."
        );

        kernel_struct! {
            /// Adds one iteration of `|x_i − x_j| < ε` to every coupled pair, one thread per row.
            $Frag => $KFrag {
                /// Neurons.
                n: u32,
                /// ε.
                eps: $t,
                /// Row offsets.
                ptr: DevPtr<u64>,
                /// First upper entry per row.
                upper: DevPtr<u64>,
                /// First hit slot per row.
                hit_ptr: DevPtr<u64>,
                /// Columns.
                cols: DevPtr<u32>,
                /// States.
                x: DevPtr<$t>,
                /// Hits of the coupled pairs, added to.
                hits: DevMut<u32>,
            }
        }
    };
}

sparse!(f32, StepSparseF32 => OcnnStepSparseF32, SparseFragmentaryHitsF32 => OcnnSparseFragmentaryHitsF32);
sparse!(f64, StepSparseF64 => OcnnStepSparseF64, SparseFragmentaryHitsF64 => OcnnSparseFragmentaryHitsF64);
rows_step!(
    f32,
    StepGroupedF32 => OcnnStepGroupedF32,
    "The sparse step, one thread per neuron over its row grouped by lane (the core's \
     `update_neuron_grouped_at`; `cols`/`vals` grouped, `ptr` the CSR offsets), `s_i / C_i` \
     written: the CSR row's bits (see the `grouped_rows` module)."
);
rows_step!(f64, StepGroupedF64 => OcnnStepGroupedF64, "[`StepGroupedF32`] in `f64`.");
/// The dense update over each lane's nonzero weights ("lane rows"): row `i` holds `32 · w_i`
/// entries from `ptr[i]`, entry `k·32 + l` being the `k`-th nonzero weight of lane `l` (columns
/// `≡ l mod 32`, ascending), padded with zero weights; lane `l` of the row's warp adds them in
/// order (the core's `lane_sum` over the row), which skips only zero terms of the dense row.
macro_rules! lane_rows {
    ($t:ty, $Step:ident => $KStep:ident) => {
        rows_step!(
            $t,
            $Step => $KStep,
            "One warp per neuron over its lane rows, the butterfly, lane 0 writes `s_i / C_i`: the dense \
             step's bits."
        );
    };
}

lane_rows!(f32, StepLaneRowsF32 => OcnnStepLaneRowsF32);
lane_rows!(f64, StepLaneRowsF64 => OcnnStepLaneRowsF64);

/// Building the lane rows on the device from the resident dense `J`, a warp per row, lane `l`
/// walking columns `l, l + 32, …`: first each row's width (its fullest lane), then, into rows
/// the host laid out from the widths and zeroed, each lane's `k`-th nonzero weight and column at
/// entry `ptr[i] + k·32 + l` — the host's [`lane_entry`] layout, so the same rows.
macro_rules! lane_rows_build {
    ($t:ty, $Width:ident => $KWidth:ident, $Fill:ident => $KFill:ident) => {
        kernel_struct! {
            /// Each row's width: the most nonzero weights of one lane.
            $Width => $KWidth {
                /// Neurons.
                n: u32,
                /// Dense weights.
                j: DevPtr<$t>,
                /// Widths, written.
                width: DevMut<u32>,
            }
        }

        kernel_struct! {
            /// Each lane's nonzero weights and columns, in order, into its row.
            $Fill => $KFill {
                /// Neurons.
                n: u32,
                /// Dense weights.
                j: DevPtr<$t>,
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

lane_rows_build!(f32, LaneWidthF32 => OcnnLaneWidthF32, LaneFillF32 => OcnnLaneFillF32);
lane_rows_build!(f64, LaneWidthF64 => OcnnLaneWidthF64, LaneFillF64 => OcnnLaneFillF64);

/// Entry of lane `l`'s `k`-th nonzero weight in its lane row (from the row's first entry).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::kernels::lane_entry(2, 5), 69);
/// ```
#[inline(always)]
pub const fn lane_entry(k: usize, l: usize) -> usize {
    k * 32 + l
}

kernel_struct! {
    /// `ocnn_sparse_phase_hits`: adds the agreements of the low `valid` bits (the core's
    /// `phase_hits`) to every coupled pair, one thread per row.
    SparsePhaseHits => OcnnSparsePhaseHits {
        /// Neurons.
        n: u32,
        /// Bits of the block.
        valid: u32,
        /// Row offsets.
        ptr: DevPtr<u64>,
        /// First upper entry per row.
        upper: DevPtr<u64>,
        /// First hit slot per row.
        hit_ptr: DevPtr<u64>,
        /// Columns.
        cols: DevPtr<u32>,
        /// Phase words.
        words: DevPtr<u64>,
        /// Hits of the coupled pairs, added to.
        hits: DevMut<u32>,
    }
}

kernel_struct! {
    /// Borůvka round, step 1: a warp per neuron `i` scans its row of `hits` for the best pair
    /// (the core's `forest_key`) that is linked at threshold `p` (the grid's lowest) and leaves
    /// its component, and raises `best[comp[i]]` to it (atomic max).
    ForestBest => OcnnForestBest {
        /// Neurons.
        n: u32,
        /// Observed iterations.
        t: u32,
        /// The lowest threshold of the grid, percent.
        p: u32,
        /// Component of every neuron (the id of its root).
        comp: DevPtr<u32>,
        /// The hit matrix.
        hits: DevPtr<u32>,
        /// Best key per component, zeroed before, raised.
        best: DevMut<u64>,
    }
}

kernel_struct! {
    /// Borůvka round, step 2: a thread per neuron `c`; a root with a best pair hooks under the
    /// other side's root (of two roots that chose the same pair, the larger hooks and the smaller
    /// records the pair); `parent` is written for every neuron.
    ForestHook => OcnnForestHook {
        /// Neurons.
        n: u32,
        /// Components.
        comp: DevPtr<u32>,
        /// Best keys of step 1.
        best: DevPtr<u64>,
        /// Parent of every root after hooking (itself if it stays a root), written.
        parent: DevMut<u32>,
        /// Forest pairs (keys), at most `n − 1`, appended to.
        edges: DevMut<u64>,
        /// How many pairs `edges` holds, added to.
        count: DevMut<u32>,
    }
}

kernel_struct! {
    /// Borůvka round, step 3: a thread per neuron follows `parent` from its component to the new
    /// root.
    ForestJump => OcnnForestJump {
        /// Neurons.
        n: u32,
        /// The hooks of step 2.
        parent: DevPtr<u32>,
        /// Components, updated.
        comp: DevMut<u32>,
    }
}
