//! GPU kernels of neurobits, compiled by rustc's own `nvptx64-nvidia-cuda` backend.
//!
//! Every entry point maps threads onto a `neurobits-core` step function and does nothing else:
//! no rule is written here. Buffers (all device pointers, row-major):
//! `w`: `n · rw` words of W; `probes`: `K · C` symbols; `cur`/`next`: the two state buffers,
//! `K · rw` words each (step `t` reads buffer `t % 2` and writes the other); `list`: indices of
//! the probes still iterating; `changed`, `iters`, `converged`: one `u32` per probe.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx)]
#![allow(clippy::missing_safety_doc)]

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x, trap};
use core::slice::{from_raw_parts, from_raw_parts_mut};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use neurobits_core::rules::{
    bail_out_early_word, init_word, joint_first_word, joint_iter_word, select_max, sum_of_max_word,
    sum_of_sum_cluster,
};
use neurobits_core::store::clique_word;
use neurobits_core::{Geometry, Rule};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { trap() }
}

#[inline(always)]
unsafe fn gid() -> usize {
    _block_idx_x() as usize * _block_dim_x() as usize + _thread_idx_x() as usize
}

#[inline(always)]
unsafe fn geometry(c: u32, l: u32) -> Geometry {
    match Geometry::new(c as usize, l as usize) {
        Ok(g) => g,
        Err(_) => trap(),
    }
}

/// Stores `m` messages; one thread per (message, cluster `a`) sets the row of its neuron in `a`
/// (the core's [`clique_word`]) with an atomic OR, since messages share rows.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_store(w: *mut u64, msgs: *const u16, m: u32, c: u32, l: u32) {
    let g = geometry(c, l);
    let i = gid();
    let (k, a) = (i / g.clusters(), i % g.clusters());
    if k >= m as usize {
        return;
    }
    let msg = from_raw_parts(msgs.add(k * g.clusters()), g.clusters());
    for b in 0..g.clusters() {
        if b != a {
            let (idx, bit) = clique_word(&g, msg, a, b);
            AtomicU64::from_ptr(w.add(idx)).fetch_or(bit, Relaxed);
        }
    }
}

/// Initial states into both buffers, one thread per (probe, word); resets the per-probe fields.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_init(
    c: u32, l: u32, probes: *const u16, k: u32, erased_on: u32,
    buf0: *mut u64, buf1: *mut u64, list: *mut u32, changed: *mut u32, iters: *mut u32, converged: *mut u32,
) {
    let g = geometry(c, l);
    let (rw, wpc) = (g.row_words(), g.words_per_cluster());
    let i = gid();
    let (p, word) = (i / rw, i % rw);
    if p >= k as usize {
        return;
    }
    let symbols = from_raw_parts(probes.add(p * g.clusters()), g.clusters());
    let v = init_word(&g, symbols, word / wpc, word % wpc, erased_on != 0);
    *buf0.add(i) = v;
    *buf1.add(i) = v;
    if word == 0 {
        *list.add(p) = p as u32;
        *changed.add(p) = 0;
        *iters.add(p) = 0;
        *converged.add(p) = 0;
    }
}

#[inline(always)]
unsafe fn note_change(changed: *mut u32, p: usize) {
    AtomicU32::from_ptr(changed.add(p)).store(1, Relaxed);
}

/// One update of sum-of-max, bail-out-early or joint's first pass (`rule` = [`Rule`] as `u32`):
/// one thread per (active probe, word).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_step_word(
    rule: u32, c: u32, l: u32, w: *const u64, probes: *const u16,
    cur: *const u64, next: *mut u64, list: *const u32, n_active: u32, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (rw, wpc) = (g.row_words(), g.words_per_cluster());
    let i = gid();
    let (a, word) = (i / rw, i % rw);
    if a >= n_active as usize {
        return;
    }
    let p = *list.add(a) as usize;
    let w = from_raw_parts(w, g.weight_words());
    let v = from_raw_parts(cur.add(p * rw), rw);
    let symbols = from_raw_parts(probes.add(p * g.clusters()), g.clusters());
    let (cl, wi) = (word / wpc, word % wpc);
    let out = match Rule::from_u32(rule) {
        Some(Rule::SumOfMax) => sum_of_max_word(&g, w, v, cl, wi),
        Some(Rule::BailOutEarly) => bail_out_early_word(&g, w, v, cl, wi, g.all_clusters()),
        Some(Rule::Joint) => joint_first_word(&g, w, symbols, cl, wi),
        _ => trap(),
    };
    *next.add(p * rw + word) = out;
    if out != v[word] {
        note_change(changed, p);
    }
}

/// A later joint update, one thread per (active probe, erased-cluster slot `j < e_max`, word):
/// only erased clusters change, so known clusters get no thread.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_step_joint(
    c: u32, l: u32, e_max: u32, w: *const u64, probes: *const u16,
    cur: *const u64, next: *mut u64, list: *const u32, n_active: u32, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (rw, wpc) = (g.row_words(), g.words_per_cluster());
    let per_probe = e_max as usize * wpc;
    let i = gid();
    let (a, j, wi) = (i / per_probe, (i % per_probe) / wpc, i % wpc);
    if a >= n_active as usize {
        return;
    }
    let p = *list.add(a) as usize;
    let symbols = from_raw_parts(probes.add(p * g.clusters()), g.clusters());
    let mut erased = g.erased_mask(symbols);
    for _ in 0..j {
        erased &= erased.wrapping_sub(1);
    }
    if erased == 0 {
        return;
    }
    let cl = erased.trailing_zeros() as usize;
    let w = from_raw_parts(w, g.weight_words());
    let v = from_raw_parts(cur.add(p * rw), rw);
    let word = cl * wpc + wi;
    let out = joint_iter_word(&g, w, v, symbols, cl, wi);
    *next.add(p * rw + word) = out;
    if out != v[word] {
        note_change(changed, p);
    }
}

/// One sum-of-sum update, one thread per (active probe, cluster): the cluster maximum needs the
/// whole cluster.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_step_sos(
    c: u32, l: u32, gamma: u32, w: *const u64,
    cur: *const u64, next: *mut u64, list: *const u32, n_active: u32, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (rw, wpc) = (g.row_words(), g.words_per_cluster());
    let i = gid();
    let (a, cl) = (i / g.clusters(), i % g.clusters());
    if a >= n_active as usize {
        return;
    }
    let p = *list.add(a) as usize;
    let w = from_raw_parts(w, g.weight_words());
    let v = from_raw_parts(cur.add(p * rw), rw);
    let out = from_raw_parts_mut(next.add(p * rw + cl * wpc), wpc);
    sum_of_sum_cluster(&g, w, v, cl, gamma, out);
    if out[..] != v[cl * wpc..(cl + 1) * wpc] {
        note_change(changed, p);
    }
}

/// After an update: counts it for every active probe, marks the unchanged ones converged and
/// compacts the changed ones into `list_out` (order irrelevant: probes are independent).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_compact(
    list_in: *const u32, n_active: u32, changed: *mut u32, iters: *mut u32, converged: *mut u32,
    list_out: *mut u32, count: *mut u32,
) {
    let a = gid();
    if a >= n_active as usize {
        return;
    }
    let p = *list_in.add(a) as usize;
    *iters.add(p) += 1;
    if *changed.add(p) != 0 {
        *changed.add(p) = 0;
        let slot = AtomicU32::from_ptr(count).fetch_add(1, Relaxed);
        *list_out.add(slot as usize) = p as u32;
    } else {
        *converged.add(p) = 1;
    }
}

/// The paper's GPU method, after cuBLAS computed `S = W·V` (column-major `n × K`, `γ` on W's
/// diagonal): one thread per (probe, cluster) applies the core's [`select_max`] to the `f32`
/// scores, writes the next `V` column part and the bit-packed state, and flags a change.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn dense_select(
    c: u32, l: u32, k: u32, s: *const f32, v: *mut f32, states: *mut u64, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (n, rw, wpc, l) = (g.neurons(), g.row_words(), g.words_per_cluster(), l as usize);
    let i = gid();
    let (p, cl) = (i / g.clusters(), i % g.clusters());
    if p >= k as usize {
        return;
    }
    let col = p * n + cl * l;
    let out = from_raw_parts_mut(states.add(p * rw + cl * wpc), wpc);
    let mut differs = false;
    let scores = from_raw_parts(s.add(col), l);
    let mut words = [0u64; 32];
    let words = &mut words[..wpc.min(32)];
    if wpc > 32 {
        trap();
    }
    select_max(l, |j| scores[j], words);
    for (o, &x) in out.iter_mut().zip(words.iter()) {
        differs |= *o != x;
        *o = x;
    }
    for j in 0..l {
        *v.add(col + j) = ((words[j / 64] >> (j % 64)) & 1) as f32;
    }
    if differs {
        AtomicU32::from_ptr(changed).store(1, Relaxed);
    }
}
