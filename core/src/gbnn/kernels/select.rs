//! Argument structs of the kernels whose update keeps the neurons reaching a maximum: a
//! cluster's (sum-of-sum, the noisy sum-of-max, the cuBLAS baseline's selection) or the whole
//! probe's (the sparse mode's global winner-take-all).

use super::Shape;
use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

kernel_struct! {
    /// `gbnn_step_sos`: one per-cluster update, one thread per (active probe, cluster): the
    /// cluster maximum needs the whole cluster.
    StepSos => GbnnStepSos {
        /// Network shape.
        shape: Shape,
        /// The update, as `Update as u32`: `SumOfSum` or `SumOfMaxWta` (the noisy sum-of-max).
        update: u32,
        /// γ.
        gamma: u32,
        /// Active probes.
        n_active: u32,
        /// W.
        w: DevPtr<Word>,
        /// Current states.
        cur: DevPtr<Word>,
        /// Next states.
        next: DevMut<Word>,
        /// Active probes' indices.
        list: DevPtr<u32>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_step_global`: one update with a global winner-take-all (the sparse mode), one block
    /// of [`StepGlobal::threads`] threads per active probe with [`StepGlobal::shared_bytes`] of
    /// dynamic shared memory. Each thread takes the words `t, t + threads, …` of its probe: the
    /// maximum of their scores (`rules::global_max_word`), a block reduction of it (warp
    /// shuffles, then one slot per warp in shared memory), then their words of the next state
    /// against it (`rules::global_word`).
    StepGlobal => GbnnStepGlobal {
        /// Network shape.
        shape: Shape,
        /// The update, as `Update as u32`: `GlobalSumOfSum` or `GlobalSumOfMax`.
        update: u32,
        /// γ (the sum-of-sum score).
        gamma: u32,
        /// Active probes (blocks).
        n_active: u32,
        /// W.
        w: DevPtr<Word>,
        /// Current states.
        cur: DevPtr<Word>,
        /// Next states.
        next: DevMut<Word>,
        /// Active probes' indices.
        list: DevPtr<u32>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

impl StepGlobal {
    /// Most threads per block.
    pub const MAX_THREADS: u32 = 256;

    /// Threads per block for `g`: a thread per word of a probe, in whole warps, at most
    /// [`StepGlobal::MAX_THREADS`] (a thread then takes several words).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::StepGlobal};
    /// assert_eq!(StepGlobal::threads(&Geometry::new(3, 3).unwrap()), 32);
    /// assert_eq!(StepGlobal::threads(&Geometry::new(16, 512).unwrap()), 128);
    /// assert_eq!(StepGlobal::threads(&Geometry::new(3, 5000).unwrap()), 256);
    /// ```
    pub const fn threads(g: &crate::gbnn::Geometry) -> u32 {
        let words = g.row_words().div_ceil(32) * 32;
        if words > Self::MAX_THREADS as usize {
            Self::MAX_THREADS
        } else {
            words as u32
        }
    }

    /// Dynamic shared bytes of a block of `threads`: one `u32` maximum per warp.
    ///
    /// ```
    /// assert_eq!(neurobits_core::gbnn::kernels::StepGlobal::shared_bytes(128), 16);
    /// ```
    pub const fn shared_bytes(threads: u32) -> u32 {
        threads.div_ceil(32) * 4
    }
}

kernel_struct! {
    /// `gbnn_dense_select`: the paper's method after cuBLAS, one thread per (probe, cluster).
    DenseSelect => GbnnDenseSelect {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// Scores `S = W·V`, column-major `n × K`.
        s: DevPtr<f32>,
        /// `V`, rewritten.
        v: DevMut<f32>,
        /// Bit-packed states, rewritten.
        states: DevMut<Word>,
        /// One change flag for the batch.
        changed: DevMut<u32>,
    }
}
