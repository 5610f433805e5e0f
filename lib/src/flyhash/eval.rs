//! Fly hashing vs SimHash on Fashion-MNIST (Dasgupta et al. 2017's comparison): mean precision of
//! the top-100 Hamming neighbours against the true 100 Euclidean nearest neighbours.

use anyhow::{bail, Result};
use neurobits_core::flyhash::{kth_largest, select, sort_key, FlyParams};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

use super::data::{read, Matrix};
use super::{cpu, search, simhash};
use crate::io::atomic::write_string;
use crate::plot::{line_chart, Labels, Series};
use crate::progress::bar;

/// Scales pixels to [0, 1] and centres each image on its own mean (SimHash's hyperplanes pass
/// through the origin, so both methods see centred data).
pub fn preprocess(x: &mut Matrix) {
    x.data.par_chunks_mut(x.cols).for_each(|row| {
        let mean = row.iter().map(|v| v / 255.0).sum::<f32>() / row.len() as f32;
        for v in row.iter_mut() {
            *v = *v / 255.0 - mean;
        }
    });
}

/// The `n` nearest rows of `db` to each query by Euclidean distance, ties by index;
/// `done` is called after each query.
pub fn euclidean_nn(db: &Matrix, q: &Matrix, n: usize, done: impl Fn() + Sync) -> Vec<Vec<u32>> {
    let norms: Vec<f32> = (0..db.rows).into_par_iter().map(|i| db.row(i).iter().map(|v| v * v).sum()).collect();
    q.data
        .par_chunks(q.cols)
        .map_init(
            || vec![0f32; db.rows],
            |d2, qi| {
                for (i, d) in d2.iter_mut().enumerate() {
                    let dot: f32 = db.row(i).iter().zip(qi).map(|(a, b)| a * b).sum();
                    *d = norms[i] - 2.0 * dot; // |q|² is the same for every row
                }
                let key = |i: usize| sort_key(-d2[i]);
                let (t, above) = kth_largest(db.rows, n, key, &mut [0; 256]);
                let mut out = Vec::with_capacity(n);
                select(db.rows, n, key, t, above, |i| out.push(i as u32));
                done();
                out
            },
        )
        .collect()
}

fn precision(truth: &[Vec<u32>], found: &[Vec<(u32, u32)>]) -> f64 {
    let total: usize = truth.iter().zip(found).map(|(t, f)| f.iter().filter(|(i, _)| t.contains(i)).count()).sum();
    total as f64 / truth.iter().map(|t| t.len()).sum::<usize>().max(1) as f64
}

#[derive(Serialize, Debug, Clone)]
/// One point of the FlyHash vs SimHash comparison.
pub struct EvalRow {
    /// Winners per code k.
    pub k: u32,
    /// FlyHash code length.
    pub flyhash_m: u32,
    /// FlyHash ones per projection row.
    pub flyhash_s: u32,
    /// FlyHash precision at this k.
    pub flyhash_precision: f64,
    /// SimHash code length in bits (= k).
    pub simhash_bits: u32,
    /// SimHash precision at this k.
    pub simhash_precision: f64,
}

/// Runs the comparison; writes eval.csv, eval.json, eval.svg into `out`.
pub fn run(data: &Path, queries: usize, ks: &[u32], neighbours: usize, seed: u64, out: &Path) -> Result<Vec<EvalRow>> {
    let mut train = read(&data.join("train-images-idx3-ubyte.gz"))?;
    let mut test = read(&data.join("t10k-images-idx3-ubyte.gz"))?;
    if train.cols != test.cols {
        bail!("train and test images differ in size ({} vs {})", train.cols, test.cols);
    }
    if queries == 0 || queries > test.rows {
        bail!("--queries must be in 1..={}", test.rows);
    }
    test.rows = queries;
    test.data.truncate(queries * test.cols);
    preprocess(&mut train);
    preprocess(&mut test);
    let d = train.cols as u32;
    // Progress in millions of elementary operations (multiply-adds, gathered adds, 64-bit
    // popcounts), so that the bar moves with the work: the exact neighbours dominate.
    let (n, q, dd) = (train.rows as u64, queries as u64, d as u64);
    let s = (d as f32 * 0.1).round() as u32;
    let fly_ops = |k: u64| (n + q) * 20 * k * s as u64 + q * n * (20 * k).div_ceil(64);
    let sim_ops = |k: u64| (n + q) * k * dd + q * n * k.div_ceil(64);
    let total = q * n * dd + ks.iter().map(|&k| fly_ops(k as u64) + sim_ops(k as u64)).sum::<u64>();
    let pb = bar(total.div_ceil(1_000_000), "evaluating (Mops)");
    let per_query = std::sync::atomic::AtomicU64::new(0);
    let truth = euclidean_nn(&train, &test, neighbours, || {
        let before = per_query.fetch_add(n * dd, std::sync::atomic::Ordering::Relaxed);
        pb.inc((before + n * dd) / 1_000_000 - before / 1_000_000);
    });
    let mut rows = Vec::new();
    for &k in ks {
        let p = FlyParams::new(d, 20 * k, s, k, seed)?;
        let proj = cpu::projection(&p);
        let (db, q) = (cpu::hash(&p, &proj, &train, cpu::Wta::Exact), cpu::hash(&p, &proj, &test, cpu::Wta::Exact));
        let fly = precision(&truth, &search::top_r(&db, &q, p.code_words(), neighbours));
        pb.inc(fly_ops(k as u64) / 1_000_000);
        let sp = simhash::projection(k as usize, train.cols, seed);
        let (db, q) = (simhash::hash(&sp, k as usize, &train), simhash::hash(&sp, k as usize, &test));
        let sim = precision(&truth, &search::top_r(&db, &q, (k as usize).div_ceil(64), neighbours));
        pb.inc(sim_ops(k as u64) / 1_000_000);
        rows.push(EvalRow {
            k,
            flyhash_m: p.m,
            flyhash_s: s,
            flyhash_precision: fly,
            simhash_bits: k,
            simhash_precision: sim,
        });
    }
    pb.finish_and_clear();
    std::fs::create_dir_all(out)?;
    let mut csv = String::from("k,flyhash_m,flyhash_s,flyhash_precision,simhash_bits,simhash_precision\n");
    for r in &rows {
        csv += &format!(
            "{},{},{},{:.4},{},{:.4}\n",
            r.k, r.flyhash_m, r.flyhash_s, r.flyhash_precision, r.simhash_bits, r.simhash_precision
        );
    }
    write_string(&out.join("eval.csv"), &csv)?;
    crate::io::json::write(&out.join("eval.json"), &rows)?;
    let series = vec![
        Series::new("FlyHash (m = 20k)", rows.iter().map(|r| (r.k as f64, r.flyhash_precision)).collect()),
        Series::new("SimHash (k bits)", rows.iter().map(|r| (r.k as f64, r.simhash_precision)).collect()),
    ];
    let title =
        format!("Fashion-MNIST: precision of top-{neighbours} Hamming vs Euclidean neighbours ({queries} queries)");
    line_chart(
        &out.join("eval.svg"),
        &Labels { title: &title, x: "k (winners / SimHash bits)", y: "mean precision" },
        &series,
        false,
    )?;
    Ok(rows)
}
