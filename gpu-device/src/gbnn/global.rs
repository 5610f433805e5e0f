//! `gbnn_step_global`: the sparse mode's global winner-take-all, a block per probe.
//!
//! Why a block per probe: the update keeps the neurons whose score equals the maximum over the
//! whole probe, so every word of the next state waits for one number that all of the probe's
//! words contribute to. Inside a block that is a shuffle reduction per warp and a barrier;
//! across blocks it would take a second launch (or a grid-wide sync) per update. A probe has at
//! most a few hundred words, so a block of up to [`StepGlobal::MAX_THREADS`] threads covers one,
//! and a batch still runs thousands of blocks at once.

use core::slice::from_raw_parts;
use neurobits_core::gbnn::kernels::{Shape, StepGlobal};
use neurobits_core::gbnn::rules::{active_clusters, global_max_word, global_word};
use neurobits_core::gbnn::Update;
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use super::{geometry, note_change};
use crate::{abort, kernel, lane, smem, split, thread_block, warp_reduce, xor_lane};

/// The maximum of `x` over the block's `threads` threads, on every thread (all of them take
/// part: a warp shuffle reduction, one shared slot per warp, a barrier, then every thread reads
/// the slots).
#[inline(always)]
fn block_max(x: u32, t: usize, threads: usize) -> u32 {
    let warp_max = warp_reduce(x, xor_lane, u32::max);
    let base = smem::base();
    if lane() == 0 {
        // SAFETY: slot `t / 32` of the `threads / 32` that `StepGlobal::shared_bytes` sizes.
        unsafe { smem::st_u32(base + (t / 32) as u32 * 4, warp_max) };
    }
    smem::sync();
    let mut best = 0;
    for wp in 0..threads.div_ceil(32) {
        // SAFETY: as above; written before the barrier.
        best = best.max(unsafe { smem::ld_u32(base + wp as u32 * 4) });
    }
    best
}

kernel! {
    /// One global winner-take-all update (`Update::GlobalSumOfSum` or `GlobalSumOfMax`), a block
    /// per active probe: thread `t` takes the probe's words `t, t + threads, …`, reduces the
    /// maximum of their scores (`global_max_word`) over the block, then writes its words of the
    /// next state against it (`global_word`) and flags a change.
    fn gbnn_step_global(a: StepGlobal {
        shape: Shape,
        update: u32,
        gamma: u32,
        n_active: u32,
        w: DevPtr<Word>,
        cur: DevPtr<Word>,
        next: DevMut<Word>,
        list: DevPtr<u32>,
        changed: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, wpc) = (g.row_words(), g.words_per_cluster());
        let (t, act) = thread_block();
        // The whole block leaves together (the grid has one block per active probe).
        if act >= a.n_active as usize {
            return;
        }
        let sum_of_max = match Update::from_u32(a.update) {
            Some(Update::GlobalSumOfSum) => false,
            Some(Update::GlobalSumOfMax) => true,
            _ => abort(),
        };
        let threads = StepGlobal::threads(&g) as usize;
        let p = *a.list.0.add(act) as usize;
        let w = from_raw_parts(a.w.0, g.weight_words());
        let v = from_raw_parts(a.cur.0.add(p * rw), rw);
        // Every thread reads the probe's few words for the mask rather than wait on a barrier.
        let active = active_clusters(&g, v);
        let mut best = 0;
        let mut word = t;
        while word < rw {
            let (cl, wi) = split(word, wpc);
            best = best.max(global_max_word(&g, w, v, active, sum_of_max, a.gamma, cl, wi));
            word += threads;
        }
        let max = block_max(best, t, threads);
        let mut differs = false;
        let mut word = t;
        while word < rw {
            let (cl, wi) = split(word, wpc);
            let out = global_word(&g, w, v, active, sum_of_max, a.gamma, cl, wi, max);
            *a.next.0.add(p * rw + word) = out;
            differs |= out != v[word];
            word += threads;
        }
        if differs {
            note_change(a.changed.0, p);
        }
    }
}
