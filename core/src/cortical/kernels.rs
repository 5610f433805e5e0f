//! Argument structs of the cortical kernels (see [`crate::kernel`]). Every kernel maps one warp
//! onto one hypercolumn (lane `l` holds minicolumns `l·g … l·g + g − 1`, `g = ⌈M/32⌉`) and calls
//! the core's rules; buffers: `x` bottom inputs (`input_words` per bottom hypercolumn), `w`
//! weights `[hc][i][m]` (u16), `omega`, `cnt` (u32) and `rf` (u8) per `[hc][m]`, winners (i32,
//! `-1` silent) per hypercolumn.

use crate::kernel::{kernel_struct, DevMut, DevPtr};

/// [`Columns::level`] of the pipelined launch: every level at once, hypercolumn ids as slots.
pub const ALL_LEVELS: u32 = u32::MAX;

kernel_struct! {
    /// One [`Span`](super::Span) of a worker's part (the synchronous schedule: one launch per
    /// span, `src` = `dst`), or with `level` = [`ALL_LEVELS`] the hypercolumns `first … first +
    /// count − 1` of a whole network in one launch (the pipelined schedule: `src` = the step
    /// before's winners). A grid of fewer warps than hypercolumns strides over them.
    Columns => CorticalColumns {
        /// Levels L.
        levels: u32,
        /// Minicolumns M.
        m: u32,
        /// The span's level, or [`ALL_LEVELS`].
        level: u32,
        /// Network-wide id of the first hypercolumn.
        first: u32,
        /// Hypercolumns.
        count: u32,
        /// The first one's state slot (`Span::slot`).
        slot: u32,
        /// The first one's winner in `dst` (`Span::out`).
        out: u32,
        /// Its input (`Span::child`): bottom input index, or left child's winner in `src`.
        child: u32,
        /// Learning (and random firing) on: 1.
        learn: u32,
        /// The learning rule (`rules::Rule`'s bits).
        rule: u32,
        /// Learning step `t`.
        t: u64,
        /// `rng::key(seed, FIRE)`.
        fire_key: u64,
        /// Bottom inputs of this step.
        x: DevPtr<u64>,
        /// Winners the upper levels read.
        src: DevPtr<i32>,
        /// Weights.
        w: DevMut<u16>,
        /// `Ω`.
        omega: DevMut<u32>,
        /// Own-win counters.
        cnt: DevMut<u32>,
        /// Random-firing flags.
        rf: DevMut<u8>,
        /// Winners, written.
        dst: DevMut<i32>,
        /// Null, or `[t, offset]`: the step's `t` and its bottom inputs at `x + offset` words,
        /// read on the device instead of `t` and `x` (a CUDA graph replays fixed arguments; the
        /// host writes the clock before each replay).
        clock: DevPtr<u64>,
    }
}

kernel_struct! {
    /// The paper's work queue (Algorithm 1) as a persistent grid: each warp pops hypercolumn ids
    /// (bottom level first) from `head`, waits until its two children have raised its ready
    /// flag to `2·epoch`, runs, publishes its winner (`fence.acq_rel.gpu`, then a relaxed
    /// increment of the parent's flag), then learns. `head` is zeroed before each launch;
    /// `epoch` counts launches from 1, so flags never need resetting.
    Queue => CorticalQueue {
        /// Levels L.
        levels: u32,
        /// Minicolumns M.
        m: u32,
        /// Learning (and random firing) on: 1.
        learn: u32,
        /// The learning rule (`rules::Rule`'s bits).
        rule: u32,
        /// Learning step `t`.
        t: u64,
        /// `rng::key(seed, FIRE)`.
        fire_key: u64,
        /// Launch number, from 1.
        epoch: u32,
        /// Bottom inputs of this step.
        x: DevPtr<u64>,
        /// Weights.
        w: DevMut<u16>,
        /// `Ω`.
        omega: DevMut<u32>,
        /// Own-win counters.
        cnt: DevMut<u32>,
        /// Random-firing flags.
        rf: DevMut<u8>,
        /// Winners, written.
        winners: DevMut<i32>,
        /// Ready flags per hypercolumn.
        flags: DevMut<u32>,
        /// Queue head.
        head: DevMut<u32>,
    }
}

kernel_struct! {
    /// The untrained network on the device (the core's `initial_weight`, D-9), one thread per
    /// weight `k` of `[hc][i][m]`; `w` starts at hypercolumn `first` (one launch per span of a
    /// part: its hypercolumns are consecutive ids).
    Init => CorticalInit {
        /// Minicolumns M.
        m: u32,
        /// `rng::key(seed, INIT)`.
        init_key: u64,
        /// Network id of the hypercolumn at `w`.
        first: u64,
        /// Weights to write.
        n: u64,
        /// Weights, written.
        w: DevMut<u16>,
    }
}
