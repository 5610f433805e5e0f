//! Fly hashing against SimHash, compared two ways (`neurobits flyhash eval`): at an **equal
//! number of ones** — Dasgupta et al. 2017's comparison: a fly code of `m = 20k` bits with `k`
//! ones against a SimHash code of `k` bits — and at an **equal code length**, in bits (SimHash of
//! `20k` bits) and in bytes stored (the fly code as its `k` winner indices, two bytes each,
//! against a SimHash code of as many bytes). The dense fly codes (DenseFly, and thresholds
//! learned per bit) are compared at equal bits. Quality: recall@R of the true `R` Euclidean
//! nearest neighbours among the `R` nearest codes, and the mean average precision of that list.

use anyhow::{bail, Context, Result};
use neurobits_core::flyhash::{kth_largest, select, sort_key, FlyParams};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

use super::data::{read, Matrix};
use super::{cpu, dense, search, simhash};
use crate::io::atomic::write_string;
use crate::plot::{line_chart, Labels, Series};
use crate::progress::stages;

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

/// Recall@R and mean average precision of the Hamming rankings `found` (nearest first) against
/// the true neighbours `truth` (R of each).
pub fn quality(truth: &[Vec<u32>], found: &[Vec<(u32, u32)>]) -> (f64, f64) {
    let (mut recall, mut ap) = (0.0, 0.0);
    for (t, f) in truth.iter().zip(found) {
        let mut hits = 0;
        let mut sum = 0.0;
        for (rank, (i, _)) in f.iter().enumerate() {
            if t.contains(i) {
                hits += 1;
                sum += hits as f64 / (rank + 1) as f64;
            }
        }
        recall += hits as f64 / t.len().max(1) as f64;
        ap += sum / t.len().max(1) as f64;
    }
    let n = truth.len().max(1) as f64;
    (recall / n, ap / n)
}

#[derive(Serialize, Debug, Clone)]
/// One code of the comparison.
pub struct EvalRow {
    /// Data set.
    pub data: String,
    /// Which fly code (`k` winners of `20k`) this row is compared with, and how: `fly` (the fly
    /// code itself), `equal ones`, `equal bytes`, `equal bits`.
    pub comparison: String,
    /// Method.
    pub method: String,
    /// The fly code's winners k.
    pub k: u32,
    /// Code length in bits.
    pub bits: u32,
    /// Bytes stored per code (a fly code of `k` ones: its `k` indices as `u16`).
    pub bytes: u32,
    /// Ones per code (mean, over the queries' codes).
    pub ones: f64,
    /// Recall@R of the true R Euclidean neighbours.
    pub recall: f64,
    /// Mean average precision of the R nearest codes.
    pub map: f64,
}

/// One data set: the database and the queries, preprocessed.
pub struct Set {
    /// Its name in the tables.
    pub name: String,
    /// Database vectors.
    pub db: Matrix,
    /// Query vectors.
    pub q: Matrix,
}

fn split(mut x: Matrix, queries: usize) -> (Matrix, Matrix) {
    let tail = x.data.split_off(queries * x.cols);
    let q = Matrix { rows: queries, cols: x.cols, data: std::mem::take(&mut x.data) };
    (Matrix { rows: x.rows - queries, cols: x.cols, data: tail }, q)
}

/// Fashion-MNIST (the 60 000 training images; the first `queries` test images as queries) and
/// scikit-learn's digits (the first `digit_queries` of 1 797 as queries, the rest the
/// database; its last column, the label, dropped).
pub fn sets(fmnist: &Path, digits: &Path, queries: usize, digit_queries: usize) -> Result<Vec<Set>> {
    let mut db = read(&fmnist.join("train-images-idx3-ubyte.gz"))?;
    let test = read(&fmnist.join("t10k-images-idx3-ubyte.gz"))?;
    if db.cols != test.cols {
        bail!("train and test images differ in size ({} vs {})", db.cols, test.cols);
    }
    if queries == 0 || queries > test.rows {
        bail!("--queries must be in 1..={}", test.rows);
    }
    let (_, mut q) = split(test, queries);
    preprocess(&mut db);
    preprocess(&mut q);
    let mut out = vec![Set { name: "Fashion-MNIST".into(), db, q }];
    let x = read(digits).with_context(|| format!("--digits {}", digits.display()))?;
    if x.cols != 65 || x.rows <= digit_queries + 100 {
        bail!(
            "--digits {}: expected scikit-learn's digits.csv (65 columns), got {}×{}",
            digits.display(),
            x.rows,
            x.cols
        );
    }
    let data = x.data.chunks(65).flat_map(|r| r[..64].iter().map(|v| v * (255.0 / 16.0))).collect();
    let (mut db, mut q) = split(Matrix { rows: x.rows, cols: 64, data }, digit_queries);
    preprocess(&mut db);
    preprocess(&mut q);
    out.push(Set { name: "digits".into(), db, q });
    Ok(out)
}

/// Runs the comparison on each set; writes `eval.csv`, `eval.json` and one `eval-<set>.svg` per set
/// (recall against code length in bits) into `out`.
pub fn run(sets: &[Set], ks: &[u32], neighbours: usize, seed: u64, out: &Path) -> Result<Vec<EvalRow>> {
    let pb = stages(sets.len() as u64 * (2 + ks.len() as u64));
    let mut rows = Vec::new();
    let kmax = ks.iter().copied().max().unwrap_or(1) as usize;
    for set in sets {
        let (db, q, d) = (&set.db, &set.q, set.db.cols);
        if neighbours > db.rows {
            bail!("--neighbours {neighbours}: {} has only {} database vectors", set.name, db.rows);
        }
        // The true neighbours (4 bytes each) and one ranking at a time (id and distance).
        crate::budget::check_items(
            format_args!("flyhash eval --neighbours {neighbours}: the neighbour lists of {} queries", q.rows),
            q.rows as u128 * neighbours as u128,
            12,
        )?;
        pb.set_message(format!("{}: exact Euclidean neighbours, SimHash and dense projections", set.name));
        let truth = euclidean_nn(db, q, neighbours, || {});
        let s = ((d as f32 * 0.1).round() as u32).max(1);
        let rank = |c_db: &[u64], c_q: &[u64], bits: usize| {
            quality(&truth, &search::top_r(c_db, c_q, bits.div_ceil(64), neighbours))
        };
        let ones = |c: &[u64], bits: usize| {
            c.iter().map(|w| w.count_ones() as f64).sum::<f64>() / (c.len() / bits.div_ceil(64)).max(1) as f64
        };
        // One projection of the longest length: shorter codes are its prefixes (rows do not
        // depend on the code length, for SimHash as for the fly projection).
        let big = 20 * kmax;
        let sp = simhash::projection(big, d, seed);
        let (sdb, sq) = (simhash::project(&sp, big, db), simhash::project(&sp, big, q));
        let dp = FlyParams::new(d as u32, big as u32, s, 1, seed)?;
        let dproj = cpu::projection(&dp);
        let (adb, aq) = (dense::activations(&dp, &dproj, db), dense::activations(&dp, &dproj, q));
        pb.inc(1);
        for &k in ks {
            pb.set_message(format!("{}: k = {k}", set.name));
            let m = 20 * k as usize;
            let mut row = |comparison: &str, method: String, bits: usize, bytes: usize, cdb: &[u64], cq: &[u64]| {
                let (recall, map) = rank(cdb, cq, bits);
                rows.push(EvalRow {
                    data: set.name.clone(),
                    comparison: comparison.into(),
                    method,
                    k,
                    bits: bits as u32,
                    bytes: bytes as u32,
                    ones: ones(cq, bits),
                    recall,
                    map,
                });
            };
            let p = FlyParams::new(d as u32, m as u32, s, k, seed)?;
            let proj = cpu::projection(&p);
            let (fdb, fq) = (cpu::hash(&p, &proj, db, cpu::Wta::Exact), cpu::hash(&p, &proj, q, cpu::Wta::Exact));
            // Stored as k u16 indices (m < 2¹⁶ here) or as the bit vector, whichever is smaller.
            let fly_bytes = (2 * k as usize).min(m.div_ceil(8));
            row("fly", format!("FlyHash (m = 20k, k ones, s = {s})"), m, fly_bytes, &fdb, &fq);
            for (comparison, bits) in [("equal ones", k as usize), ("equal bytes", 8 * fly_bytes), ("equal bits", m)] {
                let (cdb, cq) = (simhash::codes(&sdb, big, bits), simhash::codes(&sq, big, bits));
                row(comparison, "SimHash".into(), bits, bits.div_ceil(8), &cdb, &cq);
            }
            let (cdb, cq) = (dense::mean_codes(&adb, big, m), dense::mean_codes(&aq, big, m));
            row("equal bits", format!("DenseFly (mean threshold, s = {s})"), m, m.div_ceil(8), &cdb, &cq);
            let t = dense::learn_medians(&adb, big, m);
            let (cdb, cq) = (dense::threshold_codes(&adb, big, &t), dense::threshold_codes(&aq, big, &t));
            row("equal bits", format!("dense fly, learned thresholds (s = {s})"), m, m.div_ceil(8), &cdb, &cq);
            pb.inc(1);
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    std::fs::create_dir_all(out)?;
    let mut csv = String::from("data,comparison,method,k,bits,bytes,ones,recall,map\n");
    for r in &rows {
        csv += &format!(
            "{},{},\"{}\",{},{},{},{:.2},{:.4},{:.4}\n",
            r.data, r.comparison, r.method, r.k, r.bits, r.bytes, r.ones, r.recall, r.map
        );
    }
    write_string(&out.join("eval.csv"), &csv)?;
    crate::io::json::write(&out.join("eval.json"), &rows)?;
    for set in sets {
        let curve = |pick: &dyn Fn(&EvalRow) -> bool| {
            let mut pts: Vec<(f64, f64)> =
                rows.iter().filter(|r| r.data == set.name && pick(r)).map(|r| (r.bits as f64, r.recall)).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            pts
        };
        let series = vec![
            Series::new("SimHash", curve(&|r| r.method == "SimHash")),
            Series::new("FlyHash (m = 20k, k ones)", curve(&|r| r.comparison == "fly")),
            Series::new("DenseFly (mean threshold)", curve(&|r| r.method.starts_with("DenseFly"))),
            Series::new("dense fly, learned thresholds", curve(&|r| r.method.starts_with("dense fly"))),
        ];
        let title = format!(
            "{}: recall@{neighbours} of Euclidean neighbours vs code length ({} queries)",
            set.name, set.q.rows
        );
        let file = format!("eval-{}.svg", set.name.to_lowercase().replace(' ', "-"));
        line_chart(&out.join(file), &Labels { title: &title, x: "code length (bits)", y: "recall@R" }, &series, false)?;
    }
    Ok(rows)
}
