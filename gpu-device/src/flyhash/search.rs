//! Hamming distances as select keys: a block holds 16 queries in shared memory and streams its
//! chunk of the database (word-major, so that an octet of codes is 64 contiguous bytes per word);
//! the keys go to `fly_hamming_select`, which picks the `r` largest, i.e. the `r` nearest codes.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{HammingKeys, HammingKeysMma, HAMMING_THREADS, HAMMING_TILE_QUERIES};
use neurobits_core::flyhash::{hamming_from_and, hamming_word, RadixSelect};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, from_lane, kernel, smem, split, thread_block, xor_lane};

/// Two words read with one 128-bit load.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Pair([Word; 2]);

/// Threads of a key block and queries of its tile.
const NT: usize = HAMMING_THREADS as usize;
const TQ: usize = HAMMING_TILE_QUERIES as usize;

/// Loads tile `tile`'s queries into shared memory at `base`, word-major (`[w · TQ + ql]`, zero
/// past `nq`), and zeroes the tile's first-pass counts after them; returns the counts' address.
///
/// # Safety
/// `q` holds `nq · words` words; the block's dynamic shared memory holds `hamming_keys_shared`.
#[inline(always)]
unsafe fn load_tile(base: u32, q: DevPtr<Word>, (tile, nq, words): (usize, usize, usize), tid: usize) -> u32 {
    // SAFETY: by the caller's contract.
    unsafe {
        for e in (tid..words * TQ).step_by(NT) {
            let (w, ql) = (e / TQ, e % TQ);
            let qi = tile * TQ + ql;
            smem::st_u64(base + 8 * e as u32, if qi < nq { *q.0.add(qi * words + w) } else { 0 });
        }
        let counts = base + (words * TQ * 8) as u32;
        for e in (tid..TQ * 256 / 2).step_by(NT) {
            smem::st_u32(counts + 4 * e as u32, 0);
        }
        counts
    }
}

/// Counts `key` of tile query `ql` into the select's first pass (16-bit counts, two a word).
///
/// # Safety
/// `counts` is [`load_tile`]'s.
#[inline(always)]
unsafe fn count_key(first: &RadixSelect, counts: u32, ql: usize, key: u32) {
    match first.bin(key) {
        // SAFETY: by the caller's contract; `e` < TQ · 256.
        Some(bin) => unsafe {
            let e = ql * 256 + bin;
            smem::red_add_u32(counts + (e / 2 * 4) as u32, 1 << (16 * (e % 2)))
        },
        None => abort(),
    }
}

/// Adds the block's counts of tile `tile` into `hist` (after a barrier).
///
/// # Safety
/// `counts` is [`load_tile`]'s; `hist` holds the tile's `TQ · 256` counts.
#[inline(always)]
unsafe fn flush_counts(counts: u32, hist: DevMut<u32>, tile: usize, tid: usize) {
    smem::sync();
    for e in (tid..TQ * 256).step_by(NT) {
        // SAFETY: by the caller's contract.
        unsafe {
            let c = smem::ld_u32(counts + (e / 2 * 4) as u32) >> (16 * (e % 2)) & 0xFFFF;
            if c != 0 {
                let (ql, bin) = (e / 256, e % 256);
                AtomicU32::from_ptr(hist.0.add((tile * TQ + ql) * 256 + bin)).fetch_add(c, Relaxed);
            }
        }
    }
}

kernel! {
    /// Keys `65 535 − distance` of an octet of database codes against one query per thread: the
    /// half-warp's 16 lanes are the tile's 16 queries (each reads its query word from shared
    /// memory; all read the same database words, one broadcast), the two halves take two
    /// octets. Eight running distances through the core's `hamming_word`, written as 16
    /// contiguous bytes per (octet, query), and counted into the first radix pass.
    fn fly_hamming_keys(a: HammingKeys {
        words: u32,
        n: u32,
        np: u32,
        nq: u32,
        bp: u32,
        octets: u32,
        db: DevPtr<Word>,
        q: DevPtr<Word>,
        keys: DevMut<u16>,
        hist: DevMut<u32>,
    }) {
        let (words, n, np, nq, bp) = (a.words as usize, a.n as usize, a.np as usize, a.nq as usize, a.bp as usize);
        let octets = a.octets as usize;
        if words >= 1024 || np % 64 != 0 || bp % 32 != 0 || octets == 0 || octets >= 8192 {
            abort();
        }
        let (tid, blk) = thread_block();
        let (tile, chunk) = split(blk, (np / 8).div_ceil(octets));
        let base = smem::base();
        let counts = load_tile(base, a.q, (tile, nq, words), tid);
        smem::sync();
        let (warp, lane) = (tid / 32, tid % 32);
        let (half, ql) = (lane / 16, lane % 16);
        let mine = base + 8 * ql as u32;
        let first = RadixSelect::new16(1);
        let (o0, o1) = (chunk * octets, (np / 8).min(chunk * octets + octets));
        let out = a.keys.0 as *mut [u32; 4];
        for o in (o0 + warp * 2 + half..o1).step_by(NT / 16) {
            let mut d = [0u32; 8];
            for w in 0..words {
                let qw = smem::ld_u64(mine + (w * TQ * 8) as u32);
                let row = a.db.0.add(w * np + o * 8) as *const Pair;
                let x = [*row, *row.add(1), *row.add(2), *row.add(3)];
                for t in 0..8 {
                    d[t] = hamming_word(d[t], x[t / 2].0[t % 2], qw);
                }
            }
            let key = |t: usize| if o * 8 + t < n { 65_535 - d[t] } else { 0 };
            let pair = |h: usize| key(2 * h) | key(2 * h + 1) << 16;
            *out.add(o * bp + tile * TQ + ql) = [pair(0), pair(1), pair(2), pair(3)];
            for t in 0..8 {
                count_key(&first, counts, ql, key(t));
            }
        }
        flush_counts(counts, a.hist, tile, tid);
    }
}

/// `c + A·B` on the binary tensor cores, where the product of a bit of `A` (16 × 256, this
/// lane's `a`) and of `B` (256 × 8, its `b`) is their AND: each of the 128 sums counts the bits
/// a row of `A` shares with a column of `B`. Fragments as PTX lays out `m16n8k256` (lane
/// `4g + t`: `a` = rows `g`, `g + 8` of bit chunks `t`, `t + 4`; `b` = column `g`, chunks `t`,
/// `t + 4`; `c` = rows `g`, `g + 8` of columns `2t`, `2t + 1`). All 32 lanes of a converged warp.
#[inline(always)]
fn mma_and_popc(c: [u32; 4], a: [u32; 4], b: [u32; 2]) -> [u32; 4] {
    let (d0, d1, d2, d3): (u32, u32, u32, u32);
    // SAFETY: register operands only; the caller's warp is converged (uniform loops).
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b0 = in(reg32) b[0], b1 = in(reg32) b[1],
            c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
            options(nomem, nostack, pure)
        );
    }
    [d0, d1, d2, d3]
}

kernel! {
    /// `fly_hamming_keys`' keys through the binary tensor cores (see the argument struct): warp
    /// `w` takes octets `w, w + 16, …` of the block's chunk; per 256 bits one `mma` of the
    /// tile's 16 queries against the octet's 8 codes, the codes' own bit counts summed beside it
    /// from the same loaded words; then the core's `hamming_from_and` per (query, code).
    fn fly_hamming_keys_mma(a: HammingKeysMma {
        words: u32,
        n: u32,
        np: u32,
        nq: u32,
        bp: u32,
        octets: u32,
        tiles: u32,
        db: DevPtr<Word>,
        q: DevPtr<Word>,
        keys: DevMut<u16>,
        hist: DevMut<u32>,
    }) {
        let (words, n, np, nq, bp) = (a.words as usize, a.n as usize, a.np as usize, a.nq as usize, a.bp as usize);
        let (octets, tiles) = (a.octets as usize, a.tiles as usize);
        if words >= 1024 || np % 64 != 0 || bp % 32 != 0 || octets == 0 || octets >= 8192 || tiles == 0 || TQ != 16 {
            abort();
        }
        let (tid, blk) = thread_block();
        // Chunk-major: the tiles of one chunk are neighbouring blocks.
        let (chunk, tile) = split(blk, tiles);
        let base = smem::base();
        let counts = load_tile(base, a.q, (tile, nq, words), tid);
        let ones = counts + (TQ * 256 / 2 * 4) as u32;
        smem::sync();
        if tid < TQ {
            let mut c = 0;
            for w in 0..words {
                c += smem::ld_u64(base + (8 * (w * TQ + tid)) as u32).count_ones();
            }
            smem::st_u32(ones + 4 * tid as u32, c);
        }
        smem::sync();
        let (warp, lane) = (tid / 32, tid % 32);
        let (g, t) = (lane / 4, lane % 4);
        let (ones_q0, ones_q1) = (smem::ld_u32(ones + 4 * g as u32), smem::ld_u32(ones + 4 * (g + 8) as u32));
        let first = RadixSelect::new16(1);
        let (o0, o1) = (chunk * octets, (np / 8).min(chunk * octets + octets));
        let db = a.db.0 as *const u32;
        let out = a.keys.0 as *mut u32;
        // Bit chunk `t` (and `t + 4`) of a 256-bit step is the low or high half of word
        // `4s + t/2` (`4s + 2 + t/2`).
        let (half, wt) = (t % 2, t / 2);
        const STEPS: usize = 4;
        for o in (o0 + warp..o1).step_by(NT / 32) {
            let (mut c, mut ones_d) = ([0u32; 4], 0u32);
            // Four 256-bit steps per round, their codes' words loaded before the first `mma`:
            // more loads in flight per warp (one step at a time left the kernel waiting on memory).
            for s0 in (0..words.div_ceil(4)).step_by(STEPS) {
                let code = |w: usize| if w < words { *db.add(2 * (w * np + o * 8 + g) + half) } else { 0 };
                let b: [[u32; 2]; STEPS] = core::array::from_fn(|i| {
                    let s = s0 + i;
                    [code(4 * s + wt), code(4 * s + 2 + wt)]
                });
                for (i, b) in b.into_iter().enumerate() {
                    let (w0, w1) = (4 * (s0 + i) + wt, 4 * (s0 + i) + 2 + wt);
                    let qa = |w: usize, qi: usize| {
                        if w < words {
                            smem::ld_u32(base + (8 * (w * TQ + qi) + 4 * half) as u32)
                        } else {
                            0
                        }
                    };
                    ones_d += b[0].count_ones() + b[1].count_ones();
                    c = mma_and_popc(c, [qa(w0, g), qa(w0, g + 8), qa(w1, g), qa(w1, g + 8)], b);
                }
            }
            // Code g's bits: the four lanes 4g..4g+3; this lane's columns are codes 2t, 2t + 1.
            ones_d += xor_lane(ones_d, 1);
            ones_d += xor_lane(ones_d, 2);
            let ones_c = [from_lane(ones_d, 8 * t as u32), from_lane(ones_d, 8 * t as u32 + 4)];
            let key = |j: usize, ones_q: u32, and: u32| {
                if o * 8 + 2 * t + j < n {
                    65_535 - hamming_from_and(ones_q, ones_c[j], and)
                } else {
                    0
                }
            };
            for (r, ones_q, k0, k1) in [(g, ones_q0, c[0], c[1]), (g + 8, ones_q1, c[2], c[3])] {
                let (k0, k1) = (key(0, ones_q, k0), key(1, ones_q, k1));
                *out.add((o * bp + tile * TQ + r) * 4 + t) = k0 | k1 << 16;
                count_key(&first, counts, r, k0);
                count_key(&first, counts, r, k1);
            }
        }
        flush_counts(counts, a.hist, tile, tid);
    }
}
