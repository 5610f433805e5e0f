//! The pixel path of the exact hash (inputs that are 8-bit pixels): integer sums of four inputs
//! per word from a shared-memory tile, then a block per input selects its winners. Layouts on
//! `neurobits_core::flyhash::kernels::{PixelAct, PixelWta}`.

use core::slice::from_raw_parts;
use neurobits_core::flyhash::kernels::{
    PixelAct, PixelWta, PIXEL_ACT_THREADS, PIXEL_ROWS_PER_PASS, PIXEL_TILE_GROUPS, PIXEL_WTA_THREADS,
};
use neurobits_core::flyhash::{activation_chunks, select_range, ties_left, Pixels4, RadixSelect};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, kernel, smem, split, thread_block};

/// Sixteen bytes, so that a slice of them is read with 128-bit loads.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

impl AsRef<[u32]> for Quad {
    #[inline(always)]
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

kernel! {
    /// Pixel sums: a block loads the pixel words of its 64 inputs (dimension-major, 128 bytes per
    /// dimension, a zero row last) into shared memory, then each half-warp sums one output row at
    /// a time for its 16 groups through the core's `activation_chunks` over `Pixels4` (one 64-bit
    /// shared load and one 64-bit add per index and four inputs) and writes the row's 64 sums,
    /// 128 contiguous bytes.
    fn fly_pixel_act(a: PixelAct {
        m: u32,
        d: u32,
        groups: u32,
        b: u32,
        sp: u32,
        rows: u32,
        offs: DevPtr<u32>,
        pix: DevPtr<u64>,
        keys: DevMut<u16>,
    }) {
        const NT: usize = PIXEL_ACT_THREADS as usize;
        const TG: usize = PIXEL_TILE_GROUPS as usize;
        const RP: usize = PIXEL_ROWS_PER_PASS as usize;
        let (m, d, groups, sp) = (a.m as usize, a.d as usize, a.groups as usize, a.sp as usize);
        if m % RP != 0 || a.rows as usize % RP != 0 || sp % 4 != 0 {
            abort();
        }
        let bp = groups.div_ceil(TG) * TG * 4;
        let (tid, blk) = thread_block();
        let (tile, chunk) = split(blk, m.div_ceil(a.rows as usize));
        let g0 = tile * TG;
        let base = smem::base();
        for e in (tid..(d + 1) * TG).step_by(NT) {
            let (j, g) = (e / TG, e % TG);
            let v = if j < d && g0 + g < groups { *a.pix.0.add(j * groups + g0 + g) } else { 0 };
            smem::st_u64(base + 8 * e as u32, v);
        }
        smem::sync();
        let (row, g) = (tid / 16, tid % 16);
        let mine = base + 8 * g as u32;
        let out = a.keys.0 as *mut u64;
        let r0 = chunk * a.rows as usize;
        for r in (r0 + row..m.min(r0 + a.rows as usize)).step_by(NT / 16) {
            let idx = from_raw_parts(a.offs.0.add(r * sp) as *const Quad, sp / 4);
            let sums = activation_chunks(idx, |o| Pixels4(smem::ld_u64(mine + o as u32)));
            // Lane q of the word is input 4g + q: the word is the four sums in input order.
            *out.add((r * bp + (g0 + g) * 4) / 4) = sums.0;
        }
    }
}

kernel! {
    /// Exact WTA of pixel sums: a block of 8 warps per 32 inputs (a lane per input), warp `p`
    /// taking the `p`-th eighth of the code words. Two radix passes over the 16-bit keys
    /// (`RadixSelect::new16`), counted into one 256-bin histogram per input (bin-major,
    /// input-minor: a warp's 32 increments hit 32 banks and never one address), the byte fixed by
    /// every thread for its input (`advance_with`); then each part counts the ties at the
    /// threshold, `ties_left` gives the ties its earlier parts leave, and `select_range` writes its
    /// words in index order.
    fn fly_pixel_wta(a: PixelWta {
        m: u32,
        k: u32,
        b: u32,
        bp: u32,
        keys: DevPtr<u16>,
        codes: DevMut<Word>,
    }) {
        const NT: usize = PIXEL_WTA_THREADS as usize;
        const PARTS: usize = NT / 32;
        let (tid, blk) = thread_block();
        let (part, lane) = (tid / 32, tid % 32);
        let i = blk * 32 + lane;
        let (m, bp) = (a.m as usize, a.bp as usize);
        if m % 64 != 0 || bp % 32 != 0 || blk * 32 >= bp {
            abort();
        }
        let base = smem::base();
        let hist = |bin: usize| base + ((bin * 32 + lane) * 4) as u32;
        let counts = |p: usize| base + ((256 * 32 + p * 32 + lane) * 4) as u32;
        let key = |r: usize| *a.keys.0.add(r * bp + i) as u32;
        let words = m / 64;
        let per = words.div_ceil(PARTS);
        let (w0, w1) = (words.min(part * per), words.min(part * per + per));
        let mut st = RadixSelect::new16(a.k);
        while !st.done() {
            for e in (tid..256 * 32).step_by(NT) {
                smem::st_u32(base + 4 * e as u32, 0);
            }
            smem::sync();
            // Sixteen loads in flight before the counts they feed.
            for r in (w0 * 64..w1 * 64).step_by(16) {
                let ks: [u32; 16] = core::array::from_fn(|j| key(r + j));
                for x in ks {
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
        let mut n = 0;
        for r in (w0 * 64..w1 * 64).step_by(16) {
            let ks: [u32; 16] = core::array::from_fn(|j| key(r + j));
            n += ks.iter().filter(|&&x| x == t).count() as u32;
        }
        smem::st_u32(counts(part), n);
        smem::sync();
        let mut ties = ties_left(st.ties(), (0..part).map(|p| smem::ld_u32(counts(p))));
        let code = a.codes.0.add(i * words);
        for w in w0..w1 {
            let mut word: Word = 0;
            ties = select_range(w * 64, w * 64 + 64, key, t, ties, |r| word |= 1 << (r % 64));
            if i < a.b as usize {
                *code.add(w) = word;
            }
        }
    }
}
