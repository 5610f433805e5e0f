//! The approximate FlyHash index re-ranked on the GPU ≡ the CPU, ids and distances bit for bit:
//! on one GPU and with its ids sharded over every GPU here (1, 2, … of them), for Hamming,
//! pixel (bytes), mixed (pixel rows, non-pixel queries) and float re-ranking, from one probe to
//! every bucket; and the device re-ranking itself on hand-made candidate lists (empty lists, k
//! above a list's length, n not a multiple of 64). Needs a CUDA GPU (`make gpu-test`).

use neurobits::device::Target;
use neurobits::flyhash::ann::{AnnConfig, AnnNeighbours, FlyAnnIndex, Rerank};
use neurobits::flyhash::ann_gpu::AnnDevice;
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits_core::flyhash::{hamming, sort_hits, sort_key, sq_euclidean, sq_euclidean_pixels};
use neurobits_core::prng::{below, draw};
use neurobits_gpu_host::flyhash::ann::{AnnQueries, AnnRows, Candidates, ShardedRows};
use neurobits_gpu_host::Gpu;
use std::sync::Arc;

/// `rows` vectors of dimension `d` around 20 centres, values 0..=255 (pixels) plus `offset`.
fn clustered(rows: usize, d: usize, seed: u64, offset: f32) -> Matrix {
    let mut data = Vec::with_capacity(rows * d);
    for i in 0..rows {
        let c = below(draw(seed, i as u64), 20);
        for j in 0..d {
            let centre = below(draw(77, c * 1000 + j as u64), 200) as i64;
            let noise = below(draw(seed ^ 0x55, (i * d + j) as u64), 121) as i64 - 60;
            data.push((centre + noise).clamp(0, 255) as f32 + offset);
        }
    }
    Matrix { rows, cols: d, data }
}

fn same(a: &AnnNeighbours, b: &AnnNeighbours, what: &str) {
    assert_eq!(a.ids, b.ids, "{what}: ids differ");
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.distances), bits(&b.distances), "{what}: distances differ");
    assert_eq!(a.candidates, b.candidates, "{what}: candidates differ");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn approximate_index_on_gpus_equals_the_cpu() {
    let count = Gpu::count();
    assert!(count >= 1, "a CUDA GPU");
    if count < 2 {
        println!("only {count} GPU here: sharding checked over 1 GPU");
    }
    let hash = FlyHashConfig { code_bits: Some(512), winners: Some(32), ones_per_row: Some(4), ..Default::default() };
    let mut checked = 0;
    // (rows, d, offset of the vectors, offset of the queries, rerank, key bits)
    for (n, d, xo, qo, rerank, bits) in [
        (1237, 40, 0.0, 0.0, Rerank::Hamming, 8),
        (1237, 40, 0.0, 0.0, Rerank::Euclidean, 8),   // pixels as bytes
        (999, 33, 0.0, 0.5, Rerank::Euclidean, 6),    // pixel rows, non-pixel queries
        (1500, 20, 0.25, 0.25, Rerank::Euclidean, 7), // floats
        (3, 16, 0.0, 0.0, Rerank::Euclidean, 4),      // fewer ids than GPUs
    ] {
        let x = clustered(n, d, 11, xo);
        let q = clustered(301, d, 12, qo);
        let ann = AnnConfig { tables: 4, bits, pool: 4, probes: 1, rerank };
        let mut cpu = FlyAnnIndex::new(hash.clone(), ann, d).unwrap().with_device(Target::CPU);
        cpu.add(&x).unwrap();
        for probes in [1, 3, 1 << bits] {
            for k in [1, 10, 64] {
                let want = cpu.search_probes(&q, k, probes).unwrap();
                let what = format!("n={n} d={d} {rerank:?} probes={probes} k={k}");
                let one = cpu.clone().with_device(Target::Gpu(0));
                same(&one.search_probes(&q, k, probes).unwrap(), &want, &format!("{what}, one GPU"));
                for g in 1..=count {
                    let sharded = cpu.clone().with_ann_device(AnnDevice::Gpus(Some(g)));
                    same(&sharded.search_probes(&q, k, probes).unwrap(), &want, &format!("{what}, {g} GPUs"));
                }
                checked += 1;
            }
        }
    }
    println!("{checked} settings: one GPU and 1..={count} GPUs equal the CPU (ids, distances, candidates)");
}

/// The CPU's key of (query, row).
type Key<'a> = Box<dyn Fn(usize, usize) -> u32 + 'a>;

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_rerank_handles_empty_lists_and_short_ones() {
    let gpus: Vec<Arc<Gpu>> = (0..Gpu::count()).map(|i| Arc::new(Gpu::open(i).unwrap())).collect();
    assert!(!gpus.is_empty(), "a CUDA GPU");
    let (n, d, words, nq) = (1000usize, 24usize, 3usize, 40usize);
    let bytes: Vec<u8> = (0..n * d).map(|i| below(draw(5, i as u64), 256) as u8).collect();
    let floats: Vec<f32> = (0..n * d).map(|i| below(draw(6, i as u64), 1000) as f32 / 7.0).collect();
    let codes: Vec<u64> = (0..n * words).map(|i| draw(7, i as u64)).collect();
    let qb: Vec<f32> = (0..nq * d).map(|i| below(draw(8, i as u64), 256) as f32).collect();
    let qf: Vec<f32> = (0..nq * d).map(|i| below(draw(9, i as u64), 1000) as f32 / 7.0).collect();
    let qc: Vec<u64> = (0..nq * words).map(|i| draw(10, i as u64)).collect();
    // Query q's candidates: q·7 distinct ascending ids (q = 0: none), some lists shorter than k.
    let mut offsets = vec![0u64];
    let mut ids = Vec::new();
    for qi in 0..nq {
        let mut c: Vec<u32> = (0..qi * 7).map(|j| below(draw(11, (qi * 1000 + j) as u64), n as u64) as u32).collect();
        c.sort_unstable();
        c.dedup();
        ids.extend(c);
        offsets.push(ids.len() as u64);
    }
    let cand = Candidates { offsets: &offsets, ids: &ids };
    let cpu = |key: &dyn Fn(usize, usize) -> u32, r: usize| -> Vec<Vec<(u32, u32)>> {
        (0..nq)
            .map(|qi| {
                let mut v: Vec<(u32, u32)> = ids[offsets[qi] as usize..offsets[qi + 1] as usize]
                    .iter()
                    .map(|&id| (id, key(qi, id as usize)))
                    .collect();
                sort_hits(&mut v);
                v.truncate(r);
                v
            })
            .collect()
    };
    for r in [1, 5, 300] {
        let cases: [(AnnRows, AnnQueries, Key); 3] = [
            (
                AnnRows::Codes { words, codes: &codes },
                AnnQueries::Codes(&qc),
                Box::new(|q, i| hamming(&codes[i * words..(i + 1) * words], &qc[q * words..(q + 1) * words])),
            ),
            (
                AnnRows::Pixels { d, bytes: &bytes },
                AnnQueries::Vectors(&qb),
                Box::new(|q, i| {
                    let qp: Vec<u8> = qb[q * d..(q + 1) * d].iter().map(|&v| v as u8).collect();
                    sort_key(sq_euclidean_pixels(&bytes[i * d..(i + 1) * d], &qp))
                }),
            ),
            (
                AnnRows::Floats { d, values: &floats },
                AnnQueries::Vectors(&qf),
                Box::new(|q, i| sort_key(sq_euclidean(&floats[i * d..(i + 1) * d], &qf[q * d..(q + 1) * d]))),
            ),
        ];
        for (rows, queries, key) in cases {
            let want = cpu(&*key, r);
            assert!(want[0].is_empty() && want.iter().any(|h| h.len() < r.min(300)));
            for g in 1..=gpus.len() {
                let held = ShardedRows::upload(&gpus[..g], &rows).unwrap();
                let got = held.rerank(&queries, &cand, r).unwrap();
                assert_eq!(got, want, "{rows:?} r={r} on {g} GPUs", rows = rows.row());
            }
        }
    }
    println!("device re-ranking equals the core's on hand-made candidate lists, 1..={} GPUs", gpus.len());
}
