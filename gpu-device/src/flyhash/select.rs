//! The search's select spread over the GPU: the radix select of `fly_pixel_wta` — the same
//! `RadixSelect::new16`, `select_range` and `ties_left` of the core — with the database cut into
//! chunks, so a batch of a few queries over millions of codes fills every SM instead of a block
//! per 32 queries. Layouts on `neurobits_core::flyhash::kernels::HammingSelect`.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{HammingSelect, HAMMING_SELECT_PARTS, HAMMING_SELECT_THREADS};
use neurobits_core::flyhash::{select_range, ties_left, RadixSelect};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, kernel, smem, split, thread_block};

/// Eight 16-bit keys read with one 128-bit load.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

const NT: usize = HAMMING_SELECT_THREADS as usize;
const PARTS: usize = HAMMING_SELECT_PARTS as usize;

kernel! {
    /// A block per (chunk of `cw` code words, 32 queries), chunk-major; lane = query, warp =
    /// part of the chunk. Phase 0: each query's second-pass histogram of its chunk, added to
    /// `hist2`. Phase 1: the mark words of the keys above the threshold, and each part's count
    /// of keys at it. Phase 2: a part whose keys at the threshold still win (the earlier parts'
    /// and chunks' counts say how many are left: `ties_left`) writes its words again with them.
    fn fly_hamming_select(a: HammingSelect {
        m: u32,
        k: u32,
        b: u32,
        bp: u32,
        cw: u32,
        phase: u32,
        keys: DevPtr<u16>,
        hist: DevPtr<u32>,
        hist2: DevMut<u32>,
        ties: DevMut<u32>,
        codes: DevMut<Word>,
    }) {
        let (m, bp, cw) = (a.m as usize, a.bp as usize, a.cw as usize);
        if m % 64 != 0 || bp % 32 != 0 || cw == 0 || a.phase > 2 {
            abort();
        }
        let (tid, blk) = thread_block();
        let (part, lane) = (tid / 32, tid % 32);
        let (chunk, group) = split(blk, bp / 32);
        let i = group * 32 + lane;
        let real = i < a.b as usize;
        let words = m / 64;
        // The part's code words: the chunk's `cw` words cut in PARTS.
        let (c0, c1) = (words.min(chunk * cw), words.min(chunk * cw + cw));
        let per = (c1 - c0).div_ceil(PARTS);
        let (w0, w1) = (c1.min(c0 + part * per), c1.min(c0 + part * per + per));
        let base = smem::base();
        let q = a.keys.0 as *const Quad;
        let mut st = RadixSelect::new16(a.k);
        st.advance_with(|bin| *a.hist.0.add(i * 256 + bin));
        if a.phase == 0 {
            let hist = |bin: usize| base + ((bin * 32 + lane) * 4) as u32;
            for e in (tid..256 * 32).step_by(NT) {
                smem::st_u32(base + 4 * e as u32, 0);
            }
            smem::sync();
            for o in w0 * 8..w1 * 8 {
                let x = *q.add(o * bp + i);
                for j in 0..8 {
                    if let Some(bin) = st.bin((x.0[j / 2] >> (16 * (j % 2))) & 0xFFFF) {
                        smem::red_add_u32(hist(bin), 1);
                    }
                }
            }
            smem::sync();
            for e in (tid..256 * 32).step_by(NT) {
                let (bin, l) = (e / 32, e % 32);
                let c = smem::ld_u32(base + 4 * e as u32);
                if c != 0 && group * 32 + l < a.b as usize {
                    AtomicU32::from_ptr(a.hist2.0.add((group * 32 + l) * 256 + bin)).fetch_add(c, Relaxed);
                }
            }
            return;
        }
        st.advance_with(|bin| *a.hist2.0.add(i * 256 + bin));
        let t = st.threshold();
        let code = a.codes.0.add(i * words);
        // This part's count of keys at `t`: `ties[(chunk · PARTS + part) · bp + i]`.
        let slot = |c: usize, p: usize| a.ties.0.add((c * PARTS + p) * bp + i);
        // The words `w0..w1` with the keys above `t` and the first `left` keys at it; returns the
        // ties not taken.
        let write = |left: usize| -> usize {
            let mut left = left;
            for w in w0..w1 {
                let mut word: Word = 0;
                for o in w * 8..w * 8 + 8 {
                    let x = *q.add(o * bp + i);
                    let at = |r: usize| (x.0[(r - o * 8) / 2] >> (16 * (r % 2))) & 0xFFFF;
                    left = select_range(o * 8, o * 8 + 8, at, t, left, |r| word |= 1 << (r % 64));
                }
                if real {
                    *code.add(w) = word;
                }
            }
            left
        };
        if a.phase == 1 {
            write(0);
            let mut n = 0u32;
            for o in w0 * 8..w1 * 8 {
                let x = *q.add(o * bp + i);
                for j in 0..8 {
                    n += (((x.0[j / 2] >> (16 * (j % 2))) & 0xFFFF) == t) as u32;
                }
            }
            *slot(chunk, part) = n;
            return;
        }
        // Phase 2: the ties of every earlier chunk (each thread adds a stride of the chunks, the
        // block sums the strides) and of the earlier parts of this one.
        let share = |p: usize| base + ((p * 32 + lane) * 4) as u32;
        let mut before = 0u32;
        for c in (part..chunk).step_by(PARTS) {
            for p in 0..PARTS {
                before = before.saturating_add(*slot(c, p));
            }
        }
        smem::st_u32(share(part), before);
        smem::sync();
        let earlier = (0..PARTS).map(|p| smem::ld_u32(share(p))).chain((0..part).map(|p| *slot(chunk, p)));
        let left = ties_left(st.ties(), earlier).min(*slot(chunk, part) as usize);
        if real && left > 0 {
            write(left);
        }
    }
}
