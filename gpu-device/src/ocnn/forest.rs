//! OCNN kernels of the sparse network's clustering: phase agreements per coupled pair and the
//! Borůvka spanning forest of the linked pairs (the core's `forest_*` rules).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::ocnn::kernels::{ForestBest, ForestHook, ForestJump, SparsePhaseHits};
use neurobits_core::ocnn::{forest_key, forest_pair, linked, phase_hits};

use super::each_upper_pair;
use crate::{gid, kernel, split, warp_reduce, xor_lane64};

kernel! {
    /// Adds the agreements of `valid` phase bits (the core's `phase_hits`) to every coupled pair,
    /// a thread per row.
    fn ocnn_sparse_phase_hits(a: SparsePhaseHits {
        n: u32,
        valid: u32,
        ptr: DevPtr<u64>,
        upper: DevPtr<u64>,
        hit_ptr: DevPtr<u64>,
        cols: DevPtr<u32>,
        words: DevPtr<u64>,
        hits: DevMut<u32>,
    }) {
        let i = gid();
        if i < a.n as usize {
            let wi = *a.words.0.add(i);
            each_upper_pair(i, a.ptr, a.upper, a.hit_ptr, a.cols, |slot, j| {
                *a.hits.0.add(slot) += phase_hits(wi, *a.words.0.add(j), a.valid);
            });
        }
    }
}

kernel! {
    /// Borůvka step 1: warp `i` (a row) keeps each lane's best linked pair leaving the row's
    /// component, reduces the warp's 32 (two 32-bit shuffles per step), lane 0 raises
    /// `best[comp[i]]`.
    fn ocnn_forest_best(a: ForestBest {
        n: u32,
        t: u32,
        p: u32,
        comp: DevPtr<u32>,
        hits: DevPtr<u32>,
        best: DevMut<u64>,
    }) {
        let (i, lane) = split(gid(), 32);
        let n = a.n as usize;
        if i >= n {
            return;
        }
        let c = *a.comp.0.add(i);
        let row = a.hits.0.add(i * n);
        let mut key = 0u64;
        for j in (lane..n).step_by(32) {
            let h = *row.add(j);
            if linked(h, a.p, a.t) && *a.comp.0.add(j) != c {
                key = key.max(forest_key(h, i as u32, j as u32));
            }
        }
        let key = warp_reduce(key, xor_lane64, u64::max);
        if lane == 0 && key != 0 {
            AtomicU64::from_ptr(a.best.0.add(c as usize)).fetch_max(key, Relaxed);
        }
    }
}

kernel! {
    /// Borůvka step 2, thread `c`: a root with a best pair hooks under the other component's
    /// root unless the two chose the same pair and `c` is the smaller (that one records it).
    fn ocnn_forest_hook(a: ForestHook {
        n: u32,
        comp: DevPtr<u32>,
        best: DevPtr<u64>,
        parent: DevMut<u32>,
        edges: DevMut<u64>,
        count: DevMut<u32>,
    }) {
        let c = gid();
        if c >= a.n as usize {
            return;
        }
        let key = *a.best.0.add(c);
        let mut to = c as u32;
        if key != 0 && *a.comp.0.add(c) == c as u32 {
            let (_, lo, hi) = forest_pair(key);
            // The pair was found from a row inside `c`: its other end is the other component.
            let (clo, chi) = (*a.comp.0.add(lo as usize), *a.comp.0.add(hi as usize));
            let other = if clo == c as u32 { chi } else { clo };
            let mutual = *a.best.0.add(other as usize) == key;
            if !mutual || (c as u32) < other {
                let slot = AtomicU32::from_ptr(a.count.0).fetch_add(1, Relaxed);
                *a.edges.0.add(slot as usize) = key;
            }
            if !mutual || (c as u32) > other {
                to = other;
            }
        }
        *a.parent.0.add(c) = to;
    }
}

kernel! {
    /// Borůvka step 3, thread `i`: the root above its old component.
    fn ocnn_forest_jump(a: ForestJump {
        n: u32,
        parent: DevPtr<u32>,
        comp: DevMut<u32>,
    }) {
        let i = gid();
        if i >= a.n as usize {
            return;
        }
        let mut r = *a.comp.0.add(i);
        while *a.parent.0.add(r as usize) != r {
            r = *a.parent.0.add(r as usize);
        }
        *a.comp.0.add(i) = r;
    }
}
