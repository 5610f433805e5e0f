//! `neurobits flyhash ann-bench`: the approximate index in the form ann-benchmarks uses — fit on
//! a data set's `train`, then one search call over all of `test` per knob value, timed warm —
//! written as JSON rows that the faiss peer script writes too:
//! `{"algorithm", "params", "device", "k", "recall", "qps", "build_s", "n_train", "n_test"}`.
//! recall = |found ∩ true top-k| / k, averaged over the queries; qps = queries / wall seconds of
//! the fastest of `--runs` search calls (all threads; a warm-up call on the first queries is not
//! timed). The exact
//! Hamming scan of the same fly codes ([`FlyIndex::search`](crate::flyhash::index::FlyIndex::search)) is
//! timed the same way, as the row the knob is meant to beat.

use std::path::PathBuf;
use std::time::Instant;

use super::ann::{AnnConfig, FlyAnnIndex, Rerank};
use super::data::{Matrix, FASHION_MNIST};
use super::model::FlyHashConfig;
use crate::error::{Error, Result};

pub use super::ann_args::AnnArgs;

/// `flyhash ann-bench`.
#[derive(Debug, clap::Args)]
pub struct AnnBenchConfig {
    /// The data set (until the HDF5 reader lands: a folder of Fashion-MNIST IDX files, whose
    /// true neighbours are computed by brute force).
    #[arg(short, long, default_value = FASHION_MNIST)]
    pub input: PathBuf,
    /// JSON array of result rows (`-`: standard output).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Neighbours per query (recall@k).
    #[arg(short = 'k', long, default_value_t = 10, value_parser = crate::validate::positive)]
    pub neighbours: usize,
    /// Buckets probed per table, the knob swept.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64,128")]
    pub probes: Vec<usize>,
    /// The index.
    #[command(flatten)]
    pub ann: AnnArgs,
    /// Code length m (default 32·d).
    #[arg(long, value_parser = crate::validate::positive)]
    pub code_bits: Option<usize>,
    /// Inputs per projection row s (default 5 % of d).
    #[arg(long, value_parser = crate::validate::positive)]
    pub ones_per_row: Option<usize>,
    /// Winners k of the fly code (default m/20).
    #[arg(long, value_parser = crate::validate::positive)]
    pub winners: Option<usize>,
    /// Seed of the projection.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time the exact Hamming scan of the fly codes too (a row of its own).
    #[arg(long)]
    pub exact_scan: bool,
    /// Search calls timed per setting; the fastest is reported (ann-benchmarks' `--runs`: on a
    /// shared machine the fastest call is the one least disturbed).
    #[arg(long, default_value_t = 3, value_parser = crate::validate::positive)]
    pub runs: usize,
}

/// One row of the shared result format ([`super::ann_figure::AnnRow`], which the plot reads)
/// and the candidates re-ranked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AnnRow {
    /// The shared keys.
    #[serde(flatten)]
    pub row: super::ann_figure::AnnRow,
    /// Distinct candidates re-ranked per query (not in the shared format's required keys).
    pub candidates: f64,
}

/// Mean |found ∩ truth[..k]| / k (found ids of `-1` count as misses).
pub fn recall(ids: &[i64], k: usize, truth: &[Vec<u32>]) -> f64 {
    let hit: usize = ids
        .chunks(k)
        .zip(truth)
        .map(|(f, t)| {
            let t = &t[..k.min(t.len())];
            f.iter().filter(|&&id| id >= 0 && t.contains(&(id as u32))).count()
        })
        .sum();
    hit as f64 / (k * truth.len().max(1)) as f64
}

/// Runs the bench and writes the rows.
pub fn run(a: &AnnBenchConfig) -> anyhow::Result<()> {
    let hash = FlyHashConfig {
        code_bits: a.code_bits,
        ones_per_row: a.ones_per_row,
        winners: a.winners,
        seed: a.seed,
        ..Default::default()
    };
    hash.validate()?;
    let config = a.ann.config(a.probes.first().copied().unwrap_or(1));
    config.validate()?;
    for &p in &a.probes {
        config.check_probes(p)?;
    }
    crate::io::atomic::check_writable(&a.out)?;
    let data = ann_data::read(&a.input)?;
    if data.neighbors.iter().any(|t| t.len() < a.neighbours) {
        return Err(Error::config("neighbours", a.neighbours, "is more than the data set's true neighbours").into());
    }
    let rows = bench(&data, hash, config, &a.probes, a.neighbours, a.exact_scan, a.runs)?;
    // A bare array, not the `{"meta", "rows"}` document of the other commands: the format is
    // shared with the faiss peer script and read as is by the plot.
    crate::io::atomic::write_string(&a.out, &(serde_json::to_string_pretty(&rows)? + "\n"))?;
    Ok(())
}

/// Builds the index on `data.train` and times one search of `data.test` per probe count.
pub fn bench(
    data: &ann_data::AnnData,
    hash: FlyHashConfig,
    config: AnnConfig,
    probes: &[usize],
    k: usize,
    exact_scan: bool,
    runs: usize,
) -> Result<Vec<AnnRow>> {
    let device = format!("cpu ({} threads)", rayon::current_num_threads());
    let (train, test) = (&data.train, &data.test);
    let t = Instant::now();
    let mut index = FlyAnnIndex::new(hash, config.clone(), train.cols)?;
    index.add(train)?;
    let build_s = t.elapsed().as_secs_f64();
    let p = index.exact().hasher().params()?;
    let fly = format!("m={},s={},winners={},seed={}", p.m, p.s, p.k, p.seed);
    let warm = Matrix {
        rows: test.rows.min(100),
        cols: test.cols,
        data: test.data[..test.rows.min(100) * test.cols].to_vec(),
    };
    let row = |algorithm: &str, params: String, recall: f64, secs: f64, candidates: f64| AnnRow {
        row: super::ann_figure::AnnRow {
            algorithm: algorithm.into(),
            params,
            device: device.clone(),
            k,
            recall,
            qps: test.rows as f64 / secs,
            build_s,
            n_train: train.rows,
            n_test: test.rows,
        },
        candidates,
    };
    let mut rows = Vec::new();
    crate::outln!("{:>44} {:>8} {:>10} {:>12}", "params", "recall", "qps", "candidates")?;
    for &probes in probes {
        index.search_probes(&warm, k, probes)?;
        let (hits, secs) = fastest(runs, || index.search_probes(test, k, probes))?;
        let params = format!(
            "tables={},key_bits={},pool={},probes={probes},rerank={},{fly}",
            config.tables,
            config.bits,
            config.pool,
            match config.rerank {
                Rerank::Hamming => "hamming",
                Rerank::Euclidean => "euclidean",
            }
        );
        let r = row(
            "neurobits-flyhash-multiprobe",
            params,
            recall(&hits.ids, k, &data.neighbors),
            secs,
            hits.candidates as f64 / test.rows as f64,
        );
        crate::outln!(
            "{:>44} {:>8.4} {:>10.1} {:>12.0}",
            format!("probes={probes}"),
            r.row.recall,
            r.row.qps,
            r.candidates
        )?;
        rows.push(r);
    }
    if exact_scan {
        index.exact().search(&warm, k)?;
        let (hits, secs) = fastest(runs, || index.exact().search(test, k))?;
        let r = row("neurobits-flyhash-exact", fly, recall(&hits.ids, k, &data.neighbors), secs, train.rows as f64);
        crate::outln!("{:>44} {:>8.4} {:>10.1} {:>12.0}", "exact Hamming scan", r.row.recall, r.row.qps, r.candidates)?;
        rows.push(r);
    }
    Ok(rows)
}

/// The result of `f` and the wall seconds of its fastest of `runs` calls (all give the same
/// result: the search is deterministic).
fn fastest<T>(runs: usize, mut f: impl FnMut() -> Result<T>) -> Result<(T, f64)> {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let r = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    Ok((out.expect("at least one run"), best))
}

/// The ann-benchmarks file (`neurobits::io::ann`) as the bench uses it: the points as the
/// library's matrices, the true neighbours as ids.
mod ann_data {
    use crate::flyhash::data::Matrix;

    pub struct AnnData {
        pub train: Matrix,
        pub test: Matrix,
        pub neighbors: Vec<Vec<u32>>,
    }

    pub fn read(path: &std::path::Path) -> anyhow::Result<AnnData> {
        let d = crate::io::ann::read(path)?;
        let m = |t: crate::io::read::Table<f32>| Matrix { rows: t.rows, cols: t.cols, data: t.data };
        // `read` checked every id against the training rows (non-negative, in range).
        let neighbors = (0..d.neighbors.rows).map(|i| d.neighbors.row(i).iter().map(|&x| x as u32).collect()).collect();
        Ok(AnnData { train: m(d.train), test: m(d.test), neighbors })
    }
}
