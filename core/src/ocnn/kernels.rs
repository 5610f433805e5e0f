//! Argument structs of the OCNN kernels (see [`crate::kernel`]). Buffers: `j`: the dense `n × n`
//! weights, row-major; `norm`: `C_i`; `x`, `next`: states; `f`: transfer values; `words`: one
//! phase word per neuron (bit `t` = iteration `t` of the current 64-block); `hits`: the full
//! `n × n` hit matrix, row-major (its diagonal counts every observed iteration).

use crate::kernel::{kernel_struct, DevMut, DevPtr};

kernel_struct! {
    /// `ocnn_transfer_f32`: `f_j = f(x_j)`, one thread per neuron.
    TransferF32 => OcnnTransferF32 {
        /// Neurons.
        n: u32,
        /// States.
        x: DevPtr<f32>,
        /// Transfer values, written.
        f: DevMut<f32>,
    }
}

kernel_struct! {
    /// `ocnn_step_f32`: one warp per neuron (the paper's X-threads): lane `l` adds its
    /// `J_ij·f_j` (the core's `lane_sum`), the warp combines the lanes by the xor-butterfly
    /// (the core's `combine`), lane 0 writes `s_i / C_i`.
    StepF32 => OcnnStepF32 {
        /// Neurons.
        n: u32,
        /// Weights.
        j: DevPtr<f32>,
        /// Row norms.
        norm: DevPtr<f32>,
        /// Transfer values.
        f: DevPtr<f32>,
        /// Next states, written.
        next: DevMut<f32>,
    }
}

kernel_struct! {
    /// `ocnn_transfer_f64`: as `ocnn_transfer_f32`, in `f64`.
    TransferF64 => OcnnTransferF64 {
        /// Neurons.
        n: u32,
        /// States.
        x: DevPtr<f64>,
        /// Transfer values, written.
        f: DevMut<f64>,
    }
}

kernel_struct! {
    /// `ocnn_step_f64`: as `ocnn_step_f32`, in `f64`.
    StepF64 => OcnnStepF64 {
        /// Neurons.
        n: u32,
        /// Weights.
        j: DevPtr<f64>,
        /// Row norms.
        norm: DevPtr<f64>,
        /// Transfer values.
        f: DevPtr<f64>,
        /// Next states, written.
        next: DevMut<f64>,
    }
}

kernel_struct! {
    /// `ocnn_phase_bits_f32`: bit `bit` of neuron `i`'s word = whether its output rose, one
    /// thread per neuron (the word is cleared at bit 0).
    PhaseBitsF32 => OcnnPhaseBitsF32 {
        /// Neurons.
        n: u32,
        /// Bit within the 64-block.
        bit: u32,
        /// Previous states.
        before: DevPtr<f32>,
        /// New states.
        now: DevPtr<f32>,
        /// Phase words.
        words: DevMut<u64>,
    }
}

kernel_struct! {
    /// `ocnn_phase_bits_f64`: as `ocnn_phase_bits_f32`, in `f64`.
    PhaseBitsF64 => OcnnPhaseBitsF64 {
        /// Neurons.
        n: u32,
        /// Bit within the 64-block.
        bit: u32,
        /// Previous states.
        before: DevPtr<f64>,
        /// New states.
        now: DevPtr<f64>,
        /// Phase words.
        words: DevMut<u64>,
    }
}

kernel_struct! {
    /// `ocnn_phase_hits`: adds the agreements of the low `valid` bits of every pair's words (the
    /// core's `phase_hits`), one thread per `(i, j)`.
    PhaseHits => OcnnPhaseHits {
        /// Neurons.
        n: u32,
        /// Bits of the block.
        valid: u32,
        /// Phase words.
        words: DevPtr<u64>,
        /// Hit matrix, added to.
        hits: DevMut<u32>,
    }
}

kernel_struct! {
    /// `ocnn_fragmentary_hits_f32`: adds one iteration of `|x_i − x_j| < ε` (the core's
    /// `SyncMode::close`), one thread per `(i, j)`.
    FragmentaryHitsF32 => OcnnFragmentaryHitsF32 {
        /// Neurons.
        n: u32,
        /// ε.
        eps: f32,
        /// States.
        x: DevPtr<f32>,
        /// Hit matrix, added to.
        hits: DevMut<u32>,
    }
}

kernel_struct! {
    /// `ocnn_fragmentary_hits_f64`: as `ocnn_fragmentary_hits_f32`, in `f64`.
    FragmentaryHitsF64 => OcnnFragmentaryHitsF64 {
        /// Neurons.
        n: u32,
        /// ε.
        eps: f64,
        /// States.
        x: DevPtr<f64>,
        /// Hit matrix, added to.
        hits: DevMut<u32>,
    }
}

kernel_struct! {
    /// `ocnn_step_per_neuron_f32`: the paper's thread-per-neuron: one thread per neuron runs the
    /// core's `lanes32` over column `i` of the symmetric `J` (coalesced: neighbouring threads
    /// read neighbouring columns), the same order and bits as the warp-per-neuron kernel.
    StepPerNeuronF32 => OcnnStepPerNeuronF32 {
        /// Neurons.
        n: u32,
        /// Weights (symmetric).
        j: DevPtr<f32>,
        /// Row norms.
        norm: DevPtr<f32>,
        /// Transfer values.
        f: DevPtr<f32>,
        /// Next states, written.
        next: DevMut<f32>,
    }
}

kernel_struct! {
    /// `ocnn_lanes_y_f32`: the paper's Y-threads with an ordered combine: 8 threads per neuron,
    /// thread `y` computing lanes `4y … 4y+3` (the core's `lane_sum`) into `partial[i·32 + l]`.
    LanesYF32 => OcnnLanesYF32 {
        /// Neurons.
        n: u32,
        /// Weights.
        j: DevPtr<f32>,
        /// Transfer values.
        f: DevPtr<f32>,
        /// `n · 32` lane sums, written.
        partial: DevMut<f32>,
    }
}

kernel_struct! {
    /// `ocnn_combine_y_f32`: one thread per neuron combines its 32 lane sums by the core's
    /// `butterfly` (fixed order, no float atomics) and divides by `C_i`.
    CombineYF32 => OcnnCombineYF32 {
        /// Neurons.
        n: u32,
        /// Lane sums.
        partial: DevPtr<f32>,
        /// Row norms.
        norm: DevPtr<f32>,
        /// Next states, written.
        next: DevMut<f32>,
    }
}

kernel_struct! {
    /// `ocnn_step_per_neuron_f64`: the paper's thread-per-neuron: one thread per neuron runs the
    /// core's `lanes32` over column `i` of the symmetric `J` (coalesced: neighbouring threads
    /// read neighbouring columns), the same order and bits as the warp-per-neuron kernel.
    StepPerNeuronF64 => OcnnStepPerNeuronF64 {
        /// Neurons.
        n: u32,
        /// Weights (symmetric).
        j: DevPtr<f64>,
        /// Row norms.
        norm: DevPtr<f64>,
        /// Transfer values.
        f: DevPtr<f64>,
        /// Next states, written.
        next: DevMut<f64>,
    }
}

kernel_struct! {
    /// `ocnn_lanes_y_f64`: the paper's Y-threads with an ordered combine: 8 threads per neuron,
    /// thread `y` computing lanes `4y … 4y+3` (the core's `lane_sum`) into `partial[i·32 + l]`.
    LanesYF64 => OcnnLanesYF64 {
        /// Neurons.
        n: u32,
        /// Weights.
        j: DevPtr<f64>,
        /// Transfer values.
        f: DevPtr<f64>,
        /// `n · 32` lane sums, written.
        partial: DevMut<f64>,
    }
}

kernel_struct! {
    /// `ocnn_combine_y_f64`: one thread per neuron combines its 32 lane sums by the core's
    /// `butterfly` (fixed order, no float atomics) and divides by `C_i`.
    CombineYF64 => OcnnCombineYF64 {
        /// Neurons.
        n: u32,
        /// Lane sums.
        partial: DevPtr<f64>,
        /// Row norms.
        norm: DevPtr<f64>,
        /// Next states, written.
        next: DevMut<f64>,
    }
}
