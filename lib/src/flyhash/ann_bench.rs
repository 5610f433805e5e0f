//! `neurobits flyhash ann-bench`: the approximate index in the form ann-benchmarks uses — fit on
//! a data set's `train`, then one search call over all of `test` per knob value, timed warm —
//! written as JSON rows that the faiss peer script writes too:
//! `{"algorithm", "params", "device", "k", "recall", "qps", "build_s", "n_train", "n_test"}`.
//! recall = |found ∩ true top-k| / k, averaged over the queries; qps = queries / wall seconds of
//! the fastest of `--runs` search calls (all threads; a warm-up call on the first queries is not
//! timed). The exact
//! Hamming scan of the same fly codes ([`FlyIndex::search`](crate::flyhash::index::FlyIndex::search)) is
//! timed the same way, as the row the knob is meant to beat. `--device` picks the CPU, one GPU
//! or the ids sharded over several GPUs (`gpus`), named in each row's `device`.

use std::path::PathBuf;
use std::time::Instant;

use super::ann::{AnnConfig, FlyAnnIndex, Rerank};
use super::ann_bench_data::{self as ann_data, AnnData};
use super::ann_gpu::AnnDevice;
use super::data::{Matrix, FASHION_MNIST};
use super::model::FlyHashConfig;
use crate::error::{Error, Result};

/// The approximate index's options (also `flyhash index build --approx`).
#[derive(Debug, Clone, clap::Args)]
pub struct AnnArgs {
    /// Pseudo-hash tables.
    #[arg(long, default_value_t = AnnConfig::default().tables)]
    pub tables: usize,
    /// Bits of each table's bucket key (2^bits buckets per table).
    #[arg(long, default_value_t = AnnConfig::default().bits)]
    pub key_bits: usize,
    /// Projection outputs sum-pooled into one key bit.
    #[arg(long, default_value_t = AnnConfig::default().pool)]
    pub pool: usize,
    /// Re-ranking of the candidates: hamming (full fly codes) or euclidean (keeps the vectors).
    #[arg(long, value_enum, default_value_t = AnnConfig::default().rerank)]
    pub rerank: Rerank,
}

impl AnnArgs {
    /// The library's configuration with `probes` as the search knob.
    pub fn config(&self, probes: usize) -> AnnConfig {
        AnnConfig { tables: self.tables, bits: self.key_bits, pool: self.pool, probes, rerank: self.rerank }
    }
}

/// `flyhash ann-bench`.
#[derive(Debug, clap::Args)]
pub struct AnnBenchConfig {
    /// The data set: an ann-benchmarks HDF5 file (binaries with the `ann` feature), or a folder
    /// of Fashion-MNIST IDX files (`train-images-idx3-ubyte[.gz]`, `t10k-…`; the true
    /// neighbours are then found here by brute force).
    #[arg(short, long, default_value = FASHION_MNIST)]
    pub input: PathBuf,
    /// Instead of `--input`: N synthetic pixel vectors (clustered, from the portable PRNG; the
    /// generator is in the manual), `--dim` values each, and `--queries` queries.
    #[arg(long)]
    pub synthetic: Option<usize>,
    /// Dimension of the synthetic vectors.
    #[arg(long, default_value_t = 128, value_parser = crate::validate::positive)]
    pub dim: usize,
    /// Synthetic queries.
    #[arg(long, default_value_t = 10_000, value_parser = crate::validate::positive)]
    pub queries: usize,
    /// Recall is measured over the first N queries only (all by default); speed over all.
    #[arg(long, value_parser = crate::validate::positive)]
    pub truth_queries: Option<usize>,
    /// Where to hash and search: cpu, gpu, cuda:N, auto, gpus (the ids sharded over every GPU)
    /// or gpus:N (over the first N).
    #[arg(long, default_value = "cpu", value_parser = |s: &str| s.parse::<AnnDevice>())]
    pub device: AnnDevice,
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
    /// Seconds of the first (warm-up) search, which on a GPU includes uploading the index.
    pub warmup_s: f64,
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
    let synthetic = a.synthetic.map(|n| (n, a.dim, a.queries, a.seed));
    if a.synthetic == Some(0) {
        return Err(Error::config("synthetic", 0, "must be at least 1").into());
    }
    let t = Instant::now();
    let data = ann_data::load(&a.input, synthetic, a.truth_queries, a.neighbours)?;
    crate::noteln!(
        "{}: train {} x {}, test {}, truth for {} queries ({:.1} s)",
        data.source,
        data.train.rows,
        data.train.cols,
        data.test.rows,
        data.neighbors.len(),
        t.elapsed().as_secs_f64()
    );
    if data.neighbors.iter().any(|t| t.len() < a.neighbours) {
        return Err(Error::config("neighbours", a.neighbours, "is more than the data set's true neighbours").into());
    }
    let rows = bench(&data, hash, config, &a.probes, a.neighbours, a.exact_scan, a.runs, a.device)?;
    // A bare array, not the `{"meta", "rows"}` document of the other commands: the format is
    // shared with the faiss peer script and read as is by the plot.
    crate::io::atomic::write_string(&a.out, &(serde_json::to_string_pretty(&rows)? + "\n"))?;
    Ok(())
}

/// Builds the index on `data.train` (hashing on `on`) and times one search of `data.test` per
/// probe count on `on`.
#[allow(clippy::too_many_arguments)]
pub fn bench(
    data: &AnnData,
    hash: FlyHashConfig,
    config: AnnConfig,
    probes: &[usize],
    k: usize,
    exact_scan: bool,
    runs: usize,
    on: AnnDevice,
) -> Result<Vec<AnnRow>> {
    let (train, test) = (&data.train, &data.test);
    let t = Instant::now();
    let mut index = FlyAnnIndex::new(hash, config.clone(), train.cols)?.with_ann_device(on);
    index.add(train)?;
    let build_s = t.elapsed().as_secs_f64();
    crate::noteln!("built on {} in {build_s:.1} s", index.device_name()?);
    let p = index.exact().hasher().params()?;
    let fly = format!("m={},s={},winners={},seed={}", p.m, p.s, p.k, p.seed);
    let warm = Matrix {
        rows: test.rows.min(100),
        cols: test.cols,
        data: test.data[..test.rows.min(100) * test.cols].to_vec(),
    };
    let row = |algorithm: &str, params: String, device: String, recall: f64, secs: f64, candidates: f64| AnnRow {
        row: super::ann_figure::AnnRow {
            algorithm: algorithm.into(),
            params,
            device,
            k,
            recall,
            qps: test.rows as f64 / secs,
            build_s,
            n_train: train.rows,
            n_test: test.rows,
        },
        candidates,
        warmup_s: 0.0,
    };
    let mut rows = Vec::new();
    crate::outln!("{:>44} {:>8} {:>10} {:>12}", "params", "recall", "qps", "candidates")?;
    for &probes in probes {
        let t = Instant::now();
        index.search_probes(&warm, k, probes)?;
        let warmup_s = t.elapsed().as_secs_f64();
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
        let mut r = row(
            "neurobits-flyhash-multiprobe",
            params,
            index.device_name()?,
            recall(&hits.ids, k, &data.neighbors),
            secs,
            hits.candidates as f64 / test.rows as f64,
        );
        r.warmup_s = warmup_s;
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
        let h = index.exact().hasher();
        let device = h.opened.get(h.device)?.name();
        let r =
            row("neurobits-flyhash-exact", fly, device, recall(&hits.ids, k, &data.neighbors), secs, train.rows as f64);
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
