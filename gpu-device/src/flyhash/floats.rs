//! The filtered `f32` path of the exact hash (`neurobits_core::flyhash::wta_pack_filtered` on the
//! GPU): sample keys, their interval, one pass that sums every row from a shared-memory tile and
//! classifies it, then the selection among the candidates. Activations never go to global
//! memory. Layouts on `neurobits_core::flyhash::kernels::{FloatSample, FloatInterval, FloatHash,
//! FloatResolve}`.

use core::slice::from_raw_parts;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{
    FloatHash, FloatInterval, FloatResolve, FloatSample, Gather, FLOAT_HASH_THREADS, FLOAT_INTERVAL_THREADS,
    FLOAT_RESOLVE_THREADS, FLOAT_STAGE_ROWS, FLOAT_TILE_INPUTS,
};
use neurobits_core::flyhash::{
    activation_chunks_at, candidate, candidate_row, sort_key, FilterCounts, KeyClass, KeyInterval, Lanes,
    RadixSelect64, SampleSelect,
};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, gid, kernel, smem, thread_block, xor_lane};

const NT: usize = FLOAT_HASH_THREADS as usize;
const TI: usize = FLOAT_TILE_INPUTS as usize;
const STAGE: usize = FLOAT_STAGE_ROWS as usize;

/// Four row indices (one 8-byte shared load).
#[derive(Clone, Copy)]
struct Four([u16; 4]);

impl AsRef<[u16]> for Four {
    #[inline(always)]
    fn as_ref(&self) -> &[u16] {
        &self.0
    }
}

/// Loads the tile of inputs `tile · 32 ..` (`(d + 1) · 32` floats, dimension-major, zeros past
/// `b` and in row `d`) into shared memory at `base`.
///
/// # Safety
/// All threads of the block call it; `xt` holds `d · b` floats; the shared memory holds the tile.
#[inline(always)]
unsafe fn load_tile(base: u32, tid: usize, tile: usize, d: usize, b: usize, xt: DevPtr<f32>) {
    for e in (tid..(d + 1) * TI).step_by(NT) {
        let (j, i) = (e / TI, tile * TI + e % TI);
        let v = if j < d && i < b { (*xt.0.add(j * b + i)).to_bits() } else { 0 };
        smem::st_u32(base + 4 * e as u32, v);
    }
    smem::sync();
}

/// Copies the indices of rows `r0 .. r0 + 16` (contiguous in `offs`, `16 · sp` u16, a multiple
/// of 16 bytes) into the warp's staging area `stage`, 16 bytes per lane and step. The warp's
/// lanes then read four rows' indices per step with broadcast shared loads instead of four
/// global loads of distinct lines.
///
/// # Safety
/// All 32 lanes of the warp call it; `offs` holds the rows; `stage` holds `16 · sp · 2` bytes.
#[inline(always)]
unsafe fn stage_rows(offs: DevPtr<u16>, sp: usize, r0: usize, stage: u32, lane: usize) {
    let src = offs.0.add(r0 * sp) as *const [u32; 4];
    smem::sync_warp(); // the previous rows' readers are done
    for e in (lane..STAGE * sp / 8).step_by(32) {
        smem::st_v4(stage + 16 * e as u32, *src.add(e));
    }
    smem::sync_warp();
}

/// The activations of the lane's four inputs for the staged row at `idx` (its `sp` indices in
/// shared memory; `at`: the tile plus 16 bytes per quad of inputs), through the core's
/// `activation_chunks`: the same `f32` additions, in the same order, as the CPU's `activation`.
///
/// # Safety
/// `idx` addresses `sp` staged indices, each at most `d`; `at` addresses the lane's quad.
#[inline(always)]
unsafe fn row_sums(idx: u32, sp: usize, at: u32) -> [f32; 4] {
    let chunk = |c: usize| {
        let w = smem::ld_u64(idx + 8 * c as u32);
        Four([w as u16, (w >> 16) as u16, (w >> 32) as u16, (w >> 48) as u16])
    };
    activation_chunks_at(sp / 4, chunk, |j| Lanes(smem::ld_v4(at + 128 * j as u32).map(f32::from_bits))).0
}

/// The shared-memory layout of a tile block: (tile, per-input counts, this warp's staging area).
#[inline(always)]
fn layout(base: u32, d: usize, sp: usize, warp: usize) -> (u32, u32, u32) {
    let counts = base + ((d + 1) * TI * 4) as u32;
    let stage = counts + (2 * TI * 4) as u32 + (warp * STAGE * sp * 2) as u32;
    (base, counts, stage)
}

kernel! {
    /// Sample keys: the tile's 32 inputs over rows `0..n`, sixteen rows per warp step (staged),
    /// four at a time (a quad of lanes per row, four inputs per lane), each lane storing its four
    /// keys in 16 bytes.
    fn fly_float_sample(a: FloatSample {
        d: u32,
        b: u32,
        sp: u32,
        n: u32,
        offs: DevPtr<u16>,
        xt: DevPtr<f32>,
        bp: u32,
        keys: DevMut<u32>,
    }) {
        let (d, b, sp, n, bp) = (a.d as usize, a.b as usize, a.sp as usize, a.n as usize, a.bp as usize);
        if sp % 4 != 0 || n % STAGE != 0 || bp % TI != 0 {
            abort();
        }
        let (tid, tile) = thread_block();
        let (warp, lane) = (tid / 32, tid % 32);
        let (base, _, stage) = layout(smem::base(), d, sp, warp);
        load_tile(base, tid, tile, d, b, a.xt);
        let (rs, q) = (lane / 8, lane % 8);
        let at = base + 16 * q as u32;
        for g in (warp..n / STAGE).step_by(NT / 32) {
            stage_rows(a.offs, sp, g * STAGE, stage, lane);
            for t in 0..STAGE / 4 {
                let r = g * STAGE + 4 * t + rs;
                let v = row_sums(stage + ((4 * t + rs) * sp * 2) as u32, sp, at).map(sort_key);
                *(a.keys.0.add(r * bp + tile * TI + 4 * q) as *mut [u32; 4]) = v;
            }
        }
    }
}

kernel! {
    /// Sample intervals: lane `l` of block `x` is input `32x + l`; warp `w` reads sample rows
    /// `w, w + 16, …` (a warp reads 128 contiguous bytes per row), counts both sides of its
    /// input's `SampleSelect` into shared histograms, and every lane advances its input's selects
    /// from them, four passes.
    fn fly_float_interval(a: FloatInterval {
        m: u32,
        k: u32,
        n: u32,
        bp: u32,
        keys: DevPtr<u32>,
        iv: DevMut<KeyInterval>,
    }) {
        const W: usize = FLOAT_INTERVAL_THREADS as usize / 32;
        let (tid, blk) = thread_block();
        let (warp, lane) = (tid / 32, tid % 32);
        let (n, bp) = (a.n as usize, a.bp as usize);
        let i = blk * 32 + lane;
        let base = smem::base();
        let hist = |side: usize, bin: usize| base + (((side * 256 + bin) * 32 + lane) * 4) as u32;
        let mut sel = SampleSelect::new(a.m, a.k, a.n);
        while !sel.done() {
            for e in (tid..2 * 256 * 32).step_by(FLOAT_INTERVAL_THREADS as usize) {
                smem::st_u32(base + 4 * e as u32, 0);
            }
            smem::sync();
            for r in (warp..n).step_by(W) {
                let x = *a.keys.0.add(r * bp + i);
                for side in 0..2 {
                    if let Some(bin) = sel.bin(side, x) {
                        smem::red_add_u32(hist(side, bin), 1);
                    }
                }
            }
            smem::sync();
            for side in 0..2 {
                sel.advance_with(side, |bin| smem::ld_u32(hist(side, bin)));
            }
            smem::sync();
        }
        if warp == 0 {
            *a.iv.0.add(i) = sel.interval();
        }
    }
}

kernel! {
    /// The classifying pass: the tile's 32 inputs over all `m` rows. Warp `w` takes code words
    /// `w, w + 16, …`; a word's 64 rows are staged sixteen at a time, and lane `(rs, q)` = lane
    /// `8rs + q` sums rows `4t + rs` for inputs `4q .. 4q + 4` (a quarter warp, which a 16-byte
    /// shared load serves at once, reads one row's 128 contiguous bytes: no bank conflict). Keys above the interval set code
    /// bits (the four lanes of an input quad joined by shuffles), keys inside it are appended to the
    /// input's candidates (a shared counter).
    fn fly_float_hash(a: FloatHash {
        m: u32,
        d: u32,
        b: u32,
        sp: u32,
        cap: u32,
        offs: DevPtr<u16>,
        xt: DevPtr<f32>,
        iv: DevPtr<KeyInterval>,
        codes: DevMut<Word>,
        counts: DevMut<u32>,
        cand: DevMut<u64>,
    }) {
        let (m, d, b, sp, cap) = (a.m as usize, a.d as usize, a.b as usize, a.sp as usize, a.cap as usize);
        if m % 64 != 0 || sp % 4 != 0 {
            abort();
        }
        let (tid, tile) = thread_block();
        let (warp, lane) = (tid / 32, tid % 32);
        let (base, inside, stage) = layout(smem::base(), d, sp, warp);
        // Per input: candidates seen (inside), then keys above.
        let above = inside + (TI * 4) as u32;
        if tid < 2 * TI {
            smem::st_u32(inside + 4 * tid as u32, 0);
        }
        load_tile(base, tid, tile, d, b, a.xt);
        let (rs, q) = (lane / 8, lane % 8);
        let at = base + 16 * q as u32;
        let inputs: [usize; 4] = core::array::from_fn(|c| tile * TI + 4 * q + c);
        let ivs = inputs.map(|i| if i < b { *a.iv.0.add(i) } else { KeyInterval { lo: u32::MAX, hi: u32::MAX } });
        let mut n_above = [0u32; 4];
        let cw = m / 64;
        for w in (warp..cw).step_by(NT / 32) {
            let mut bits = [0u64; 4];
            for u in 0..64 / STAGE {
                stage_rows(a.offs, sp, w * 64 + u * STAGE, stage, lane);
                for t in 0..STAGE / 4 {
                    let bit = u * STAGE + 4 * t + rs;
                    let r = w * 64 + bit;
                    let v = row_sums(stage + ((4 * t + rs) * sp * 2) as u32, sp, at);
                    for c in 0..4 {
                        let x = sort_key(v[c]);
                        match ivs[c].class(x) {
                            KeyClass::Above => {
                                bits[c] |= 1 << bit;
                                n_above[c] += 1;
                            }
                            KeyClass::Inside if inputs[c] < b => {
                                let slot = smem::atom_add_u32(inside + (4 * (4 * q + c)) as u32, 1) as usize;
                                if slot < cap {
                                    *a.cand.0.add(inputs[c] * cap + slot) = candidate(x, r as u32);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            for c in 0..4 {
                // Lanes q, q + 8, q + 16, q + 24 hold disjoint bits of the word.
                let (mut lo, mut hi) = (bits[c] as u32, (bits[c] >> 32) as u32);
                lo |= xor_lane(lo, 8);
                hi |= xor_lane(hi, 8);
                lo |= xor_lane(lo, 16);
                hi |= xor_lane(hi, 16);
                if rs == 0 && inputs[c] < b {
                    *a.codes.0.add(inputs[c] * cw + w) = lo as u64 | (hi as u64) << 32;
                }
            }
        }
        for c in 0..4 {
            smem::red_add_u32(above + (4 * (4 * q + c)) as u32, n_above[c]);
        }
        smem::sync();
        if tid < TI && tile * TI + tid < b {
            let i = tile * TI + tid;
            *a.counts.0.add(2 * i) = smem::ld_u32(above + 4 * tid as u32);
            *a.counts.0.add(2 * i + 1) = smem::ld_u32(inside + 4 * tid as u32);
        }
    }
}

kernel! {
    /// The winning candidates of input `x` (block `x`): `RadixSelect64` over its kept candidates,
    /// histogrammed by all threads, then the winners' bits OR-ed into the code.
    fn fly_float_resolve(a: FloatResolve {
        m: u32,
        k: u32,
        cap: u32,
        iv: DevPtr<KeyInterval>,
        counts: DevPtr<u32>,
        cand: DevPtr<u64>,
        codes: DevMut<Word>,
        fail: DevMut<u32>,
    }) {
        const RT: usize = FLOAT_RESOLVE_THREADS as usize;
        let (tid, i) = thread_block();
        let (above, inside) = (*a.counts.0.add(2 * i), *a.counts.0.add(2 * i + 1));
        let c = FilterCounts { above, inside, stored: inside.min(a.cap) };
        let Some(need) = c.need(a.k) else {
            if tid == 0 {
                let slot = AtomicU32::from_ptr(a.fail.0).fetch_add(1, Relaxed) as usize;
                *a.fail.0.add(1 + slot) = i as u32;
            }
            return;
        };
        if need == 0 {
            return;
        }
        let cand = a.cand.0.add(i * a.cap as usize);
        let n = c.stored as usize;
        let base = smem::base();
        let iv = *a.iv.0.add(i);
        let mut st = RadixSelect64::within(need, iv.lo, iv.hi);
        while !st.done() {
            if tid < 256 {
                smem::st_u32(base + 4 * tid as u32, 0);
            }
            smem::sync();
            for e in (tid..n).step_by(RT) {
                if let Some(bin) = st.bin(*cand.add(e)) {
                    smem::red_add_u32(base + 4 * bin as u32, 1);
                }
            }
            smem::sync();
            st.advance_with(|bin| smem::ld_u32(base + 4 * bin as u32));
            smem::sync();
        }
        let code = a.codes.0.add(i * (a.m as usize / 64));
        for e in (tid..n).step_by(RT) {
            let x = *cand.add(e);
            if x >= st.threshold() {
                let r = candidate_row(x) as usize;
                AtomicU64::from_ptr(code.add(r / 64)).fetch_or(1 << (r % 64), Relaxed);
            }
        }
    }
}

kernel! {
    /// Gathers the columns `list` of the transposed inputs (the undecided inputs, for the
    /// unfiltered path), one thread per element.
    fn fly_gather(a: Gather {
        d: u32,
        b: u32,
        n: u32,
        list: DevPtr<u32>,
        xt: DevPtr<f32>,
        out: DevMut<f32>,
    }) {
        let e = gid();
        let n = a.n as usize;
        if e >= a.d as usize * n {
            return;
        }
        let (j, f) = (e / n, e % n);
        *a.out.0.add(e) = *a.xt.0.add(j * a.b as usize + *a.list.0.add(f) as usize);
    }
}
