//! `neurobits flyhash ann-figure`: the ann-benchmarks plot — recall@k (x) against queries per
//! second (y, log scale), one line per algorithm and device — from the JSON rows that
//! `flyhash ann-bench` and the faiss peer (`peers/ann_faiss.py`) write, with the rows merged
//! into one CSV and one JSON beside it.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::io::atomic::write_set;
use crate::plot::{line_chart_in, Labels, Series};
use crate::{Error, Result};

/// One measured setting of one index: the row format shared by `flyhash ann-bench` and the
/// peers (one JSON array of these per file). Further keys a writer adds (`candidates`) are
/// read past, and not merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnRow {
    /// The index, e.g. `faiss-IndexHNSWFlat` or `neurobits-FlyHashIndex`.
    pub algorithm: String,
    /// Its build and search settings, e.g. `M=32,efSearch=64`.
    pub params: String,
    /// Where it ran, e.g. `cpu (2 threads)` or `gpu (NVIDIA H100)`.
    pub device: String,
    /// Neighbours asked for per query.
    pub k: usize,
    /// Recall@k (ann-benchmarks' definition), in [0, 1].
    pub recall: f64,
    /// Queries per second of one search call over all queries (warm-up excluded).
    pub qps: f64,
    /// Seconds to build the index.
    pub build_s: f64,
    /// Points indexed.
    pub n_train: usize,
    /// Queries.
    pub n_test: usize,
}

/// What to plot.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AnnFigureConfig {
    /// JSON files of result rows (`flyhash ann-bench --out`, `peers/ann_faiss.py`), each one
    /// array of {algorithm, params, device, k, recall, qps, build_s, n_train, n_test}.
    #[cfg_attr(feature = "cli", arg(long, required = true, num_args = 1.., value_delimiter = ','))]
    pub results: Vec<PathBuf>,
    /// A folder for `ann-recall-qps.svg`, and every row merged in `ann-results.csv` and
    /// `ann-results.json`.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

/// Reads one results file: a JSON array of [`AnnRow`], each checked (recall in [0, 1],
/// positive finite queries per second, k ≥ 1).
pub fn read_rows(path: &Path) -> Result<Vec<AnnRow>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => Error::input(&name, "not UTF-8 text"),
        _ => Error::io(path, e),
    })?;
    let rows: Vec<AnnRow> = serde_json::from_str(&text)
        .map_err(|e| Error::input(&name, format!("not a JSON array of ann-bench rows: {e}")))?;
    for (i, r) in rows.iter().enumerate() {
        let bad =
            |why: String| Err(Error::input(&name, format!("row {} ({} {}): {why}", i + 1, r.algorithm, r.params)));
        if !(0.0..=1.0).contains(&r.recall) {
            return bad(format!("recall {} is not in [0, 1]", r.recall));
        }
        if !(r.qps.is_finite() && r.qps > 0.0) {
            return bad(format!("qps {} is not a positive number", r.qps));
        }
        if r.k == 0 {
            return bad("k is 0".into());
        }
    }
    Ok(rows)
}

/// The lines of the figure: one per (algorithm, device), labelled with the device only where an
/// algorithm ran on several. As in ann-benchmarks' plots, a line is the algorithm's Pareto
/// front: a setting is drawn unless another of the same line is at least as fast with a higher
/// recall (or faster at the same recall). The points are sorted by recall; the dominated
/// settings stay in the merged CSV and JSON.
pub fn series(rows: &[AnnRow]) -> Vec<Series> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.algorithm.as_str(), r.device.as_str())) {
            keys.push((&r.algorithm, &r.device));
        }
    }
    keys.iter()
        .map(|&(a, d)| {
            let mut pts: Vec<(f64, f64)> =
                rows.iter().filter(|r| r.algorithm == a && r.device == d).map(|r| (r.recall, r.qps)).collect();
            // Highest recall first (the faster of equal recalls first): a point is kept when it
            // is faster than every point kept before it.
            pts.sort_by(|p, q| q.0.total_cmp(&p.0).then(q.1.total_cmp(&p.1)));
            let mut best = f64::NEG_INFINITY;
            pts.retain(|p| {
                let keep = p.1 > best;
                best = best.max(p.1);
                keep
            });
            pts.reverse();
            let several = keys.iter().filter(|k| k.0 == a).count() > 1;
            Series::new(if several { format!("{a} ({d})") } else { a.to_string() }, pts)
        })
        .collect()
}

/// CSV of the rows, one per line, in the JSON's field order.
fn csv(rows: &[AnnRow]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| Error::input("the merged rows", e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| Error::input("the merged rows", e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| Error::input("the merged rows", e.to_string()))
}

/// `flyhash ann-figure`: reads every file, writes the plot and the merged rows (the three files
/// together or none); returns the rows.
pub fn run(c: &AnnFigureConfig) -> Result<Vec<AnnRow>> {
    let mut rows = Vec::new();
    for p in &c.results {
        rows.extend(read_rows(p)?);
    }
    if rows.is_empty() {
        return Err(Error::input(
            c.results.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
            "no rows to plot",
        ));
    }
    let ks: std::collections::BTreeSet<usize> = rows.iter().map(|r| r.k).collect();
    let k = ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join("/");
    let devices: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.device.as_str()).collect();
    let n = rows[0].n_train;
    let title = format!("recall@{k} vs queries per second ({n} points)");
    let x = format!("recall@{k}");
    let json = serde_json::to_string_pretty(&rows).map_err(|e| Error::input("the merged rows", e.to_string()))?;
    let csv = csv(&rows)?;
    let lines = series(&rows);
    write_set(&c.out, &["ann-recall-qps.svg", "ann-results.csv", "ann-results.json"], |dir| {
        let labels = Labels { title: &title, x: &x, y: "queries per second (log)" };
        line_chart_in(&dir.join("ann-recall-qps.svg"), &labels, &lines, true, Some((0.0, 1.0)))?;
        crate::io::atomic::write_string(&dir.join("ann-results.csv"), &csv)?;
        crate::io::atomic::write_string(&dir.join("ann-results.json"), &(json.clone() + "\n"))
    })
    .map_err(Error::Other)?;
    crate::outln!(
        "{}: {} rows, {} lines ({}) into ann-recall-qps.svg, ann-results.csv, ann-results.json",
        c.out.display(),
        rows.len(),
        lines.len(),
        devices.into_iter().collect::<Vec<_>>().join(", ")
    )?;
    Ok(rows)
}
