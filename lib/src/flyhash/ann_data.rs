//! `neurobits flyhash ann-data`: the ann-benchmarks file of a data set ([`crate::io::ann`]) built
//! offline from its IDX files, as ann-benchmarks builds `fashion-mnist-784-euclidean.hdf5`:
//! `train` and `test` as `float32` pixels (0–255, not rescaled), `neighbors` the 100 true
//! Euclidean neighbours of each query by exact brute force, `distances` theirs.
//!
//! Distances are exact where the data allows: each squared distance is summed in `f64` from
//! the `f32` values in one fixed order (column `j` into partial sum `j mod 8`, the eight partial
//! sums added pairwise: `((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))`), the same on every instruction
//! set (no fused multiply-add). For integer pixels every partial sum is an integer below 2⁵³,
//! so the squared distances are exact and the order of the neighbours is the true one; ties
//! go to the lower `train` row. The stored distance is `sqrt` of that sum in `f64`, rounded
//! once to `f32` (ann-benchmarks stores the Euclidean distance, not its square).

use rayon::prelude::*;
use std::path::PathBuf;

use crate::device::{simd_detected, simd_level, Simd};
use crate::io::ann::{self, AnnData};
use crate::io::read::Table;
use crate::{Error, Result};

/// `flyhash ann-data`: an ann-benchmarks HDF5 file from IDX train and test images.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AnnDataConfig {
    /// The points searched: an IDX file (gzipped or not), e.g. Fashion-MNIST's
    /// `train-images-idx3-ubyte.gz`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub train_images: PathBuf,
    /// The queries: an IDX file with as many pixels per image, e.g. `t10k-images-idx3-ubyte.gz`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub test_images: PathBuf,
    /// True neighbours kept per query (ann-benchmarks keeps 100).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = crate::validate::positive))]
    pub neighbours: usize,
    /// The HDF5 file to write (ann-benchmarks layout; written whole or not at all).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

/// `flyhash ann-data`: reads both image files, finds the true neighbours, writes the file.
pub fn run(c: &AnnDataConfig) -> Result<AnnData> {
    crate::io::atomic::check_writable(&c.out)?;
    if c.out == std::path::Path::new("-") {
        // Refused before minutes of brute force, not after.
        return Err(Error::input("-", "an HDF5 file cannot be written to standard output: name a file"));
    }
    let read = |p: &PathBuf| crate::io::read::read::<f32>(p, &Default::default());
    let (train, test) = (read(&c.train_images)?, read(&c.test_images)?);
    if train.cols != test.cols {
        return Err(Error::input(
            c.test_images.display(),
            format!("{} values per image, but --train-images has {}", test.cols, train.cols),
        ));
    }
    if train.rows == 0 {
        return Err(Error::input(c.train_images.display(), "no images"));
    }
    let k = c.neighbours.min(train.rows);
    crate::io::memory::ensure_fits("the neighbours", test.rows as u128 * k as u128 * 8)?;
    let t0 = std::time::Instant::now();
    let (neighbors, distances) = exact_neighbours(&train, &test, k);
    let data = AnnData { train, test, neighbors, distances: Some(distances), metric: "euclidean".into() };
    ann::write(&c.out, &data)?;
    crate::outln!(
        "{}: train {} x {}, test {} x {}, {} exact Euclidean neighbours per query ({:.1} s)",
        c.out.display(),
        data.train.rows,
        data.train.cols,
        data.test.rows,
        data.test.cols,
        k,
        t0.elapsed().as_secs_f64()
    )?;
    Ok(data)
}

/// The `k` nearest `train` rows of every `test` row by Euclidean distance, nearest first, ties
/// to the lower row, and their distances (see the module's note on the summation order). Rayon
/// over queries; `k` is at most `train.rows`.
pub fn exact_neighbours(train: &Table<f32>, test: &Table<f32>, k: usize) -> (Table<i32>, Table<f32>) {
    exact_neighbours_on(simd_level(), train, test, k)
}

/// [`exact_neighbours`] on the given instruction set (capped at what the CPU has): every level
/// gives the same bits, which the tests check.
pub fn exact_neighbours_on(level: Simd, train: &Table<f32>, test: &Table<f32>, k: usize) -> (Table<i32>, Table<f32>) {
    assert_eq!(train.cols, test.cols, "train and test must have the same columns");
    let k = k.min(train.rows);
    let level = level.min(simd_detected());
    let mut ids = vec![0i32; test.rows * k];
    let mut dist = vec![0f32; test.rows * k];
    ids.par_chunks_mut(k.max(1)).zip(dist.par_chunks_mut(k.max(1))).enumerate().for_each_init(
        || (vec![0f64; train.rows], Vec::<(f64, u32)>::with_capacity(train.rows)),
        |(d2, order), (q, (ids, dist))| {
            let query = test.row(q);
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` ≤ `simd_detected()`, which found AVX2.
                Simd::Avx2 | Simd::Avx512 => unsafe { distances_avx2(train, query, d2) },
                _ => distances(train, query, d2),
            }
            order.clear();
            order.extend(d2.iter().enumerate().map(|(i, &d)| (d, i as u32)));
            // (distance, row) is a total order without ties: the k smallest, then sorted.
            let cmp = |a: &(f64, u32), b: &(f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
            if k < order.len() {
                order.select_nth_unstable_by(k, cmp);
            }
            let top = &mut order[..k];
            top.sort_unstable_by(cmp);
            for (j, &(d, i)) in top.iter().enumerate() {
                ids[j] = i as i32;
                dist[j] = d.sqrt() as f32;
            }
        },
    );
    (Table { rows: test.rows, cols: k, data: ids }, Table { rows: test.rows, cols: k, data: dist })
}

/// Squared distance in the documented order: column `j` into partial sum `j mod 8`, then the
/// partial sums pairwise.
#[inline(always)]
fn squared(a: &[f32], b: &[f32]) -> f64 {
    let mut s = [0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            let d = x[l] as f64 - y[l] as f64;
            s[l] += d * d;
        }
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        let d = *x as f64 - *y as f64;
        s[l] += d * d;
    }
    ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

#[inline(always)]
fn distances(train: &Table<f32>, q: &[f32], out: &mut [f64]) {
    for (i, d) in out.iter_mut().enumerate() {
        *d = squared(train.row(i), q);
    }
}

/// [`distances`] compiled for AVX2 (4 `f64` lanes instead of 2): the same operations in the
/// same order, so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn distances_avx2(train: &Table<f32>, q: &[f32], out: &mut [f64]) {
    distances(train, q, out)
}
