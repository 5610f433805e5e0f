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
    bail_out_early_word, init_word, joint_first_word_rows, joint_iter_word, joint_iter_word_occ, known_rows, occupancy,
    select_max, sum_of_max_word, sum_of_sum_cluster,
};
use neurobits_core::flyhash::{
    activation_with, bisect64, hamming, kth_largest, pack_above, projection_row, select, select_range, sort_key, FlyParams,
    RadixSelect,
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

/// `(i / d, i % d)`, in 32-bit arithmetic when it fits (64-bit division is a long software
/// sequence on the GPU).
#[inline(always)]
fn split(i: usize, d: usize) -> (usize, usize) {
    if (i | d) >> 32 == 0 {
        let (i, d) = (i as u32, d as u32);
        ((i / d) as usize, (i % d) as usize)
    } else {
        (i / d, i % d)
    }
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
    let (k, a) = split(i, g.clusters());
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
    let (p, word) = split(i, rw);
    if p >= k as usize {
        return;
    }
    let symbols = from_raw_parts(probes.add(p * g.clusters()), g.clusters());
    let (cl, wi) = split(word, wpc);
    let v = init_word(&g, symbols, cl, wi, erased_on != 0);
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

/// One update of sum-of-max, bail-out-early or a later joint iteration (`rule` = [`Rule`] as
/// `u32`): one thread per (active probe, word).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_step_word(
    rule: u32, c: u32, l: u32, w: *const u64, probes: *const u16,
    cur: *const u64, next: *mut u64, list: *const u32, n_active: u32, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (rw, wpc) = (g.row_words(), g.words_per_cluster());
    let i = gid();
    let (a, word) = split(i, rw);
    if a >= n_active as usize {
        return;
    }
    let p = *list.add(a) as usize;
    let w = from_raw_parts(w, g.weight_words());
    let v = from_raw_parts(cur.add(p * rw), rw);
    let symbols = from_raw_parts(probes.add(p * g.clusters()), g.clusters());
    let (cl, wi) = split(word, wpc);
    let out = match Rule::from_u32(rule) {
        Some(Rule::SumOfMax) => sum_of_max_word(&g, w, v, cl, wi),
        Some(Rule::BailOutEarly) => bail_out_early_word(&g, w, v, cl, wi, g.all_clusters()),
        Some(Rule::Joint) => joint_iter_word(&g, w, v, g.erased_mask(symbols), cl, wi),
        _ => trap(),
    };
    *next.add(p * rw + word) = out;
    if out != v[word] {
        note_change(changed, p);
    }
}

/// Per-probe index for the joint rule, one thread per probe: the rows of its known neurons
/// (`rows`, `K · C`, the core's [`known_rows`]) and their number (`known`), its erased clusters in
/// order (`erased_list`, `K · C`) and their mask (`erased_mask`).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_probe_index(
    c: u32, l: u32, probes: *const u16, k: u32, rows: *mut u32, known: *mut u32, erased_list: *mut u8, erased_mask: *mut u64,
) {
    let g = geometry(c, l);
    let p = gid();
    if p >= k as usize {
        return;
    }
    let cc = g.clusters();
    let symbols = from_raw_parts(probes.add(p * cc), cc);
    *known.add(p) = known_rows(&g, symbols, from_raw_parts_mut(rows.add(p * cc), cc)) as u32;
    let mask = g.erased_mask(symbols);
    *erased_mask.add(p) = mask;
    let (mut m, mut j) = (mask, 0);
    while m != 0 {
        *erased_list.add(p * cc + j) = m.trailing_zeros() as u8;
        m &= m - 1;
        j += 1;
    }
}

/// The joint first pass, one thread per (probe, erased slot `j < e_max`, word): the AND of the
/// known rows ([`joint_first_word_rows`]). Known clusters need no thread: both state buffers
/// already hold their symbol.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_joint_first(
    c: u32, l: u32, e_max: u32, w: *const u64, rows: *const u32, known: *const u32, erased_list: *const u8,
    cur: *const u64, next: *mut u64, k: u32, changed: *mut u32,
) {
    let g = geometry(c, l);
    let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
    let (rest, wi) = split(gid(), wpc);
    let (p, j) = split(rest, e_max as usize);
    if p >= k as usize {
        return;
    }
    let nk = *known.add(p) as usize;
    if j >= cc - nk {
        return;
    }
    let cl = *erased_list.add(p * cc + j) as usize;
    let w = from_raw_parts(w, g.weight_words());
    let out = joint_first_word_rows(&g, w, from_raw_parts(rows.add(p * cc), nk), cl, wi);
    let word = p * rw + cl * wpc + wi;
    *next.add(word) = out;
    if out != *cur.add(word) {
        note_change(changed, p);
    }
}

/// This thread's `(probe, erased cluster)` for a (active probe, erased slot) mapping, if the slot
/// exists: slot `j` of active probe `list[a]` is its `j`-th erased cluster.
#[inline(always)]
unsafe fn erased_slot(
    g: &Geometry, e_max: u32, known: *const u32, erased_list: *const u8, list: *const u32, n_active: u32,
) -> Option<(usize, usize)> {
    let cc = g.clusters();
    let (a, j) = split(gid(), e_max as usize);
    if a >= n_active as usize {
        return None;
    }
    let p = *list.add(a) as usize;
    if j >= cc - *known.add(p) as usize {
        return None;
    }
    Some((p, *erased_list.add(p * cc + j) as usize))
}

/// Occupancy (nonzero words) of every erased cluster of the active probes, one thread per
/// (active probe, erased slot), into `occ` (`K · C` words): the input of [`gbnn_step_joint`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_occupancy(
    c: u32, l: u32, e_max: u32, known: *const u32, erased_list: *const u8, cur: *const u64, list: *const u32,
    n_active: u32, occ: *mut u64,
) {
    let g = geometry(c, l);
    let (cc, rw) = (g.clusters(), g.row_words());
    let Some((p, cl)) = erased_slot(&g, e_max, known, erased_list, list, n_active) else { return };
    *occ.add(p * cc + cl) = occupancy(&g, from_raw_parts(cur.add(p * rw), rw), cl);
}

/// A later joint update, one thread per (active probe, erased slot): only erased clusters change,
/// so known clusters get no thread; support is checked through the occupancy `occ` of `v`. Only
/// the words nonzero now or at the previous update (`occ_prev`, which covers both since the
/// active set only shrinks) can differ between `v` and `next`, so only those are written
/// (Lemma 1: a zero word stays zero).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gbnn_step_joint(
    c: u32, l: u32, e_max: u32, w: *const u64, known: *const u32, erased_list: *const u8, erased_mask: *const u64,
    occ: *const u64, occ_prev: *const u64, cur: *const u64, next: *mut u64, list: *const u32, n_active: u32,
    changed: *mut u32,
) {
    let g = geometry(c, l);
    let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
    let Some((p, cl)) = erased_slot(&g, e_max, known, erased_list, list, n_active) else { return };
    let erased = *erased_mask.add(p);
    let occ_p = from_raw_parts(occ.add(p * cc), cc);
    let mut words = occ_p[cl] | *occ_prev.add(p * cc + cl);
    let w = from_raw_parts(w, g.weight_words());
    let v = from_raw_parts(cur.add(p * rw), rw);
    let mut differs = false;
    while words != 0 {
        let wi = words.trailing_zeros() as usize;
        words &= words - 1;
        let word = cl * wpc + wi;
        let out = joint_iter_word_occ(&g, w, v, erased, cl, wi, occ_p);
        *next.add(p * rw + word) = out;
        differs |= out != v[word];
    }
    if differs {
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
    let (a, cl) = split(i, g.clusters());
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
    let (p, cl) = split(i, g.clusters());
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

// ---------------------------------------------------------------------------------------------
// FlyHash. Layouts: inputs transposed, `xt[j · b + i]` (input i, dimension j), and activations
// `act[r · b + i]`, so that consecutive threads (consecutive inputs) touch consecutive words.

/// Projection row `r` (the core's [`projection_row`]) into `proj[r · s ..]`, one thread per row.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_projection(d: u32, m: u32, s: u32, k: u32, seed: u64, proj: *mut u32) {
    let r = gid();
    if r >= m as usize {
        return;
    }
    let p = FlyParams { d, m, s, k, seed };
    projection_row(&p, r as u32, from_raw_parts_mut(proj.add(r * s as usize), s as usize));
}

/// Activations (the core's [`activation_with`] over the transposed inputs), one thread per
/// (output row, input). Threads run through all rows for a tile of 32 inputs before the next
/// tile, so the tile's inputs (`32·d` floats) stay in L1 while every row gathers from them.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_activation(m: u32, s: u32, b: u32, proj: *const u32, xt: *const f32, act: *mut f32) {
    let (tile, rest) = split(gid(), m as usize * 32);
    let (r, lane) = split(rest, 32);
    let i = tile * 32 + lane;
    if i >= b as usize {
        return;
    }
    let idx = from_raw_parts(proj.add(r * s as usize), s as usize);
    *act.add(r * b as usize + i) = activation_with(idx, |j| *xt.add(j * b as usize + i));
}

/// Exact winner-take-all, step 1: a fresh radix select ([`RadixSelect`]) per input.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_radix_init(b: u32, k: u32, states: *mut RadixSelect) {
    let i = gid();
    if i < b as usize {
        *states.add(i) = RadixSelect::new(k);
    }
}

/// Exact WTA, step 2 (four times): one thread per (chunk of `chunk` outputs, input) counts the
/// keys its input's selection accepts into `hist[i · 256 ..]` (runs of one bin are added at once).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_radix_hist(m: u32, b: u32, chunk: u32, act: *const f32, states: *const RadixSelect, hist: *mut u32) {
    let (c, i) = split(gid(), b as usize);
    let (m, b, chunk) = (m as usize, b as usize, chunk as usize);
    if c * chunk >= m {
        return;
    }
    let st = *states.add(i);
    let (mut cur, mut n) = (0usize, 0u32);
    for r in c * chunk..m.min((c + 1) * chunk) {
        if let Some(bin) = st.bin(sort_key(*act.add(r * b + i))) {
            if bin != cur && n > 0 {
                AtomicU32::from_ptr(hist.add(i * 256 + cur)).fetch_add(n, Relaxed);
                n = 0;
            }
            cur = bin;
            n += 1;
        }
    }
    if n > 0 {
        AtomicU32::from_ptr(hist.add(i * 256 + cur)).fetch_add(n, Relaxed);
    }
}

/// Exact WTA, step 3 (after each histogram): one thread per input fixes the next byte
/// ([`RadixSelect::advance`]) and clears its histogram.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_radix_pick(b: u32, states: *mut RadixSelect, hist: *mut u32) {
    let i = gid();
    if i >= b as usize {
        return;
    }
    let h = from_raw_parts_mut(hist.add(i * 256), 256);
    (*states.add(i)).advance(&*(h.as_ptr() as *const [u32; 256]));
    for x in h.iter_mut() {
        *x = 0;
    }
}

/// Exact WTA, step 4: keys equal to the threshold per (chunk, input), for the index-order tie rule.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_tie_count(m: u32, b: u32, chunk: u32, act: *const f32, states: *const RadixSelect, counts: *mut u32) {
    let (c, i) = split(gid(), b as usize);
    let (m, b, chunk) = (m as usize, b as usize, chunk as usize);
    if c * chunk >= m {
        return;
    }
    let t = (*states.add(i)).threshold();
    let mut n = 0;
    for r in c * chunk..m.min((c + 1) * chunk) {
        n += (sort_key(*act.add(r * b + i)) == t) as u32;
    }
    *counts.add(c * b + i) = n;
}

/// Exact WTA, step 5: one thread per (chunk, input) writes its chunk's code words through the
/// core's [`select_range`], with the ties still winnable after the earlier chunks. `chunk` is a
/// multiple of 64, so every code word has one writer.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_select(
    m: u32, b: u32, chunk: u32, act: *const f32, states: *const RadixSelect, counts: *const u32, codes: *mut u64,
) {
    let (c, i) = split(gid(), b as usize);
    let (m, b, chunk) = (m as usize, b as usize, chunk as usize);
    if c * chunk >= m {
        return;
    }
    let st = *states.add(i);
    let mut before = 0;
    for c2 in 0..c {
        before += *counts.add(c2 * b + i);
    }
    let (start, end) = (c * chunk, m.min((c + 1) * chunk));
    let code = codes.add(i * m.div_ceil(64));
    for w in start / 64..end.div_ceil(64) {
        *code.add(w) = 0;
    }
    select_range(start, end, |r| sort_key(*act.add(r * b + i)), st.threshold(), st.ties().saturating_sub(before) as usize, |r| {
        *code.add(r / 64) |= 1 << (r % 64);
    });
}

/// The paper's 64-step bisection (the core's [`bisect64`] and [`pack_above`]), one thread per input.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_wta_bisect64(m: u32, k: u32, b: u32, eps: f32, act: *const f32, codes: *mut u64) {
    let i = gid();
    if i >= b as usize {
        return;
    }
    let (m, b) = (m as usize, b as usize);
    let cw = m.div_ceil(64);
    let value = |r: usize| *act.add(r * b + i);
    let mid = bisect64(m, k as usize, value, eps);
    pack_above(m, value, mid, from_raw_parts_mut(codes.add(i * cw), cw));
}

/// Hamming distances (the core's [`hamming`]), one thread per (query, database code), database
/// fastest: `dist[q · n + j]`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_hamming(words: u32, n: u32, nq: u32, db: *const u64, q: *const u64, dist: *mut u32) {
    let (qi, j) = split(gid(), n as usize);
    if qi >= nq as usize {
        return;
    }
    let w = words as usize;
    *dist.add(qi * n as usize + j) = hamming(from_raw_parts(db.add(j * w), w), from_raw_parts(q.add(qi * w), w));
}

/// Top-r per query by (distance, index) through the core's radix select, one thread per query:
/// the r winners in index order into `out[q · r ..]`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fly_top_r(n: u32, nq: u32, r: u32, dist: *const u32, out: *mut u32) {
    let qi = gid();
    if qi >= nq as usize {
        return;
    }
    let (n, r) = (n as usize, r as usize);
    let row = from_raw_parts(dist.add(qi * n), n);
    let key = |j: usize| u32::MAX - row[j];
    let (t, above) = kth_largest(n, r, key, &mut [0u32; 256]);
    let mut at = 0;
    select(n, r, key, t, above, |j| {
        *out.add(qi * r + at) = j as u32;
        at += 1;
    });
}
