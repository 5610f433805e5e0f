//! `neurobits ocnn cluster`: cluster the points of a file in any format the library reads.

use clap::Args;
use neurobits::device::Target;
use neurobits::io::atomic::check_writable;
use neurobits::model::Model;
use neurobits::ocnn::{model::Ocnn, Config, Dtype, Links, Select, SyncArg, Variant};
use std::path::PathBuf;

/// `ocnn cluster`.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Points: NPY, NPZ, CSV/TSV (a header row is skipped), whitespace text (FCPS `.data`;
    /// `#`/`%` lines skipped) or IDX; `-` for standard input.
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Labels: one per input point, clusters numbered by their smallest member (`-`: standard
    /// output).
    #[arg(short, long)]
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
    /// Link threshold: `auto` (chosen by `--select`) or a percent P.
    #[arg(long, default_value = "auto", value_parser = threshold)]
    // Spelled out so that clap takes the parser's `Option` as the value, not as "optional flag".
    pub threshold: std::option::Option<u32>,
    /// The automatic rule: `consensus` (the most stable clusters at each of `--scales`, and of
    /// those the clustering that agrees best with the others), `stable` (the most stable clusters
    /// over the thresholds at the scale a alone, as HDBSCAN selects them) or `plateau` (the
    /// longest run of equal k, the first rule).
    #[arg(long, value_enum, default_value_t = Select::Consensus)]
    pub select: Select,
    /// Coupling scales of `--select consensus`, ascending: multiples of the scale a (above 3-D
    /// without `--scale`, of the coupling perplexity 20 that sets a); each scale is `--restarts`
    /// whole runs of the dynamics; `--scales 1 --restarts 1` is `--select stable`.
    #[arg(long, value_name = "F,F,…", value_delimiter = ',', default_values_t = neurobits_core::ocnn::DEFAULT_SCALE_FACTORS)]
    pub scales: Vec<f64>,
    /// Initial states per scale of `--select consensus` (the seed, then streams of it).
    #[arg(long, default_value_t = neurobits_core::ocnn::DEFAULT_RESTARTS, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub restarts: u32,
    /// The pairs `--select consensus` may link: `mutual` (mutual k-nearest neighbours, k = ⌈log₂ N⌉,
    /// and each point with its nearest) or `all` (every pair).
    #[arg(long, value_enum, default_value_t = Links::Mutual)]
    pub links: Links,
    /// Smallest cluster of `--select consensus`/`stable` (default: `stable` N/10, at least 5, half
    /// of fewer than 10 points; `consensus` chooses among N/10, N/20 and N/40, a smaller one only
    /// when its runs agree clearly better).
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(2..))]
    pub min_cluster: Option<u32>,
    /// Scale constant a (default: from the Delaunay triangulation up to 3-D; above, the a at
    /// which each neuron's normalised coupling has a median perplexity of 20).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Couple only pairs within R·a (sparse rows; synchronization counted on those pairs only);
    /// default: dense coupling of every pair, as in the paper.
    #[arg(long, value_name = "R")]
    pub cutoff: Option<f64>,
    /// Working type of the dynamics.
    #[arg(long, value_enum, default_value_t = Dtype::F32)]
    pub dtype: Dtype,
    /// GPU decomposition of the update (all give the same bits; lane-rows is the fastest from
    /// a few thousand points up, x-threads below).
    #[arg(long, value_enum, default_value_t = Variant::LaneRows)]
    pub variant: Variant,
    /// Stop once the clustering, read every 64 observed iterations, has stayed the same for
    /// WINDOW checks in a row (default: all --iters iterations; the report's observed_iters says
    /// where it stopped).
    #[arg(long, value_name = "WINDOW", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub early_stop: Option<u32>,
    /// Where to compute: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
    /// Also write a JSON report (sizes, a, θ*, k, the k(θ) curve, times, digests).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also save the clustering as a model file (configuration, report, labels).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Also write clusters.svg (the points coloured by cluster; the first two coordinates for
    /// more than 2-D) and k-theta.svg (clusters against the threshold) into this folder.
    #[arg(long)]
    pub plots: Option<PathBuf>,
}

/// `--threshold`: `auto` or a percent 0..99.
fn threshold(s: &str) -> Result<Option<u32>, String> {
    if s == "auto" {
        return Ok(None);
    }
    match s.trim_end_matches('%').parse::<u32>() {
        Ok(p) if p < 100 => Ok(Some(p)),
        _ => Err(format!("'{s}': expected auto or a percent 0..99")),
    }
}

impl ClusterArgs {
    /// The library configuration these flags ask for.
    pub fn config(&self) -> Config {
        Config {
            seed: self.seed,
            iters: self.iters,
            transient: self.transient,
            sync: self.sync,
            eps: self.eps,
            threshold: self.threshold,
            select: self.select,
            min_cluster: self.min_cluster,
            scales: self.scales.clone(),
            restarts: self.restarts,
            links: self.links,
            scale: self.scale,
            cutoff: self.cutoff,
            dtype: self.dtype,
            variant: self.variant,
            early_stop: self.early_stop,
        }
    }
}

/// Runs `ocnn cluster`: labels to `--out`, the report to `--json`, a summary on stderr.
pub fn run(c: &ClusterArgs) -> anyhow::Result<()> {
    let config = c.config();
    config.validate()?;
    for p in [Some(&c.out), c.json.as_ref(), c.model.as_ref()].into_iter().flatten() {
        check_writable(p)?;
    }
    if let Some(dir) = &c.plots {
        neurobits::io::atomic::check_folder(dir)?;
    }
    let p = neurobits::ocnn::points::load_with(&c.input, &c.read.options())?;
    let mut ocnn = Ocnn::new(config).with_device(c.device);
    ocnn.fit(&p)?;
    let report = ocnn.report()?;
    neurobits::io::atomic::write_atomic(&c.out, |w| {
        for l in &report.labels {
            w.write_all(format!("{l}\n").as_bytes())?;
        }
        Ok(())
    })?;
    if let Some(j) = &c.json {
        let mut v = serde_json::to_value(report)?;
        v["a"] = serde_json::Value::String(format!("{:.17}", report.a));
        v["seed"] = c.seed.into();
        v["iters"] = c.iters.into();
        v["transient"] = c.transient.into();
        v["sync"] = format!("{:?}", c.sync).to_lowercase().into();
        v["dtype"] = format!("{:?}", c.dtype).to_lowercase().into();
        v["input"] = c.input.display().to_string().into();
        v["cutoff"] = c.cutoff.into();
        neurobits::io::json::write(j, &v)?;
    }
    if let Some(m) = &c.model {
        ocnn.save(m)?;
    }
    if let Some(dir) = &c.plots {
        neurobits::ocnn::plots(dir, &p, report, &c.input.display().to_string())?;
    }
    if report.uncoupled > 0 {
        eprintln!(
            "warning: {} of {} points keep no coupling at the smallest scale tried (every weight rounds to 0 in {}): \
             left out of the dynamics, each its own cluster (--scale or --dtype f64 would couple them)",
            report.uncoupled,
            report.n,
            format!("{:?}", c.dtype).to_lowercase()
        );
    }
    if report.observed_iters < c.iters {
        neurobits::noteln!(
            "early stop: the clustering was stable at iteration {} of {}",
            report.observed_iters,
            c.iters
        );
    }
    let chosen = if report.agreement.is_empty() {
        String::new()
    } else {
        let n = report.agreement.len();
        format!(" (scale factor {}, seed {}: the best agreeing of {n} runs)", report.scale_factor, report.run_seed)
    };
    neurobits::noteln!(
        "{} points in {}-D, a = {:.17}{chosen}: {} clusters ({} of more than one point) at threshold {} % -> {}",
        report.n,
        report.dim,
        report.a,
        report.k,
        report.k_non_singleton,
        report.threshold_percent,
        c.out.display()
    );
    Ok(())
}
