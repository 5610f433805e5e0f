//! The approximate index's CPU driver: the pseudo-hash of a batch of vectors, and the search —
//! per query, multi-probe candidates from every table, then exact re-ranking of the candidates —
//! over a rayon pool, one query per task. Every rule is the core's (`pseudo_sums`, `pseudo_key`,
//! `probe_costs`, `Probes`, `hamming`, `sq_euclidean`, `sq_euclidean_pixels`, `top_r`); this file
//! only loops (compiled again for AVX2 and AVX-512, with prefetches of the candidates' rows).
//!
//! The two stages are apart on purpose: [`candidates`] gives each query's candidate ids
//! (ascending), and re-ranking is a top-r over a subset of the codes, which is what the GPU's
//! Hamming kernels already compute for a whole database (a GPU re-rank would take the candidate
//! lists as its database rows).

use neurobits_core::flyhash::{
    activation, hamming, is_pixel, probe_costs, pseudo_key, pseudo_sums, sort_hits, sort_key, sq_euclidean,
    sq_euclidean_pixels, top_r, Probe, Probes,
};
use neurobits_core::Word;
use rayon::prelude::*;

use super::ann::Vectors;
use super::data::Matrix;
use crate::device::{simd_detected, simd_level, Simd};

/// The shape of the pseudo-hash: `tables` keys of `bits` bits, each bit pooling `pool` outputs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub tables: usize,
    pub bits: usize,
    pub pool: usize,
}

impl Shape {
    /// Projection outputs the pseudo-hash reads (the first ones).
    pub fn outputs(&self) -> usize {
        self.tables * self.bits * self.pool
    }
}

/// The centred pooled sums of every row of `x`: `rows · tables · bits` floats, table-major
/// within a row. `proj` is the projection (rows of `s` indices).
pub(crate) fn pseudo_sums_batch(shape: Shape, proj: &[u32], s: usize, x: &Matrix) -> Vec<f32> {
    let per = shape.tables * shape.bits;
    let mut out = vec![0f32; x.rows * per];
    out.par_chunks_mut(per.max(1)).enumerate().for_each_init(
        || vec![0f32; shape.outputs()],
        |act, (i, sums)| {
            let xi = x.row(i);
            for (r, a) in act.iter_mut().enumerate() {
                *a = activation(&proj[r * s..(r + 1) * s], xi);
            }
            for (t, st) in sums.chunks_mut(shape.bits).enumerate() {
                let base = t * shape.bits * shape.pool;
                pseudo_sums(shape.bits, shape.pool, |j| act[base + j], st);
            }
        },
    );
    out
}

/// What re-ranks the candidates.
pub(crate) enum Rank<'a> {
    /// Hamming distance of the full fly codes: the database's and the queries' codes, `words` each.
    Hamming { db: &'a [Word], queries: &'a [Word], words: usize },
    /// Squared Euclidean distance of the original vectors.
    Euclidean { db: &'a Vectors, queries: &'a Matrix },
}

/// The tables: for table `t`, `buckets[t << bits | key]` lists the ids in that bucket, ascending.
pub(crate) struct Tables<'a> {
    pub shape: Shape,
    pub thresholds: &'a [u32],
    pub buckets: &'a [Vec<u32>],
    pub n: usize,
}

/// Per query: the `r` best candidates as `(id, distance)`, nearest first, ties by id; and the
/// number of distinct candidates re-ranked over all queries.
pub(crate) fn search(
    tables: &Tables,
    query_sums: &[f32],
    rank: &Rank,
    r: usize,
    probes: usize,
) -> (Vec<Vec<(u32, f32)>>, u64) {
    let level = simd_level().min(simd_detected());
    let per = tables.shape.tables * tables.shape.bits;
    let heap = probes.min(1 << tables.shape.bits) + 1;
    let rows: Vec<(Vec<(u32, f32)>, u64)> = query_sums
        .par_chunks(per.max(1))
        .enumerate()
        .map_init(
            || Scratch::new(tables.n, heap),
            |sc, (q, sums)| {
                candidates(tables, sums, probes, sc);
                let hits = rerank(level, rank, q, r, sc);
                (hits, sc.cand.len() as u64)
            },
        )
        .collect();
    let total = rows.iter().map(|(_, c)| c).sum();
    (rows.into_iter().map(|(h, _)| h).collect(), total)
}

/// Every query's distinct candidate ids, ascending (as [`search`] re-ranks them), as compressed
/// rows: query `q`'s are `ids[offsets[q] .. offsets[q + 1]]`. What the GPU re-ranks.
pub(crate) fn candidates_csr(tables: &Tables, query_sums: &[f32], probes: usize) -> (Vec<u64>, Vec<u32>) {
    let per = tables.shape.tables * tables.shape.bits;
    let heap = probes.min(1 << tables.shape.bits) + 1;
    let rows: Vec<Vec<u32>> = query_sums
        .par_chunks(per.max(1))
        .enumerate()
        .map_init(
            || Scratch::new(tables.n, heap),
            |sc, (_, sums)| {
                candidates(tables, sums, probes, sc);
                sc.cand.clone()
            },
        )
        .collect();
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    offsets.push(0u64);
    let mut ids = Vec::with_capacity(rows.iter().map(Vec::len).sum());
    for r in rows {
        ids.extend_from_slice(&r);
        offsets.push(ids.len() as u64);
    }
    (offsets, ids)
}

/// The distance a re-ranking key stands for: the Hamming distance, or the squared Euclidean
/// distance whose `sort_key` it is.
pub(crate) fn distance_of(rank: &Rank, key: u32) -> f32 {
    match rank {
        Rank::Hamming { .. } => key as f32,
        Rank::Euclidean { .. } => neurobits_core::flyhash::key_value(key),
    }
}

impl Scratch {
    fn new(n: usize, heap: usize) -> Self {
        Scratch {
            seen: vec![0; n.div_ceil(64)],
            cand: Vec::new(),
            keys: Vec::new(),
            heap: vec![Probe::default(); heap],
            row: Vec::new(),
            pixels: Vec::new(),
        }
    }
}

struct Scratch {
    /// Bit `id` set once `id` is a candidate of the current query; cleared through `cand` before
    /// the next. A bit per id, not a word: each rayon split makes one, and at 10⁷ ids a 40 MB
    /// table of query stamps per split cost more page faults than the search itself (255 queries
    /// per second on 16 threads); 1.25 MB stays in L2.
    seen: Vec<u64>,
    cand: Vec<u32>,
    keys: Vec<u32>,
    heap: Vec<Probe>,
    /// A stored pixel row as floats (a query that is not all pixels).
    row: Vec<f32>,
    /// The query as pixels.
    pixels: Vec<u8>,
}

/// The query's distinct candidate ids, ascending, into `sc.cand`: the ids of the first `probes`
/// buckets of each table in probe order.
fn candidates(tables: &Tables, sums: &[f32], probes: usize, sc: &mut Scratch) {
    let Shape { bits, .. } = tables.shape;
    for &id in &sc.cand {
        sc.seen[id as usize / 64] &= !(1 << (id % 64));
    }
    sc.cand.clear();
    let mut costs = [0f32; 32];
    for (t, st) in sums.chunks(bits).enumerate() {
        let th = &tables.thresholds[t * bits..(t + 1) * bits];
        let key = pseudo_key(st, th);
        probe_costs(st, th, &mut costs[..bits]);
        for b in Probes::new(key, &costs[..bits], &mut sc.heap).take(probes) {
            for &id in &tables.buckets[t << bits | b as usize] {
                let (w, bit) = (id as usize / 64, 1u64 << (id % 64));
                if sc.seen[w] & bit == 0 {
                    sc.seen[w] |= bit;
                    sc.cand.push(id);
                }
            }
        }
    }
    // Ascending ids: the core's top_r breaks ties by position, which is then by id.
    sc.cand.sort_unstable();
}

fn rerank(level: Simd, rank: &Rank, q: usize, r: usize, sc: &mut Scratch) -> Vec<(u32, f32)> {
    let n = sc.cand.len();
    sc.keys.clear();
    match rank {
        Rank::Hamming { db, queries, words } => {
            sc.keys.resize(n, 0);
            hamming_keys(level, db, &queries[q * words..(q + 1) * words], &sc.cand, &mut sc.keys);
        }
        Rank::Euclidean { db, queries } => {
            let x = queries.row(q);
            sc.keys.resize(n, 0);
            match db {
                Vectors::Floats(v) => euclid_keys(level, Db::Floats(v), x, &sc.cand, &mut sc.keys, &mut sc.row),
                Vectors::Pixels(v) if x.iter().all(|&f| is_pixel(f)) => {
                    sc.pixels.clear();
                    sc.pixels.extend(x.iter().map(|&f| f as u8));
                    euclid_keys(level, Db::Pixels(v, &sc.pixels), x, &sc.cand, &mut sc.keys, &mut sc.row)
                }
                Vectors::Pixels(v) => euclid_keys(level, Db::Mixed(v), x, &sc.cand, &mut sc.keys, &mut sc.row),
            }
        }
    }
    let r = r.min(n);
    let mut out = Vec::with_capacity(r);
    let mut hist = [0u32; 256];
    let keys = &sc.keys;
    top_r(n, r, |i| keys[i], &mut hist, |i| out.push((sc.cand[i], keys[i])));
    sort_hits(&mut out);
    out.into_iter().map(|(id, k)| (id, distance_of(rank, k))).collect()
}

/// Hamming distances of the candidates' codes to the query's code `qc`.
fn hamming_keys(level: Simd, db: &[Word], qc: &[Word], cand: &[u32], keys: &mut [u32]) {
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found AVX-512 F/VPOPCNTDQ.
        Simd::Avx512 => unsafe { hamming_avx512(db, qc, cand, keys) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found POPCNT and AVX2.
        Simd::Avx2 => unsafe { hamming_avx2(db, qc, cand, keys) },
        _ => hamming_loop(db, qc, cand, keys),
    }
}

#[inline(always)]
fn hamming_loop(db: &[Word], qc: &[Word], cand: &[u32], keys: &mut [u32]) {
    let w = qc.len();
    for j in 0..cand.len() {
        if j + AHEAD < cand.len() {
            let id = cand[j + AHEAD] as usize;
            prefetch(&db[id * w..(id + 1) * w]);
        }
        let id = cand[j] as usize;
        keys[j] = hamming(&db[id * w..(id + 1) * w], qc);
    }
}

/// [`hamming_loop`] with POPCNT and AVX2.
///
/// # Safety
/// The CPU must support POPCNT and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
unsafe fn hamming_avx2(db: &[Word], qc: &[Word], cand: &[u32], keys: &mut [u32]) {
    hamming_loop(db, qc, cand, keys)
}

/// [`hamming_loop`] with AVX-512 VPOPCNTDQ (the compiler's choice of registers).
///
/// # Safety
/// The CPU must support AVX-512 F/VPOPCNTDQ, POPCNT and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt,avx2")]
unsafe fn hamming_avx512(db: &[Word], qc: &[Word], cand: &[u32], keys: &mut [u32]) {
    hamming_loop(db, qc, cand, keys)
}

/// The stored vectors as a re-ranking loop reads them.
#[derive(Clone, Copy)]
enum Db<'a> {
    Floats(&'a [f32]),
    /// Pixel rows, and the query as pixels.
    Pixels(&'a [u8], &'a [u8]),
    /// Pixel rows, a query that is not all pixels: each row widened to floats first.
    Mixed(&'a [u8]),
}

/// Candidates ahead of the one being measured whose rows are prefetched: the rows are scattered
/// over the database, so without it every row starts with cache misses.
const AHEAD: usize = 4;

/// Candidate distances as keys (`sort_key` of the non-negative squared distance: order kept),
/// `keys[j]` for candidate `j`. All three cases give the floats of core's `sq_euclidean` on the
/// values (see `sq_euclidean_pixels`).
fn euclid_keys(level: Simd, db: Db, x: &[f32], cand: &[u32], keys: &mut [u32], row: &mut Vec<f32>) {
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found AVX-512 F/BW.
        Simd::Avx512 => unsafe { euclid_avx512(db, x, cand, keys, row) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found AVX2.
        Simd::Avx2 => unsafe { euclid_avx2(db, x, cand, keys, row) },
        _ => euclid(db, x, cand, keys, row),
    }
}

/// Plain loops only (no iterator adaptors that might not inline), so that the whole loop is
/// compiled with the caller's target features.
#[inline(always)]
fn euclid(db: Db, x: &[f32], cand: &[u32], keys: &mut [u32], row: &mut Vec<f32>) {
    let d = x.len();
    row.resize(d, 0.0);
    for j in 0..cand.len() {
        if j + AHEAD < cand.len() {
            let id = cand[j + AHEAD] as usize;
            match db {
                Db::Floats(v) => prefetch(&v[id * d..(id + 1) * d]),
                Db::Pixels(v, _) | Db::Mixed(v) => prefetch(&v[id * d..(id + 1) * d]),
            }
        }
        let id = cand[j] as usize;
        let dist = match db {
            Db::Floats(v) => sq_euclidean(&v[id * d..(id + 1) * d], x),
            Db::Pixels(v, p) => sq_euclidean_pixels(&v[id * d..(id + 1) * d], p),
            Db::Mixed(v) => {
                for i in 0..d {
                    row[i] = v[id * d + i] as f32;
                }
                sq_euclidean(row, x)
            }
        };
        keys[j] = sort_key(dist);
    }
}

/// Asks for every cache line of `s` (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let (p, bytes) = (s.as_ptr() as *const i8, std::mem::size_of_val(s));
        let mut at = 0;
        while at < bytes {
            // SAFETY: a prefetch of an address inside `s`; it never faults or changes memory.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.add(at)) };
            at += 64;
        }
    }
}

/// [`euclid`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn euclid_avx2(db: Db, x: &[f32], cand: &[u32], keys: &mut [u32], row: &mut Vec<f32>) {
    euclid(db, x, cand, keys, row)
}

/// [`euclid`] compiled for AVX-512 (sixteen `f32` or `u32` lanes in one register).
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn euclid_avx512(db: Db, x: &[f32], cand: &[u32], keys: &mut [u32], row: &mut Vec<f32>) {
    euclid(db, x, cand, keys, row)
}
