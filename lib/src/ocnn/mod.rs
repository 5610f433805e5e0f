//! The OCNN on the host: point files, the Delaunay scale, the weights (computed once here and
//! shipped to every target), the CPU driver, clustering and the spec's digests.

pub mod bench;
pub mod classes;
pub mod clusters;
pub mod coupling;
pub mod cpu;
pub mod digest;
pub mod early;
pub mod experiment;
pub mod links;
pub mod model;
pub mod near;
mod pipeline;
pub mod planar;
pub mod points;
pub mod prepare;
pub mod scale;
mod strips;
pub mod uncoupled;
pub mod weights;

use anyhow::Result;
use neurobits_gpu_host::ocnn::{Decomposition, GpuReal};
use neurobits_gpu_host::Gpu;

pub use clusters::Clustering;
pub use pipeline::cluster_on;
use points::Points;

/// Synchronization measure on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SyncArg {
    /// Phase synchronization: both outputs rose, or both did not (the default).
    Phase,
    /// Fragmentary synchronization: outputs within ε.
    Fragmentary,
}

/// The GPU decomposition on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// A warp per neuron (the paper's X-threads with a full warp).
    XThreads,
    /// One thread per neuron.
    ThreadPerNeuron,
    /// Eight threads per neuron with an ordered combine.
    YThreads,
    /// A warp per neuron over each lane's nonzero weights only (the same bits; most weights of a
    /// large set round to zero).
    LaneRows,
}

impl From<Variant> for Decomposition {
    fn from(v: Variant) -> Self {
        match v {
            Variant::XThreads => Decomposition::XThreads,
            Variant::ThreadPerNeuron => Decomposition::ThreadPerNeuron,
            Variant::YThreads => Decomposition::YThreads,
            Variant::LaneRows => Decomposition::LaneRows,
        }
    }
}

/// How the automatic clustering chooses (without a fixed threshold).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Select {
    /// The most stable clusters at each of the coupling scale factors `scales`, each
    /// from `restarts` initial states, and of those clusterings the one that agrees best with the
    /// others (the median partition under the adjusted Rand index;
    /// `neurobits_core::ocnn::most_agreeing`; the default).
    #[default]
    Consensus,
    /// The most stable clusters over the thresholds (excess of mass, as HDBSCAN selects) at the
    /// scale `a` alone (the default before the scales were chosen).
    Stable,
    /// The middle of the longest run of equal cluster counts, singletons counted (the first rule).
    Plateau,
}

/// Which pairs the consensus selection may link (`neurobits_core::ocnn::mutual_pairs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Links {
    /// Only pairs of mutual k-nearest neighbours, k = ⌈log₂ N⌉ (and each point with its
    /// nearest neighbour): the default.
    #[default]
    Mutual,
    /// Every pair (the consensus before the link graph).
    All,
}

/// Working type of the dynamics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Dtype {
    /// 32-bit floats (the paper's choice; the default).
    F32,
    /// 64-bit floats.
    F64,
}

/// The OCNN's configuration: everything `fit` needs besides the points and the device.
///
/// ```
/// let c = neurobits::ocnn::Config { threshold: Some(65), ..Default::default() };
/// assert!(c.validate().is_ok());
/// assert!(neurobits::ocnn::Config { iters: 0, ..c }.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Config {
    /// Seed of the initial state (SplitMix64).
    pub seed: u64,
    /// Observed iterations T (1..=10⁶).
    pub iters: u32,
    /// Iterations run before observing (0..=10⁶).
    pub transient: u32,
    /// Synchronization measure.
    pub sync: SyncArg,
    /// ε of fragmentary synchronization (positive).
    pub eps: f64,
    /// Link threshold in percent (0..=99); `None`: automatic, by `select`.
    pub threshold: Option<u32>,
    /// The automatic rule (when `threshold` is `None`).
    pub select: Select,
    /// Smallest cluster of the stable selection; `None`: `max(N/10, min(5, N/2))` for
    /// `Select::Stable`, and for the consensus the one of N/10, N/20, N/40 (at least 5) whose runs
    /// agree best, a smaller one only by more than `neurobits_core::ocnn::MIN_CLUSTER_MARGIN`
    /// ([`Config::rules`]; the report's `min_cluster` says which).
    pub min_cluster: Option<u32>,
    /// The coupling scale factors the consensus selection tries (ascending; the first wins ties):
    /// multiples of the scale `a`, or above 3-D without a given scale, of the coupling perplexity
    /// that sets `a` (`scale::PERPLEXITY`); other rules run at `a` alone.
    pub scales: Vec<f64>,
    /// Initial states per scale of the consensus selection: the seed, then
    /// `neurobits_core::ocnn::restart_seed(seed, r)` for `r = 1, …` (1..=8).
    pub restarts: u32,
    /// The pairs the consensus selection may link (other rules and `cutoff` link every coupled
    /// pair).
    pub links: Links,
    /// Scale constant a (positive); `None`: from the Delaunay triangulation.
    pub scale: Option<f64>,
    /// Couple only pairs within R·a (sparse rows; synchronization counted on those pairs only);
    /// `None`: dense coupling of every pair, as in the paper.
    pub cutoff: Option<f64>,
    /// Working type of the dynamics.
    pub dtype: Dtype,
    /// GPU decomposition of the update (all give the same bits; lane-rows is the fastest from a
    /// few thousand points up, x-threads below).
    pub variant: Variant,
    /// Early stop: end the run once the clustering read every 64 observed iterations has stayed
    /// the same for this many checks in a row (`neurobits_core::ocnn::EarlyStop`; the clustering
    /// read is the first rule of [`Config::rules`], at the default consensus the smallest cluster
    /// `N/10`); `None`: all `iters` iterations.
    pub early_stop: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            iters: 1000,
            transient: 0,
            sync: SyncArg::Phase,
            eps: 0.2,
            threshold: None,
            select: Select::Consensus,
            min_cluster: None,
            scales: neurobits_core::ocnn::DEFAULT_SCALE_FACTORS.to_vec(),
            restarts: neurobits_core::ocnn::DEFAULT_RESTARTS,
            links: Links::Mutual,
            scale: None,
            cutoff: None,
            dtype: Dtype::F32,
            variant: Variant::LaneRows,
            early_stop: None,
        }
    }
}

impl Config {
    /// Checks every field, before any data is read.
    pub fn validate(&self) -> crate::Result<()> {
        use crate::Error;
        if !(1..=1_000_000).contains(&self.iters) {
            return Err(Error::config("iters", self.iters, "must be in 1..=1000000"));
        }
        if self.transient > 1_000_000 {
            return Err(Error::config("transient", self.transient, "must be in 0..=1000000"));
        }
        if self.sync == SyncArg::Fragmentary && !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(Error::config("eps", self.eps, "must be a positive number"));
        }
        if let Some(t) = self.threshold.filter(|&t| t >= 100) {
            return Err(Error::config("threshold", t, "must be a percent in 0..=99 (or automatic)"));
        }
        if let Some(m) = self.min_cluster.filter(|&m| m < 2) {
            return Err(Error::config("min_cluster", m, "must be at least 2 points"));
        }
        if self.scales.is_empty() || self.scales.len() > MAX_SCALES {
            return Err(Error::config("scales", self.scales.len(), "must list 1 to 8 scale factors"));
        }
        if let Some(f) = self.scales.iter().find(|f| !(f.is_finite() && **f > 0.0)) {
            return Err(Error::config("scales", f, "must be positive numbers (scale factors)"));
        }
        if self.scales.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::config("scales", format!("{:?}", self.scales), "must be ascending"));
        }
        if !(1..=8).contains(&self.restarts) {
            return Err(Error::config("restarts", self.restarts, "must be 1..=8 initial states per scale"));
        }
        if let Some(a) = self.scale.filter(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(Error::config("scale", a, "must be a positive number"));
        }
        if let Some(r) = self.cutoff.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return Err(Error::config("cutoff", r, "must be a positive number (in units of a)"));
        }
        if let Some(w) = self.early_stop.filter(|w| !(1..=1000).contains(w)) {
            return Err(Error::config("early_stop", w, "must be a window of 1..=1000 checks"));
        }
        Ok(())
    }
}

/// Most scale factors of one consensus selection (each is a whole run of the dynamics).
pub const MAX_SCALES: usize = 8;

impl Config {
    /// The runs the clustering makes, `(scale factor, seed)`, scale by scale: `scales` ×
    /// `restarts` for the consensus selection, else `(1, seed)` alone.
    pub fn candidates(&self) -> Vec<(f64, u64)> {
        match (self.threshold, self.select) {
            (None, Select::Consensus) => self
                .scales
                .iter()
                .flat_map(|&f| (0..self.restarts).map(move |r| (f, neurobits_core::ocnn::restart_seed(self.seed, r))))
                .collect(),
            _ => vec![(1.0, self.seed)],
        }
    }

    /// The clustering rules a clustering of `n` points by `runs` runs of the dynamics tries: the
    /// default consensus (no `min_cluster` given, several runs) selects at each smallest cluster
    /// of `neurobits_core::ocnn::min_cluster_candidates` and keeps one by the runs' agreement
    /// (`neurobits_core::ocnn::pick_min_cluster`); otherwise [`Config::rule`] alone.
    pub fn rules(&self, n: usize, runs: usize) -> Vec<clusters::Rule> {
        match (self.rule(n), self.select, self.min_cluster) {
            (clusters::Rule::Stable { attach_floor, .. }, Select::Consensus, None) if runs > 1 => {
                let each = neurobits_core::ocnn::min_cluster_candidates(n).into_iter();
                each.map(|min_cluster| clusters::Rule::Stable { min_cluster, attach_floor }).collect()
            }
            (rule, ..) => vec![rule],
        }
    }

    /// The clustering rule for `n` points: a fixed threshold, or the automatic `select`.
    pub fn rule(&self, n: usize) -> clusters::Rule {
        use clusters::Rule;
        match (self.threshold, self.select) {
            (Some(p), _) => Rule::Fixed(p),
            (None, Select::Plateau) => Rule::Plateau,
            (None, Select::Stable | Select::Consensus) => Rule::Stable {
                min_cluster: self.min_cluster.unwrap_or(neurobits_core::ocnn::default_min_cluster(n)),
                // Ten points above the grid's lowest threshold: phase agreement of unrelated
                // neurons is 50 %, so links within a few percent of it are chance.
                attach_floor: clusters::grid(self.sync == SyncArg::Phase)[0] + 10,
            },
        }
    }
}

/// Everything a run reports.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    /// SHA-256 of the full hit matrix (i32 LE, diagonal T); with `--cutoff`, of the coupled
    /// pairs' `(i, j, hits)` as u32 LE.
    pub hits_sha256: String,
    /// Coupled pairs `i < j` (`n(n−1)/2` when dense).
    pub coupled_pairs: usize,
    /// SHA-256 of the final state (LE, working type).
    pub state_sha256: String,
    /// Seconds per stage (summed over the scales tried).
    pub seconds: std::collections::BTreeMap<String, f64>,
    /// The kept run's scale factor (of the base scale `a`, or above 3-D of its perplexity; 1
    /// without consensus).
    #[serde(default = "one")]
    pub scale_factor: f64,
    /// The kept run's initial-state seed (the configured seed without consensus).
    #[serde(default)]
    pub run_seed: u64,
    /// Each run of the consensus selection: its scale factor, seed and mean adjusted Rand index
    /// against the other runs' clusterings (`None` where it found fewer than two clusters);
    /// empty without consensus.
    #[serde(default)]
    pub agreement: Vec<Candidate>,
    /// Iterations observed: `iters`, or where the early stop ended the run (the hits and the
    /// clustering are those of these iterations).
    #[serde(default)]
    pub observed_iters: u32,
    /// Labels.
    #[serde(skip)]
    pub labels: Vec<u32>,
    /// The smallest cluster of the kept clustering (the stable and consensus selections; the
    /// consensus chooses it among `neurobits_core::ocnn::min_cluster_candidates` unless
    /// `min_cluster` is given); `None` for a fixed threshold or the plateau rule.
    #[serde(default)]
    pub min_cluster: Option<u32>,
    /// Points left out of the dynamics because no weight of theirs survives at the scale
    /// (`C_i = 0` in the working type: each is a singleton, counted in `k`); the hits' digest and
    /// `coupled_pairs` are then those of the other points.
    #[serde(default)]
    pub uncoupled: usize,
}

impl Report {
    /// The report with `cl`'s clustering: its threshold, counts, curve and labels.
    pub(crate) fn with(self, cl: clusters::Clustering) -> Report {
        Report {
            threshold_percent: cl.p,
            k: cl.k,
            k_non_singleton: cl.k_non_singleton,
            curve: cl.curve,
            labels: cl.labels,
            ..self
        }
    }
}

/// One run of the consensus selection.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Scale factor (of the base scale, or above 3-D of its perplexity).
    pub factor: f64,
    /// Initial-state seed.
    pub seed: u64,
    /// Mean adjusted Rand index against the other runs; `None`: fewer than two clusters.
    pub agreement: Option<f64>,
}

fn one() -> f64 {
    1.0
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
pub fn cluster_cpu<T: GpuReal + Send + Sync>(p: &Points, a: Option<f64>, c: &Config) -> Result<Report> {
    cluster_on::<T>(p, a, c, None)
}

/// Clusters `p` in `c.dtype` with `c.scale` (the Delaunay scale when `None`), the dynamics and
/// synchronization on `gpu` when given, else on the CPU: [`cluster_on`] for the chosen type.
pub fn cluster(p: &Points, c: &Config, gpu: Option<&Gpu>) -> Result<Report> {
    match c.dtype {
        Dtype::F32 => cluster_on::<f32>(p, c.scale, c, gpu),
        Dtype::F64 => cluster_on::<f64>(p, c.scale, c, gpu),
    }
}

/// Writes `clusters.svg` and `k-theta.svg` for a run into `dir` (together, or neither).
#[cfg(feature = "plots")]
pub fn plots(dir: &std::path::Path, p: &Points, r: &Report, name: &str) -> Result<()> {
    use crate::plot::{line_chart, scatter, Labels, Series};
    let xy: Vec<(f64, f64)> = (0..p.n).map(|i| (p.point(i)[0], *p.point(i).get(1).unwrap_or(&0.0))).collect();
    let title = format!(
        "{name}: {} clusters ({} of more than one point), threshold {} %",
        r.k, r.k_non_singleton, r.threshold_percent
    );
    let axis = if p.dim > 2 { ("x1 (first two of the coordinates)", "x2") } else { ("x", "y") };
    let curve = Series::new("clusters", r.curve.iter().map(|&(p, k)| (p as f64, k as f64)).collect());
    crate::io::atomic::write_set(dir, &["clusters.svg", "k-theta.svg"], |d| {
        scatter(&d.join("clusters.svg"), &Labels { title: &title, x: axis.0, y: axis.1 }, &xy, &r.labels)?;
        let t = format!("{name}: clusters k against the threshold (chosen: {} %)", r.threshold_percent);
        line_chart(
            &d.join("k-theta.svg"),
            &Labels { title: &t, x: "threshold (% of iterations in phase)", y: "clusters k (log)" },
            &[curve],
            true,
        )
    })
}
