//! Top-r Hamming neighbours on the CPU: every query–code distance (the core's `hamming`, or the
//! same popcount of XOR in AVX-512 registers), then the core's `top_r` per query, over a rayon
//! pool.
//!
//! Speed comes from reuse, not from a different rule: queries are taken eight at a time and the
//! database in tiles that fit the L2 cache, so each database word is loaded once per eight
//! queries (the eight queries' words stay in L1), instead of once per query. The version of the
//! inner loop is chosen at run time ([`crate::device::simd_level`]); all give the same integers.

use neurobits_core::flyhash::{hamming, sort_hits, top_r as core_top_r};
use neurobits_core::Word;
use rayon::prelude::*;

use crate::device::{simd_detected, simd_level, Simd};

/// Queries that share one pass over a database tile.
const BLOCK: usize = 8;
/// Bytes of database codes per tile (about half of a 1 MiB L2).
const TILE_BYTES: usize = 512 << 10;
/// Bytes of distances a task holds (its queries × the database), bounding memory per thread.
const TASK_BYTES: usize = 8 << 20;

/// For each query code, the `r` nearest database codes as `(index, distance)`, nearest first,
/// ties by index. `words` is the code length in words.
///
/// ```
/// let db = [0b0000u64, 0b0111, 0b0001];
/// let hits = neurobits::flyhash::search::top_r(&db, &[0b0011], 1, 2);
/// assert_eq!(hits, [vec![(1, 1), (2, 1)]]);
/// ```
pub fn top_r(db: &[Word], queries: &[Word], words: usize, r: usize) -> Vec<Vec<(u32, u32)>> {
    top_r_on(simd_level(), db, queries, words, r)
}

/// [`top_r`] on a chosen instruction set (capped at what the CPU has), for tests and benchmarks
/// that compare the versions.
///
/// ```
/// use neurobits::{device::Simd, flyhash::search::top_r_on};
/// let db = [0b0000u64, 0b0111, 0b0001];
/// assert_eq!(top_r_on(Simd::Portable, &db, &[0b0011], 1, 2), top_r_on(Simd::Avx512, &db, &[0b0011], 1, 2));
/// ```
pub fn top_r_on(level: Simd, db: &[Word], queries: &[Word], words: usize, r: usize) -> Vec<Vec<(u32, u32)>> {
    let n = db.len() / words.max(1);
    let r = r.min(n);
    let level = level.min(simd_detected());
    // Queries per task: a multiple of BLOCK whose distance rows fit TASK_BYTES.
    let group = (TASK_BYTES / (4 * n.max(1))).clamp(BLOCK, 8 * BLOCK) / BLOCK * BLOCK;
    let parts: Vec<Vec<Vec<(u32, u32)>>> = queries
        .par_chunks(group * words.max(1))
        .map(|qs| {
            let g = qs.len() / words.max(1);
            let mut dist = vec![0u32; g * n];
            distances(level, db, qs, words, n, &mut dist);
            let mut hist = [0u32; 256];
            dist.chunks(n.max(1))
                .take(g)
                .map(|row| {
                    let mut out = Vec::with_capacity(r);
                    core_top_r(n, r, |i| row[i], &mut hist, |i| out.push((i as u32, row[i])));
                    sort_hits(&mut out);
                    out
                })
                .collect()
        })
        .collect();
    parts.into_iter().flatten().collect()
}

/// `dist[j·n + i]` = Hamming distance of query `j` of `qs` to database code `i`.
fn distances(level: Simd, db: &[Word], qs: &[Word], words: usize, n: usize, dist: &mut [u32]) {
    let tile = (TILE_BYTES / (8 * words.max(1))).max(1);
    let g = qs.len() / words.max(1);
    for t0 in (0..n).step_by(tile) {
        let t1 = (t0 + tile).min(n);
        for j0 in (0..g).step_by(BLOCK) {
            let j1 = (j0 + BLOCK).min(g);
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` ≤ `simd_detected()`, which found AVX-512 F/VPOPCNTDQ.
                Simd::Avx512 => unsafe { block_avx512(db, qs, words, n, t0..t1, j0..j1, dist) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` ≤ `simd_detected()`, which found POPCNT and AVX2.
                Simd::Avx2 => unsafe { block_avx2(db, qs, words, n, t0..t1, j0..j1, dist) },
                _ => block(db, qs, words, n, t0..t1, j0..j1, dist),
            }
        }
    }
}

type Span = std::ops::Range<usize>;

/// Distances of queries `js` to codes `codes`: the core's `hamming`, code-major so that each
/// code is read once for the block.
#[inline(always)]
fn block(db: &[Word], qs: &[Word], words: usize, n: usize, codes: Span, js: Span, dist: &mut [u32]) {
    for i in codes {
        let c = &db[i * words..(i + 1) * words];
        for j in js.clone() {
            dist[j * n + i] = hamming(c, &qs[j * words..(j + 1) * words]);
        }
    }
}

/// [`block`] compiled with POPCNT and AVX2.
///
/// # Safety
/// The CPU must support POPCNT and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
unsafe fn block_avx2(db: &[Word], qs: &[Word], words: usize, n: usize, codes: Span, js: Span, dist: &mut [u32]) {
    block(db, qs, words, n, codes, js, dist)
}

/// [`block`] in AVX-512: 512 bits of a code XOR the same bits of up to eight queries,
/// `vpopcntq`, added into one accumulator per query; the last partial chunk by a masked load
/// (zeros XOR zeros count nothing). Integer sums, so the result equals [`block`]'s.
///
/// # Safety
/// The CPU must support AVX-512 F and VPOPCNTDQ.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt,avx2")]
unsafe fn block_avx512(db: &[Word], qs: &[Word], words: usize, n: usize, codes: Span, js: Span, dist: &mut [u32]) {
    use std::arch::x86_64::*;
    let b = js.len();
    if b < BLOCK {
        // A last, partial block of queries: not worth a register layout of its own.
        return block(db, qs, words, n, codes, js, dist);
    }
    let (full, tail) = (words / 8, words % 8);
    let mask: __mmask8 = ((1u16 << tail) - 1) as u8;
    let q: [*const i64; BLOCK] = std::array::from_fn(|k| qs[(js.start + k) * words..].as_ptr() as *const i64);
    for i in codes {
        let c = db[i * words..(i + 1) * words].as_ptr() as *const i64;
        let mut acc = [_mm512_setzero_si512(); BLOCK];
        for w in 0..full {
            // SAFETY: word 8w+7 < words: inside the code and inside each query.
            let x = unsafe { _mm512_loadu_epi64(c.add(8 * w)) };
            for k in 0..BLOCK {
                let y = unsafe { _mm512_loadu_epi64(q[k].add(8 * w)) };
                acc[k] = _mm512_add_epi64(acc[k], _mm512_popcnt_epi64(_mm512_xor_si512(x, y)));
            }
        }
        if tail > 0 {
            // SAFETY: the mask reads words 8·full .. words − 1 only.
            let x = unsafe { _mm512_maskz_loadu_epi64(mask, c.add(8 * full)) };
            for k in 0..BLOCK {
                let y = unsafe { _mm512_maskz_loadu_epi64(mask, q[k].add(8 * full)) };
                acc[k] = _mm512_add_epi64(acc[k], _mm512_popcnt_epi64(_mm512_xor_si512(x, y)));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            dist[(js.start + k) * n + i] = _mm512_reduce_add_epi64(*a) as u32;
        }
    }
}
