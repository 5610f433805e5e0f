//! GBNN kernels: thread mappings onto `neurobits_core::gbnn`'s step functions and schedule.
//! Buffer layouts are documented on the argument structs (`neurobits_core::gbnn::kernels`).

use core::slice::{from_raw_parts, from_raw_parts_mut};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use neurobits_core::bits::{nth_set_bit, set_bits};
use neurobits_core::gbnn::decode::decode_result;
use neurobits_core::gbnn::kernels::{
    Compact, Decode, DenseSelect, Init, JointFirst, JointIndex, Pack, ProbeCheck, ProbeIndex, Shape, StepJoint,
    StepSos, StepWord, Store, Unpack,
};
use neurobits_core::gbnn::mode::initial_word_in;
use neurobits_core::gbnn::rules::{
    joint_first_word_cols, joint_iter_word_cols, known_rows, occupancy_words, select_max, sum_of_max_wta_cluster,
    sum_of_sum_cluster,
};
use neurobits_core::gbnn::shard::{
    sparse_overflow, sparse_overflow_index, sparse_record, sparse_word, Shard, RECORD_WORDS,
};
use neurobits_core::gbnn::store::clique_word_in;
use neurobits_core::gbnn::{Geometry, Mode, Rule, Update};

use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, gid, kernel, split};

mod check;
mod exchange;
mod global;
mod joint;
mod warp;

#[inline(always)]
fn geometry(s: Shape) -> Geometry {
    match Geometry::new(s.c as usize, s.l as usize) {
        Ok(g) => g,
        Err(_) => abort(),
    }
}

/// Flags probe `p` as changed by this update (any thread of the probe may).
///
/// # Safety
/// `changed` holds at least `p + 1` flags.
#[inline(always)]
unsafe fn note_change(changed: *mut u32, p: usize) {
    AtomicU32::from_ptr(changed.add(p)).store(1, Relaxed);
}

kernel! {
    /// Stores `m` messages; one thread per (message, cluster `a`) sets the row of its neuron in
    /// `a` (the core's `clique_word_in`, in the shard's columns) with an atomic OR, since
    /// messages share rows.
    fn gbnn_store(a: Store {
        shape: Shape,
        shard: Shard,
        m: u32,
        msgs: DevPtr<u16>,
        w: DevMut<Word>,
    }) {
        let g = geometry(a.shape);
        let (k, ca) = split(gid(), g.clusters());
        if k >= a.m as usize {
            return;
        }
        let msg = from_raw_parts(a.msgs.0.add(k * g.clusters()), g.clusters());
        for b in a.shard.c0 as usize..a.shard.c1 as usize {
            if b != ca {
                let (idx, bit) = clique_word_in(&g, &a.shard, msg, ca, b);
                AtomicU64::from_ptr(a.w.0.add(idx)).fetch_or(bit, Relaxed);
            }
        }
    }
}

kernel! {
    /// Initial states into both buffers, one thread per (probe, word), and the per-probe fields.
    /// A lean start (`Init::lean`) has one thread per probe for the fields only: the host zeroed
    /// `buf0` (erased clusters start off under joint), or nothing in a sparse joint run, and
    /// nothing reads its known words.
    fn gbnn_init(a: Init {
        shape: Shape,
        k: u32,
        rule: u32,
        mode: u32,
        lean: u32,
        probes: DevPtr<u16>,
        buf0: DevMut<Word>,
        buf1: DevMut<Word>,
        list: DevMut<u32>,
        changed: DevMut<u32>,
        iters: DevMut<u32>,
        converged: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, wpc) = (g.row_words(), g.words_per_cluster());
        let i = gid();
        let (p, word) = if a.lean != 0 { (i, 0) } else { split(i, rw) };
        if p >= a.k as usize {
            return;
        }
        if a.lean == 0 {
            let (Some(rule), Some(mode)) = (Rule::from_u32(a.rule), Mode::from_u32(a.mode)) else { abort() };
            let symbols = from_raw_parts(a.probes.0.add(p * g.clusters()), g.clusters());
            let (cl, wi) = split(word, wpc);
            let v = initial_word_in(&g, symbols, rule, mode, cl, wi);
            *a.buf0.0.add(i) = v;
            *a.buf1.0.add(i) = v;
        }
        if word == 0 {
            *a.list.0.add(p) = p as u32;
            *a.changed.0.add(p) = 0;
            *a.iters.0.add(p) = 0;
            *a.converged.0.add(p) = 0;
        }
    }
}

kernel! {
    /// One per-word update of the schedule (`Update::word`): one thread per (active probe, word).
    fn gbnn_step_word(a: StepWord {
        shape: Shape,
        update: u32,
        n_active: u32,
        w: DevPtr<Word>,
        probes: DevPtr<u16>,
        cur: DevPtr<Word>,
        next: DevMut<Word>,
        list: DevPtr<u32>,
        changed: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, wpc) = (g.row_words(), g.words_per_cluster());
        let (act, word) = split(gid(), rw);
        if act >= a.n_active as usize {
            return;
        }
        let Some(u) = Update::from_u32(a.update) else { abort() };
        let p = *a.list.0.add(act) as usize;
        let w = from_raw_parts(a.w.0, g.weight_words());
        let v = from_raw_parts(a.cur.0.add(p * rw), rw);
        let symbols = from_raw_parts(a.probes.0.add(p * g.clusters()), g.clusters());
        let (cl, wi) = split(word, wpc);
        let out = match u {
            Update::SumOfMax | Update::BailOutEarly => u.iteration_word(&g, w, v, 0, cl, wi),
            // Only joint reads the erased mask: a loop over the probe's symbols that the other
            // rules should not pay for (9 % of bail-out-early's time on an H100).
            Update::JointIter => u.iteration_word(&g, w, v, g.erased_mask(symbols), cl, wi),
            // Joint's first pass has its own kernel (`gbnn_joint_first`) and sum-of-sum is per
            // cluster (`gbnn_step_sos`): keeping them out keeps the known-rows array off the stack.
            Update::JointFirst | Update::SumOfSum => abort(),
            // The noisy and sparse updates need a cluster's maximum (`gbnn_step_sos`) or the
            // probe's (`gbnn_step_global`) first.
            Update::SumOfMaxWta | Update::GlobalSumOfSum | Update::GlobalSumOfMax => abort(),
        };
        *a.next.0.add(p * rw + word) = out;
        if out != v[word] {
            note_change(a.changed.0, p);
        }
    }
}

kernel! {
    /// One per-cluster update, one thread per (active probe, cluster): the cluster maximum needs
    /// the whole cluster. Sum-of-sum (`sum_of_sum_cluster`) or the noisy sum-of-max
    /// (`sum_of_max_wta_cluster`).
    fn gbnn_step_sos(a: StepSos {
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
        let (act, cl) = split(gid(), g.clusters());
        if act >= a.n_active as usize {
            return;
        }
        let p = *a.list.0.add(act) as usize;
        let w = from_raw_parts(a.w.0, g.weight_words());
        let v = from_raw_parts(a.cur.0.add(p * rw), rw);
        let out = from_raw_parts_mut(a.next.0.add(p * rw + cl * wpc), wpc);
        match Update::from_u32(a.update) {
            Some(Update::SumOfSum) => sum_of_sum_cluster(&g, w, v, cl, a.gamma, out),
            Some(Update::SumOfMaxWta) => sum_of_max_wta_cluster(&g, w, v, cl, out),
            _ => abort(),
        }
        if out[..] != v[cl * wpc..(cl + 1) * wpc] {
            note_change(a.changed.0, p);
        }
    }
}

kernel! {
    /// After an update: counts it for every active probe, marks the unchanged ones converged and
    /// compacts the changed ones into `list_out` (order irrelevant: probes are independent).
    fn gbnn_compact(a: Compact {
        n_active: u32,
        list_in: DevPtr<u32>,
        changed: DevMut<u32>,
        iters: DevMut<u32>,
        converged: DevMut<u32>,
        list_out: DevMut<u32>,
        count: DevMut<u32>,
    }) {
        let act = gid();
        if act >= a.n_active as usize {
            return;
        }
        let p = *a.list_in.0.add(act) as usize;
        *a.iters.0.add(p) += 1;
        if *a.changed.0.add(p) != 0 {
            *a.changed.0.add(p) = 0;
            let slot = AtomicU32::from_ptr(a.count.0).fetch_add(1, Relaxed);
            *a.list_out.0.add(slot as usize) = p as u32;
        } else {
            *a.converged.0.add(p) = 1;
        }
    }
}

kernel! {
    /// The paper's GPU method, after cuBLAS computed `S = W·V` (column-major `n × K`, `γ` on W's
    /// diagonal): one thread per (probe, cluster) applies the core's `select_max` to the `f32`
    /// scores, writes the next `V` column part and the bit-packed state, and flags a change.
    fn gbnn_dense_select(a: DenseSelect {
        shape: Shape,
        k: u32,
        s: DevPtr<f32>,
        v: DevMut<f32>,
        states: DevMut<Word>,
        changed: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (n, rw, wpc, l) = (g.neurons(), g.row_words(), g.words_per_cluster(), g.neurons_per_cluster());
        let (p, cl) = split(gid(), g.clusters());
        if p >= a.k as usize {
            return;
        }
        if wpc > 32 {
            abort();
        }
        let col = p * n + cl * l;
        let out = from_raw_parts_mut(a.states.0.add(p * rw + cl * wpc), wpc);
        let scores = from_raw_parts(a.s.0.add(col), l);
        let mut words = [0u64; 32];
        let words = &mut words[..wpc];
        select_max(l, |j| scores[j], words);
        let mut differs = false;
        for (o, &x) in out.iter_mut().zip(words.iter()) {
            differs |= *o != x;
            *o = x;
        }
        for j in 0..l {
            *a.v.0.add(col + j) = ((words[j / 64] >> (j % 64)) & 1) as f32;
        }
        if differs {
            AtomicU32::from_ptr(a.changed.0).store(1, Relaxed);
        }
    }
}

kernel! {
    /// Compact results: one thread per (probe, cluster) writes the core's `decode_cluster` (or
    /// `decode_known` for a known cluster of a rule that keeps them, without reading the state).
    fn gbnn_decode(a: Decode {
        shape: Shape,
        k: u32,
        rule: u32,
        probes: DevPtr<u16>,
        states: DevPtr<Word>,
        sparse: u32,
        occ: DevPtr<u64>,
        out: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, cc) = (g.row_words(), g.clusters());
        let i = gid();
        let (p, cl) = split(i, cc);
        if p >= a.k as usize {
            return;
        }
        let Some(rule) = Rule::from_u32(a.rule) else { abort() };
        let ow = occupancy_words(&g);
        let occ = if a.sparse != 0 { Some(from_raw_parts(a.occ.0.add(i * ow), ow)) } else { None };
        let v = from_raw_parts(a.states.0.add(p * rw), rw);
        *a.out.0.add(i) = decode_result(&g, rule, *a.probes.0.add(i), v, cl, occ).0;
    }
}

/// Cluster of owned slot `jo` of a probe with erased mask `erased` on `shard`, if it exists:
/// owned erased clusters in increasing order (the same order on every device).
#[inline(always)]
fn owned_slot(erased: u64, shard: &Shard, jo: usize) -> Option<usize> {
    nth_set_bit(erased & shard.mask(), jo as u32)
}
