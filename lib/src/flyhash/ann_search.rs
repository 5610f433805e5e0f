//! The approximate index's CPU driver: the pseudo-hash of a batch of vectors, and the search —
//! per query, multi-probe candidates from every table, then exact re-ranking of the candidates —
//! over a rayon pool, one query per task. Every rule is the core's (`pseudo_sums`, `pseudo_key`,
//! `probe_costs`, `Probes`, `hamming`, `sq_euclidean`, `top_r`); this file only loops.
//!
//! The two stages are apart on purpose: [`candidates`] gives each query's candidate ids
//! (ascending), and re-ranking is a top-r over a subset of the codes, which is what the GPU's
//! Hamming kernels already compute for a whole database (a GPU re-rank would take the candidate
//! lists as its database rows).

use neurobits_core::flyhash::{
    activation, hamming, probe_costs, pseudo_key, pseudo_sums, sort_hits, sort_key, sq_euclidean, top_r, Probe, Probes,
};
use neurobits_core::Word;
use rayon::prelude::*;

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
    /// Squared Euclidean distance of the original vectors (`d` floats each).
    Euclidean { db: &'a [f32], queries: &'a Matrix },
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
            || Scratch {
                stamp: vec![0; tables.n],
                cand: Vec::new(),
                keys: Vec::new(),
                heap: vec![Probe::default(); heap],
            },
            |sc, (q, sums)| {
                candidates(tables, sums, probes, q as u32 + 1, sc);
                let hits = rerank(level, rank, q, r, sc);
                (hits, sc.cand.len() as u64)
            },
        )
        .collect();
    let total = rows.iter().map(|(_, c)| c).sum();
    (rows.into_iter().map(|(h, _)| h).collect(), total)
}

struct Scratch {
    /// `stamp[id] == query + 1` once `id` is a candidate of this query (no clearing per query).
    stamp: Vec<u32>,
    cand: Vec<u32>,
    keys: Vec<u32>,
    heap: Vec<Probe>,
}

/// The query's distinct candidate ids, ascending, into `sc.cand`: the ids of the first `probes`
/// buckets of each table in probe order.
fn candidates(tables: &Tables, sums: &[f32], probes: usize, mark: u32, sc: &mut Scratch) {
    let Shape { bits, .. } = tables.shape;
    sc.cand.clear();
    let mut costs = [0f32; 32];
    for (t, st) in sums.chunks(bits).enumerate() {
        let th = &tables.thresholds[t * bits..(t + 1) * bits];
        let key = pseudo_key(st, th);
        probe_costs(st, th, &mut costs[..bits]);
        for b in Probes::new(key, &costs[..bits], &mut sc.heap).take(probes) {
            for &id in &tables.buckets[t << bits | b as usize] {
                if sc.stamp[id as usize] != mark {
                    sc.stamp[id as usize] = mark;
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
            let qc = &queries[q * words..(q + 1) * words];
            sc.keys.extend(sc.cand.iter().map(|&id| {
                let id = id as usize;
                hamming(&db[id * words..(id + 1) * words], qc)
            }));
        }
        Rank::Euclidean { db, queries } => euclid_keys(level, db, queries.row(q), &sc.cand, &mut sc.keys),
    }
    let r = r.min(n);
    let mut out = Vec::with_capacity(r);
    let mut hist = [0u32; 256];
    let keys = &sc.keys;
    top_r(n, r, |i| keys[i], &mut hist, |i| out.push((sc.cand[i], keys[i])));
    sort_hits(&mut out);
    let value = |k: u32| match rank {
        Rank::Hamming { .. } => k as f32,
        Rank::Euclidean { .. } => neurobits_core::flyhash::key_value(k),
    };
    out.into_iter().map(|(id, k)| (id, value(k))).collect()
}

/// Candidate distances as keys (`sort_key` of the non-negative squared distance: order kept).
fn euclid_keys(level: Simd, db: &[f32], x: &[f32], cand: &[u32], keys: &mut Vec<u32>) {
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found AVX-512 F.
        Simd::Avx512 => unsafe { euclid_avx512(db, x, cand, keys) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` ≤ `simd_detected()`, which found AVX2.
        Simd::Avx2 => unsafe { euclid_avx2(db, x, cand, keys) },
        _ => euclid(db, x, cand, keys),
    }
}

#[inline(always)]
fn euclid(db: &[f32], x: &[f32], cand: &[u32], keys: &mut Vec<u32>) {
    let d = x.len();
    keys.extend(cand.iter().map(|&id| sort_key(sq_euclidean(&db[id as usize * d..(id as usize + 1) * d], x))));
}

/// [`euclid`] compiled for AVX2 (the core's sixteen lanes in two 256-bit registers).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn euclid_avx2(db: &[f32], x: &[f32], cand: &[u32], keys: &mut Vec<u32>) {
    euclid(db, x, cand, keys)
}

/// [`euclid`] compiled for AVX-512 (the sixteen lanes in one register).
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn euclid_avx512(db: &[f32], x: &[f32], cand: &[u32], keys: &mut Vec<u32>) {
    euclid(db, x, cand, keys)
}
