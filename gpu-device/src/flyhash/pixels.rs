//! The pixel path of the exact hash (inputs that are 8-bit pixels): integer sums of four inputs
//! per word from a shared-memory tile, then a block per input selects its winners. Layouts on
//! `neurobits_core::flyhash::kernels::{PixelAct, PixelWta}`.

use core::slice::from_raw_parts;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{
    PixelAct, PixelWta, UnpackPixels, PIXEL_ACT_THREADS, PIXEL_ROWS_PER_PASS, PIXEL_TILE_GROUPS, PIXEL_WTA_THREADS,
    PIXEL_WTA_TIE_SLOTS,
};
use neurobits_core::flyhash::{activation_chunks, select_range, ties_left, Pixels4, RadixSelect};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, gid, kernel, smem, split, thread_block};

/// `Pixels4::from_bytes(w)` in two byte permutes (`prmt`: bytes 0, 1 and 2, 3 of `w` to the
/// low bytes of the 16-bit lanes), where the portable form costs eight integer operations in
/// the hottest loop. The same layout conversion; the GPU tests compare the codes bit for bit.
#[inline(always)]
fn spread(w: u32) -> Pixels4 {
    let (lo, hi): (u32, u32);
    // SAFETY: register-only permutes.
    unsafe {
        core::arch::asm!(
            "prmt.b32 {lo}, {w}, 0, 0x4140;",
            "prmt.b32 {hi}, {w}, 0, 0x4342;",
            lo = out(reg32) lo, hi = out(reg32) hi, w = in(reg32) w,
            options(pure, nomem, nostack),
        )
    };
    Pixels4(lo, hi)
}

/// Sixteen bytes, so that a slice of them is read with 128-bit loads.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

/// Thirty-two bytes: eight row offsets, read with two 128-bit loads issued together.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Oct([u32; 8]);

impl AsRef<[u32]> for Oct {
    #[inline(always)]
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

kernel! {
    /// Pixel sums: a block loads the pixels of its 128 inputs (dimension-major, a byte per input,
    /// 128 bytes per dimension, a zero row last) into shared memory, then each warp sums an octet
    /// of output rows, one row at a time, for its 32 groups of four inputs through the core's
    /// `activation_chunks` over `Pixels4` (per index and four inputs: one 32-bit shared load, its
    /// bytes spread into 16-bit lanes, two 32-bit adds), counts them into the first-pass
    /// histograms (16-bit counts: a block's rows are fewer than 2¹⁶), and writes the octet's sums
    /// of its 128 inputs, 2 KiB contiguous.
    fn fly_pixel_act(a: PixelAct {
        m: u32,
        k: u32,
        d: u32,
        groups: u32,
        tile0: u32,
        sp: u32,
        rows: u32,
        offs: DevPtr<u32>,
        pix: DevPtr<u32>,
        bins: u32,
        bp: u32,
        keys: DevMut<u16>,
        hist: DevMut<u32>,
    }) {
        const NT: usize = PIXEL_ACT_THREADS as usize;
        const TG: usize = PIXEL_TILE_GROUPS as usize;
        const RP: usize = PIXEL_ROWS_PER_PASS as usize;
        let (m, d, groups, sp) = (a.m as usize, a.d as usize, a.groups as usize, a.sp as usize);
        if m % RP != 0 || a.rows as usize % RP != 0 || a.rows >= 1 << 16 || sp % 8 != 0 {
            abort();
        }
        let bp = a.bp as usize;
        let (tid, blk) = thread_block();
        let (tile, chunk) = split(blk, m.div_ceil(a.rows as usize));
        // Groups counted in this launch's tiles (g0) and in the whole batch (gg0).
        let (g0, gg0) = (tile * TG, (a.tile0 as usize + tile) * TG);
        if (g0 + TG) * 4 > bp {
            abort();
        }
        let base = smem::base();
        for e in (tid..(d + 1) * TG).step_by(NT) {
            let (j, g) = (e / TG, e % TG);
            let v = if j < d && gg0 + g < groups { *a.pix.0.add(j * groups + gg0 + g) } else { 0 };
            smem::st_u32(base + 4 * e as u32, v);
        }
        let bins = a.bins as usize;
        // First-pass counts of (input, bin) `e`: the 16-bit half `e % 2` of word `e / 2`.
        let counts = base + ((d + 1) * TG * 4) as u32;
        let count_words = (TG * 4 * bins).div_ceil(2);
        for e in (tid..count_words).step_by(NT) {
            smem::st_u32(counts + 4 * e as u32, 0);
        }
        smem::sync();
        let first = RadixSelect::new16(a.k);
        let (warp, g) = (tid / 32, tid % 32);
        let mine = base + 4 * g as u32;
        let out = a.keys.0 as *mut Quad;
        let r0 = chunk * a.rows as usize;
        let (o0, o1) = (r0 / 8, m.min(r0 + a.rows as usize) / 8);
        // Row `r`'s sums of the lane's four inputs, counted into their first-pass histograms.
        let row = |r: usize| {
            let idx = from_raw_parts(a.offs.0.add(r * sp) as *const Oct, sp / 8);
            let sums = activation_chunks(idx, |x| spread(smem::ld_u32(mine + x as u32)));
            for q in 0..4 {
                match first.bin(sums.lane(q)) {
                    Some(bin) if bin < bins => {
                        let e = (g * 4 + q) * bins + bin;
                        smem::red_add_u32(counts + (e / 2 * 4) as u32, 1 << (16 * (e % 2)))
                    }
                    _ => abort(), // a sum past s · 255: not pixels
                }
            }
            sums
        };
        for o in (o0 + warp..o1).step_by(NT / 32) {
            // Input q's word `t` holds rows 8o + 2t (low half) and 8o + 2t + 1: each pair of rows
            // gives the four inputs' next words by masks and shifts, shifted into `words` from
            // the top (constant positions: the words stay in registers, the pair's code once).
            let mut words = [[0u32; 4]; 4];
            for t in 0..4 {
                let (Pixels4(xl, xh), Pixels4(yl, yh)) = (row(8 * o + 2 * t), row(8 * o + 2 * t + 1));
                let next = [(xl & 0xFFFF) | yl << 16, xl >> 16 | (yl & 0xFFFF_0000), (xh & 0xFFFF) | yh << 16, xh >> 16 | (yh & 0xFFFF_0000)];
                for q in 0..4 {
                    words[q] = [words[q][1], words[q][2], words[q][3], next[q]];
                }
            }
            for (q, w) in words.into_iter().enumerate() {
                *out.add(o * bp + (g0 + g) * 4 + q) = Quad(w);
            }
        }
        smem::sync();
        for e in (tid..TG * 4 * bins).step_by(NT) {
            let n = smem::ld_u32(counts + (e / 2 * 4) as u32) >> (16 * (e % 2)) & 0xFFFF;
            if n != 0 {
                let (li, bin) = (e / bins, e % bins);
                AtomicU32::from_ptr(a.hist.0.add((g0 * 4 + li) * 256 + bin)).fetch_add(n, Relaxed);
            }
        }
    }
}

kernel! {
    /// Exact WTA of pixel sums: a block of 16 warps per 32 inputs (a lane per input), warp `p`
    /// taking the `p`-th sixteenth of the code words. The first radix pass over the 16-bit keys
    /// (`RadixSelect::new16`) was counted by `fly_pixel_act`; the second counts into one 256-bin
    /// histogram per input (bin-major,
    /// input-minor: a warp's 32 increments hit 32 banks and never one address), the byte fixed by
    /// every thread for its input (`advance_with`); then each part counts the ties at the
    /// threshold, `ties_left` gives the ties its earlier parts leave, and `select_range` writes its
    /// words in index order.
    fn fly_pixel_wta(a: PixelWta {
        m: u32,
        k: u32,
        b: u32,
        i0: u32,
        bp: u32,
        keys: DevPtr<u16>,
        hist: DevPtr<u32>,
        codes: DevMut<Word>,
    }) {
        const NT: usize = PIXEL_WTA_THREADS as usize;
        const PARTS: usize = NT / 32;
        const TIE_SLOTS: usize = PIXEL_WTA_TIE_SLOTS as usize;
        let (tid, blk) = thread_block();
        let (part, lane) = (tid / 32, tid % 32);
        // `i`: position in this launch's sums; `gi`: the input in the batch.
        let i = blk * 32 + lane;
        let gi = a.i0 as usize + i;
        let (m, bp) = (a.m as usize, a.bp as usize);
        if m % 64 != 0 || bp % 32 != 0 || blk * 32 >= bp {
            abort();
        }
        let base = smem::base();
        let hist = |bin: usize| base + ((bin * 32 + lane) * 4) as u32;
        let counts = |p: usize| base + ((256 * 32 + p * 32 + lane) * 4) as u32;
        let key = |r: usize| *a.keys.0.add(((r / 8) * bp + i) * 8 + r % 8) as u32;
        // Sixteen keys from two 16-byte loads, both issued before the keys are used.
        let sixteen = |r: usize| -> [u32; 16] {
            let q = a.keys.0 as *const Quad;
            let (x, y) = (*q.add((r / 8) * bp + i), *q.add((r / 8 + 1) * bp + i));
            core::array::from_fn(|j| {
                let w = if j < 8 { x.0[j / 2] } else { y.0[(j - 8) / 2] };
                (w >> (16 * (j % 2))) & 0xFFFF
            })
        };
        let words = m / 64;
        let per = words.div_ceil(PARTS);
        let (w0, w1) = (words.min(part * per), words.min(part * per + per));
        let mut st = RadixSelect::new16(a.k);
        st.advance_with(|bin| *a.hist.0.add(i * 256 + bin));
        while !st.done() {
            for e in (tid..256 * 32).step_by(NT) {
                smem::st_u32(base + 4 * e as u32, 0);
            }
            smem::sync();
            for r in (w0 * 64..w1 * 64).step_by(16) {
                for x in sixteen(r) {
                    if let Some(bin) = st.bin(x) {
                        smem::red_add_u32(hist(bin), 1);
                    }
                }
            }
            smem::sync();
            st.advance_with(|bin| smem::ld_u32(hist(bin)));
            smem::sync();
        }
        let t = st.threshold();
        // One scan writes the words of the keys above `t` and keeps the rows of the part's first
        // ties; once every part's tie count is known (`ties_left`), the part's first winning ties
        // are OR-ed in — the lowest-index rule of `select_range` — without a second scan, unless
        // the part had more winning ties than it kept.
        let slot = |k: usize| base + ((256 * 32 + NT + (k * PARTS + part) * 32 + lane) * 4) as u32;
        let code = a.codes.0.add(gi * words);
        let q = a.keys.0 as *const Quad;
        let mut n = 0usize;
        for w in w0..w1 {
            // Octet by octet: one 16-byte load, then its eight keys at constant positions.
            let mut word: Word = 0;
            for o in w * 8..w * 8 + 8 {
                let x = *q.add(o * bp + i);
                let at = |r: usize| (x.0[(r % 8) / 2] >> (16 * (r % 2))) & 0xFFFF;
                select_range(o * 8, o * 8 + 8, at, t, 0, |r| word |= 1 << (r % 64));
                for r in o * 8..o * 8 + 8 {
                    if at(r) == t {
                        if n < TIE_SLOTS {
                            smem::st_u32(slot(n), r as u32);
                        }
                        n += 1;
                    }
                }
            }
            if gi < a.b as usize {
                *code.add(w) = word;
            }
        }
        smem::st_u32(counts(part), n as u32);
        smem::sync();
        let ties = ties_left(st.ties(), (0..part).map(|p| smem::ld_u32(counts(p)))).min(n);
        if gi < a.b as usize && ties > 0 {
            if ties <= TIE_SLOTS {
                for k in 0..ties {
                    let r = smem::ld_u32(slot(k)) as usize;
                    *code.add(r / 64) |= 1 << (r % 64);
                }
            } else {
                let mut left = ties;
                for w in w0..w1 {
                    let mut word: Word = 0;
                    for o in w * 8..w * 8 + 8 {
                        let x = *q.add(o * bp + i);
                        let at = |r: usize| (x.0[(r % 8) / 2] >> (16 * (r % 2))) & 0xFFFF;
                        left = select_range(o * 8, o * 8 + 8, at, t, left, |r| word |= 1 << (r % 64));
                    }
                    *code.add(w) = word;
                }
            }
        }
    }
}

kernel! {
    /// Pixel `i` of dimension `j` as a float, one thread per element of `xt`.
    fn fly_unpack_pixels(a: UnpackPixels {
        d: u32,
        b: u32,
        groups: u32,
        pix: DevPtr<u32>,
        xt: DevMut<f32>,
    }) {
        let e = gid();
        let b = a.b as usize;
        if e >= a.d as usize * b {
            return;
        }
        let (j, i) = (e / b, e % b);
        *a.xt.0.add(e) = (*a.pix.0.add(j * a.groups as usize + i / 4) >> (8 * (i % 4)) & 0xFF) as f32;
    }
}
