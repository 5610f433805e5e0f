//! Exact Euclidean neighbours by brute force, the truth every recall is measured against
//! (`flyhash ann-data` stores them; `flyhash ann-bench` computes them in memory when it reads
//! IDX files or makes a synthetic set). The summation order is in [`super::ann_data`]'s notes.

use rayon::prelude::*;

use crate::device::{simd_detected, simd_level, Simd};
use crate::io::read::Table;

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
