//! What `flyhash ann-bench` measures on: an ann-benchmarks HDF5 file (library feature `ann`),
//! a folder of Fashion-MNIST IDX files (any build: the GPU machine's binaries have no libhdf5),
//! or a synthetic set made in memory (`--synthetic N`, the 10⁷-vector sharded run). For the last
//! two the true neighbours are found here by brute force ([`super::ann_truth`], the order
//! `flyhash ann-data` stores), for the first `--truth-queries` queries.
//!
//! **The synthetic set** (deterministic, from the portable PRNG, `neurobits_core::prng`):
//! [`SYNTH_CENTRES`] centres of `D` coordinates uniform in 0..=255 (stream `stream_key(seed, 40)`);
//! vector `i` picks centre `below(draw(key, i·(D+1)), 1024)` and adds to each coordinate the sum of
//! four uniform integers in −16..=16 (the four 16-bit fields of draw `i·(D+1) + 1 + j`, each
//! mapped by `(field · 33) >> 16 − 16`: a bell of σ ≈ 19), clamped to 0..=255. Train vectors use
//! stream 41, queries stream 42. Integers 0..255, so the index keeps them as bytes.

use rayon::prelude::*;
use std::path::Path;

use super::data::Matrix;
use crate::io::read::Table;

/// The points, the queries and the true neighbours of the first queries (`neighbors.len()` of
/// them; recall is measured over those, speed over all queries).
pub struct AnnData {
    /// The points indexed.
    pub train: Matrix,
    /// The queries.
    pub test: Matrix,
    /// The true neighbours of the first queries, nearest first.
    pub neighbors: Vec<Vec<u32>>,
    /// Where it came from, for the log: a file, a folder or the generator's settings.
    pub source: String,
}

/// Centres of the synthetic set.
pub const SYNTH_CENTRES: u64 = 1024;

/// Rows `0..rows` of the synthetic set of stream `domain` (see the module's notes).
pub fn synthetic(rows: usize, d: usize, seed: u64, domain: u64) -> Matrix {
    use neurobits_core::prng::{below, draw, stream_key};
    let (ck, key) = (stream_key(seed, 40), stream_key(seed, domain));
    let centres: Vec<u8> = (0..SYNTH_CENTRES as usize * d).map(|j| below(draw(ck, j as u64), 256) as u8).collect();
    let mut data = vec![0f32; rows * d];
    data.par_chunks_mut(d.max(1)).enumerate().for_each(|(i, row)| {
        let at = i as u64 * (d as u64 + 1);
        let c = below(draw(key, at), SYNTH_CENTRES) as usize;
        for (j, v) in row.iter_mut().enumerate() {
            let r = draw(key, at + 1 + j as u64);
            // The draw's four 16-bit fields, each mapped to 0..=32 by (field · 33) >> 16, less 16.
            let noise: i64 = (0..4).map(|f| ((((r >> (16 * f)) & 0xFFFF) * 33) >> 16) as i64 - 16).sum();
            *v = (centres[c * d + j] as i64 + noise).clamp(0, 255) as f32;
        }
    });
    Matrix { rows, cols: d, data }
}

/// The true `k` nearest train rows of the first `truth` queries (the train rows are lent to the
/// brute force, not copied: 5 GB at 10⁷ × 128).
fn truth(train: &mut Matrix, test: &Matrix, truth: usize, k: usize) -> Vec<Vec<u32>> {
    let q = truth.min(test.rows);
    let t = Table { rows: train.rows, cols: train.cols, data: std::mem::take(&mut train.data) };
    let queries = Table { rows: q, cols: test.cols, data: test.data[..q * test.cols].to_vec() };
    let (ids, _) = super::ann_truth::exact_neighbours(&t, &queries, k);
    train.data = t.data;
    (0..q).map(|i| ids.row(i).iter().map(|&x| x as u32).collect()).collect()
}

/// Reads or makes the bench's data (see the module's notes). `truth_queries`: `None` for all.
pub fn load(
    input: &Path,
    generate: Option<(usize, usize, usize, u64)>,
    truth_queries: Option<usize>,
    k: usize,
) -> anyhow::Result<AnnData> {
    if let Some((n, d, queries, seed)) = generate {
        crate::io::memory::ensure_fits("the synthetic set", (n as u128 + queries as u128) * d as u128 * 4)?;
        let (mut train, test) = (synthetic(n, d, seed, 41), synthetic(queries, d, seed, 42));
        let neighbors = truth(&mut train, &test, truth_queries.unwrap_or(queries), k);
        let source = format!("synthetic n={n} d={d} queries={queries} seed={seed}");
        return Ok(AnnData { train, test, neighbors, source });
    }
    if input.is_dir() {
        let read = |names: [&str; 2]| -> anyhow::Result<Matrix> {
            let p = names.iter().map(|n| input.join(n)).find(|p| p.exists()).unwrap_or_else(|| input.join(names[0]));
            super::data::read(&p)
        };
        let mut train = read(["train-images-idx3-ubyte.gz", "train-images-idx3-ubyte"])?;
        let test = read(["t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte"])?;
        if train.cols != test.cols {
            anyhow::bail!(
                "{}: train and test images differ in size ({} and {})",
                input.display(),
                train.cols,
                test.cols
            );
        }
        let neighbors = truth(&mut train, &test, truth_queries.unwrap_or(test.rows), k);
        return Ok(AnnData { train, test, neighbors, source: format!("{} (IDX)", input.display()) });
    }
    hdf5(input, truth_queries)
}

#[cfg(feature = "ann")]
fn hdf5(path: &Path, truth_queries: Option<usize>) -> anyhow::Result<AnnData> {
    let d = crate::io::ann::read(path)?;
    let m = |t: Table<f32>| Matrix { rows: t.rows, cols: t.cols, data: t.data };
    let q = truth_queries.unwrap_or(d.neighbors.rows).min(d.neighbors.rows);
    // `read` checked every id against the training rows (non-negative, in range).
    let neighbors = (0..q).map(|i| d.neighbors.row(i).iter().map(|&x| x as u32).collect()).collect();
    Ok(AnnData { train: m(d.train), test: m(d.test), neighbors, source: path.display().to_string() })
}

#[cfg(not(feature = "ann"))]
fn hdf5(path: &Path, _: Option<usize>) -> anyhow::Result<AnnData> {
    Err(crate::Error::input(
        path.display(),
        "this binary reads no HDF5 (built without the `ann` feature): pass a folder of Fashion-MNIST IDX files or --synthetic",
    )
    .into())
}
