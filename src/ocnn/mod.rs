//! The OCNN on the host: point files, the Delaunay scale, the weights (computed once here and
//! shipped to every target), the CPU driver, clustering and the spec's digests.

pub mod clusters;
pub mod cpu;
pub mod digest;
pub mod points;
pub mod scale;
pub mod weights;

use anyhow::Result;
use neurobits_core::ocnn::{Real, SyncMode};
use std::path::PathBuf;

use crate::device::DeviceChoice;
pub use clusters::Clustering;
use points::Points;

/// Synchronization measure on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SyncArg {
    /// Phase synchronization: both outputs rose, or both did not (the default).
    Phase,
    /// Fragmentary synchronization: outputs within ε.
    Fragmentary,
}

/// Working type of the dynamics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Dtype {
    /// 32-bit floats (the paper's choice; the default).
    F32,
    /// 64-bit floats.
    F64,
}

/// `ocnn cluster`: cluster the points of a file.
#[derive(clap::Args, Debug, Clone)]
pub struct ClusterConfig {
    /// Points, one per line, coordinates separated by whitespace or commas (`#`/`%` lines skipped).
    #[arg(long)]
    pub input: PathBuf,
    /// Labels CSV: one label per input point, clusters numbered by their smallest member.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the initial state (SplitMix64).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Observed iterations T.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub iters: u32,
    /// Iterations run before observing.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub transient: u32,
    /// Synchronization measure.
    #[arg(long, value_enum, default_value_t = SyncArg::Phase)]
    pub sync: SyncArg,
    /// ε of fragmentary synchronization.
    #[arg(long, default_value_t = 0.2)]
    pub eps: f64,
    /// Link threshold: `auto` (longest plateau of equal k on the percent grid) or a percent P.
    #[arg(long, default_value = "auto")]
    pub threshold: String,
    /// Scale constant a (default: from the Delaunay triangulation).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Working type of the dynamics.
    #[arg(long, value_enum, default_value_t = Dtype::F32)]
    pub dtype: Dtype,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
    /// Also write a JSON report (sizes, a, θ*, k, the k(θ) curve, times, digests).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Everything a run reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Points.
    pub n: usize,
    /// Their dimension.
    pub dim: usize,
    /// The scale constant used.
    pub a: f64,
    /// The threshold used, percent.
    pub threshold_percent: u32,
    /// Clusters, singletons included.
    pub k: u32,
    /// Clusters of more than one point.
    pub k_non_singleton: u32,
    /// `(p, k)` over the grid.
    pub curve: Vec<(u32, u32)>,
    /// SHA-256 of the full hit matrix (i32 LE, diagonal T).
    pub hits_sha256: String,
    /// SHA-256 of the final state (LE, working type).
    pub state_sha256: String,
    /// Seconds per stage.
    pub seconds: std::collections::BTreeMap<&'static str, f64>,
    /// Labels.
    #[serde(skip)]
    pub labels: Vec<u32>,
}

/// The threshold option: `None` for auto.
pub fn parse_threshold(s: &str) -> Result<Option<u32>> {
    if s == "auto" {
        return Ok(None);
    }
    match s.trim_end_matches('%').parse::<u32>() {
        Ok(p) if p < 100 => Ok(Some(p)),
        _ => anyhow::bail!("--threshold '{s}': expected auto or a percent 0..99"),
    }
}

/// Clusters `p` on the CPU with working type `T`.
pub fn cluster_cpu<T: Real + Send + Sync>(p: &Points, a: Option<f64>, c: &ClusterConfig) -> Result<Report> {
    use std::time::Instant;
    let mut seconds = std::collections::BTreeMap::new();
    let t0 = Instant::now();
    let a = match a {
        Some(a) if a.is_finite() && a > 0.0 => a,
        Some(a) => anyhow::bail!("--scale {a}: must be a positive number"),
        None => scale::scale(p)?,
    };
    seconds.insert("scale", t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    let w = weights::dense::<T>(p, a)?;
    seconds.insert("weights", t0.elapsed().as_secs_f64());
    let mode = match c.sync {
        SyncArg::Phase => SyncMode::Phase,
        SyncArg::Fragmentary if c.eps.is_finite() && c.eps > 0.0 => SyncMode::Fragmentary(T::from_f64(c.eps)),
        SyncArg::Fragmentary => anyhow::bail!("--eps {}: must be a positive number", c.eps),
    };
    let t0 = Instant::now();
    let tr = cpu::run(&w, c.seed, c.transient, c.iters, mode);
    seconds.insert("dynamics and sync", t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    let cl = clusters::cluster(
        p.n,
        &tr.hits,
        c.iters,
        &clusters::grid(c.sync == SyncArg::Phase),
        parse_threshold(&c.threshold)?,
    )?;
    seconds.insert("clusters", t0.elapsed().as_secs_f64());
    Ok(Report {
        n: p.n,
        dim: p.dim,
        a,
        threshold_percent: cl.p,
        k: cl.k,
        k_non_singleton: cl.k_non_singleton,
        curve: cl.curve,
        hits_sha256: digest::hits(p.n, &tr.hits, c.iters),
        state_sha256: digest::state(&tr.state),
        seconds,
        labels: cl.labels,
    })
}
