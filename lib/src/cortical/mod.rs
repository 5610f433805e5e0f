//! The cortical-column network on the host (spec `shared/specs/cortical.md`): data and the LGN,
//! the network file, the CPU drivers (single thread and rayon), the GPU variants, training,
//! evaluation, the benchmark and the multi-device profiler.

pub mod bench;
#[cfg(feature = "cli")]
pub mod bench_figure;
mod config;
pub mod cpu;
pub mod data;
#[cfg(feature = "cli")]
pub mod features;
pub mod gpu;
pub mod model;
pub mod network;
pub mod quality;
pub mod split;

use anyhow::{bail, Result};
use neurobits_core::cortical::{digest, lgn::THETA, train, Geometry, Learner, Protocol, Schedule};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use crate::device::DeviceChoice;
pub use config::Config;
pub use network::Network;

/// Level schedule on the command line (D-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ScheduleArg {
    /// Each level reads the level below of the same step (the default).
    Synchronous,
    /// Each level reads the level below of the step before (double buffer).
    Pipelined,
}

impl From<ScheduleArg> for Schedule {
    fn from(s: ScheduleArg) -> Self {
        match s {
            ScheduleArg::Synchronous => Schedule::Synchronous,
            ScheduleArg::Pipelined => Schedule::Pipelined,
        }
    }
}

/// GPU variant on the command line (the pipelined one follows from `--schedule pipelined`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum VariantArg {
    /// One launch per level, bottom first.
    PerLevel,
    /// A persistent grid popping a work queue, with ready flags.
    Queue,
    /// The per-level launches captured once as a CUDA graph, replayed each step.
    Graph,
}

impl VariantArg {
    /// The GPU variant for `schedule`.
    pub fn for_schedule(self, schedule: ScheduleArg) -> neurobits_gpu_host::cortical::Variant {
        use neurobits_gpu_host::cortical::Variant;
        match (schedule, self) {
            (ScheduleArg::Pipelined, _) => Variant::Pipelined,
            (_, VariantArg::PerLevel) => Variant::PerLevel,
            (_, VariantArg::Queue) => Variant::Queue,
            (_, VariantArg::Graph) => Variant::Graph,
        }
    }
}

/// The images of `cortical train` and `cortical eval`, and the training and test lists taken
/// from them.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ImageArgs {
    /// Images: sklearn's digits CSV (`data/digits/digits.csv.gz`, fetched by `make setup`) or an
    /// IDX image file with its `labels-idx1` sibling.
    #[cfg_attr(feature = "cli", arg(short = 'i', long = "input", alias = "data"))]
    pub data: PathBuf,
    /// Training images per class (the first ones of each class in file order): the list trained
    /// on and judged for memorisation, and the readout's reference.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub train_per_class: usize,
    /// Test images per class for the nearest-feature readout (the next ones of each class).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50))]
    pub test_per_class: usize,
    /// Pixel replication per axis before the LGN (2 turns 8x8 digits into 16x16).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub upsample: usize,
}

/// `neurobits cortical train`: the network, the data and the protocol of spec §3–4.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct TrainConfig {
    /// The images and the lists taken from them.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub images: ImageArgs,
    /// Levels L of the tree (2^L - 1 hypercolumns).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 3))]
    pub levels: u32,
    /// Minicolumns M per hypercolumn (2M inputs each), 1..=128.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 16))]
    pub minicolumns: usize,
    /// Passes over the training list.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 60))]
    pub epochs: u32,
    /// Consecutive learning steps per image.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 4))]
    pub exposure: u32,
    /// Seed of the initial weights, random firing and shuffles.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// LTD step β in [0, 1] (0.5 canonical; 0 = the paper's §5.2 reading, `--ltd-mode none` of
    /// the spec).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0.5))]
    pub beta: f64,
    /// Level schedule.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = ScheduleArg::Synchronous))]
    pub schedule: ScheduleArg,
    /// Where to train.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    pub device: DeviceChoice,
    /// On a GPU: per-level (one launch per level) or queue (persistent work queue) for the
    /// synchronous schedule; the pipelined schedule always runs as one double-buffered launch.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = VariantArg::PerLevel))]
    pub variant: VariantArg,
    /// On the CPU: one thread (the paper's baseline) instead of all cores.
    #[cfg_attr(feature = "cli", arg(long))]
    pub single_thread: bool,
    /// Write the results (digests, quality, per-level winners, timings) as JSON here.
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: Option<PathBuf>,
    /// Save the trained network here.
    #[cfg_attr(feature = "cli", arg(short, long))]
    pub out: Option<PathBuf>,
}

impl TrainConfig {
    /// The library configuration these flags ask for.
    pub fn config(&self) -> Config {
        Config {
            levels: self.levels,
            minicolumns: self.minicolumns,
            epochs: self.epochs,
            exposure: self.exposure,
            seed: self.seed,
            beta: self.beta,
            schedule: self.schedule,
            upsample: self.images.upsample,
            variant: self.variant,
        }
    }
}

/// What a training run reports.
#[derive(Clone, Debug, Serialize)]
pub struct TrainReport {
    /// Levels.
    pub levels: usize,
    /// Minicolumns.
    pub minicolumns: usize,
    /// Hypercolumns.
    pub hypercolumns: usize,
    /// Training images.
    pub train_images: usize,
    /// Learning steps run.
    pub steps: u64,
    /// Schedule.
    pub schedule: ScheduleArg,
    /// Where it ran.
    pub device: String,
    /// SHA-256 of the weights (spec §4).
    pub weights_sha256: String,
    /// SHA-256 of the evaluation winners over the training list (spec §4).
    pub winners_sha256: String,
    /// Fraction of bottom inputs that are active (LGN density).
    pub bottom_density: f64,
    /// Memorisation of the training list.
    pub train: quality::Memorisation,
    /// Readout accuracy on the test list.
    pub test_accuracy: f64,
    /// Readout NMI on the test list.
    pub test_nmi: f64,
    /// The random-weights baseline (same seed): memorisation and test readout `(accuracy, NMI)`.
    pub random_baseline: (quality::Memorisation, f64, f64),
    /// Seconds per learning step (mean over training).
    pub seconds_per_step: f64,
    /// Seconds of training.
    pub train_seconds: f64,
    /// Evaluation winners per training image, per level (`-1` silent).
    pub winners: Vec<Vec<Vec<i32>>>,
}

/// Training images, test images and their bottom inputs.
pub struct Prepared {
    /// Shape.
    pub geo: Geometry,
    /// Training bottom inputs.
    pub train_x: Vec<u64>,
    /// Training labels.
    pub train_labels: Vec<u32>,
    /// Test bottom inputs.
    pub test_x: Vec<u64>,
    /// Test labels.
    pub test_labels: Vec<u32>,
}

/// Reads the data and builds the bottom inputs of `c`.
pub fn prepare(c: &TrainConfig) -> Result<Prepared> {
    let geo = Geometry::new(c.levels, c.minicolumns).map_err(|e| anyhow::anyhow!("{e}"))?;
    let im = &c.images;
    if im.train_per_class == 0 {
        bail!("--train-per-class must be at least 1");
    }
    if !(0.0..=1.0).contains(&c.beta) {
        bail!("--beta must be in [0, 1]");
    }
    let ds = data::Dataset::read(&im.data)?;
    let (train_ids, test_ids) = ds.split(im.train_per_class, im.test_per_class);
    Ok(Prepared {
        geo,
        train_x: ds.bottom(&geo, &train_ids, im.upsample, THETA)?,
        train_labels: train_ids.iter().map(|&i| ds.labels[i]).collect(),
        test_x: ds.bottom(&geo, &test_ids, im.upsample, THETA)?,
        test_labels: test_ids.iter().map(|&i| ds.labels[i]).collect(),
    })
}

/// Trains on the CPU (`threads`) and returns the network and the seconds spent.
pub fn train_cpu(p: &Prepared, c: &Config, threads: cpu::Threads) -> Result<(Network, f64)> {
    let mut net = Network::new(p.geo, c.seed)?;
    let mut trainer = cpu::CpuTrainer::new(&mut net, &p.train_x, c.schedule.into(), threads);
    trainer.ltd = c.ltd();
    let seconds = run_protocol(&mut trainer, p, c, |_| Ok(()))?;
    Ok((net, seconds))
}

/// Runs `c`'s protocol over the training list on any target, with a progress bar in epochs;
/// `finish` waits for the target to be done before the clock stops. Returns the seconds.
pub fn run_protocol<L: Learner>(
    learner: &mut L,
    p: &Prepared,
    c: &Config,
    finish: impl FnOnce(&mut L) -> Result<()>,
) -> Result<f64>
where
    anyhow::Error: From<L::Error>,
{
    let pb = crate::progress::bar(c.epochs as u64, "training epochs");
    let start = Instant::now();
    let protocol = Protocol { epochs: c.epochs, exposure: c.exposure, seed: c.seed };
    train(learner, &mut vec![0u32; p.train_labels.len()], &protocol, |_| pb.inc(1))?;
    finish(learner)?;
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok(seconds)
}

/// Evaluates `net` on the training and test lists and fills the report.
pub fn report(net: &mut Network, p: &Prepared, c: &Config, device: String, seconds: f64) -> TrainReport {
    let geo = p.geo;
    let n_hc = geo.hypercolumns();
    let levels: Vec<(usize, usize)> = (0..geo.levels()).map(|l| (geo.offset(l), geo.level_len(l))).collect();
    let judge = |net: &mut Network| {
        let winners = cpu::evaluate(net, &p.train_x, cpu::Threads::Rayon);
        let top: Vec<i32> = winners.chunks(n_hc).map(|w| w[n_hc - 1]).collect();
        let mem = quality::memorisation(&top, &p.train_labels, &winners, n_hc, &levels);
        let (ftrain, ftest) = (cpu::features(net, &p.train_x), cpu::features(net, &p.test_x));
        let (acc, nmi) = quality::readout(&ftrain, &p.train_labels, &ftest, &p.test_labels, n_hc);
        (winners, mem, acc, nmi)
    };
    let (winners, train, test_accuracy, test_nmi) = judge(net);
    let random_baseline = match Network::random(geo, c.seed) {
        Ok(mut r) => {
            let (_, m, a, n) = judge(&mut r);
            (m, a, n)
        }
        Err(_) => (train.clone(), f64::NAN, f64::NAN),
    };
    let ones: u64 = p.train_x.iter().map(|w| w.count_ones() as u64).sum();
    TrainReport {
        levels: geo.levels(),
        minicolumns: geo.minicolumns(),
        hypercolumns: n_hc,
        train_images: p.train_labels.len(),
        steps: net.t,
        schedule: c.schedule,
        device,
        weights_sha256: net.weights_sha256(),
        winners_sha256: crate::io::hex(&digest::winners_sha256(&geo, &winners)),
        bottom_density: ones as f64 / (p.train_labels.len().max(1) * geo.level_len(0) * geo.inputs()) as f64,
        train,
        test_accuracy,
        test_nmi,
        random_baseline,
        seconds_per_step: seconds / net.t.max(1) as f64,
        train_seconds: seconds,
        winners: levels.iter().map(|&(o, n)| winners.chunks(n_hc).map(|w| w[o..o + n].to_vec()).collect()).collect(),
    }
}

/// Prints a report's digests, memorisation, readout and random baseline (train and eval alike).
fn print_quality(r: &TrainReport) -> Result<()> {
    outln!("weights_sha256 {}\nwinners_sha256 {}", r.weights_sha256, r.winners_sha256)?;
    outln!(
        "train: coverage {:.3}, distinct top winners {}, purity {:.3}, NMI {:.3}; test readout: accuracy {:.3}, NMI {:.3}",
        r.train.coverage,
        r.train.distinct_top,
        r.train.purity,
        r.train.nmi,
        r.test_accuracy,
        r.test_nmi
    )?;
    outln!(
        "random-weights baseline: coverage {:.3}; test readout: accuracy {:.3}, NMI {:.3}",
        r.random_baseline.0.coverage,
        r.random_baseline.1,
        r.random_baseline.2
    )?;
    Ok(())
}

/// `neurobits cortical eval`: a saved network judged on a data set (spec §11.5).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct EvalConfig {
    /// A network saved by `cortical train --out`.
    #[cfg_attr(feature = "cli", arg(long = "model", alias = "net"))]
    pub net: PathBuf,
    /// The images and the lists taken from them (as for `cortical train`).
    #[cfg_attr(feature = "cli", command(flatten))]
    pub images: ImageArgs,
    /// Write the results as JSON here (the train report's fields; no training time).
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: Option<PathBuf>,
}

/// Runs `neurobits cortical eval`: strict memorisation of the training list and the
/// nearest-feature readout on the test list, with the digests, as `train` prints them.
pub fn run_eval(e: &EvalConfig) -> Result<()> {
    if let Some(p) = &e.json {
        crate::io::atomic::check_writable(p)?;
    }
    let mut net = Network::load(&e.net)?;
    let c = TrainConfig {
        images: e.images.clone(),
        levels: net.geo.levels() as u32,
        minicolumns: net.geo.minicolumns(),
        epochs: 0,
        exposure: 0,
        seed: net.seed,
        beta: 0.5,
        schedule: ScheduleArg::Synchronous,
        device: DeviceChoice::Cpu,
        variant: VariantArg::PerLevel,
        single_thread: false,
        json: None,
        out: None,
    };
    let p = prepare(&c)?;
    let r = report(&mut net, &p, &c.config(), crate::device::Cpu::new(None)?.name(), 0.0);
    outln!(
        "cortical eval: {} levels x {} minicolumns, {} learning steps done; {} training and {} test images",
        r.levels,
        r.minicolumns,
        r.steps,
        r.train_images,
        p.test_labels.len()
    )?;
    print_quality(&r)?;
    if let Some(path) = &e.json {
        crate::io::json::write(path, &r)?;
    }
    Ok(())
}

/// `neurobits cortical train`.
pub fn run_train(c: &TrainConfig) -> Result<()> {
    if let Some(p) = &c.json {
        crate::io::atomic::check_writable(p)?;
    }
    if let Some(p) = &c.out {
        crate::io::atomic::check_writable(p)?;
    }
    let p = prepare(c)?;
    let threads = if c.single_thread { cpu::Threads::Single } else { cpu::Threads::Rayon };
    let device = crate::device::Device::open(c.device)?;
    let variant = c.variant.for_schedule(c.schedule);
    let (mut net, seconds, device) = device.run(
        |g| {
            let (n, s) = gpu::train_gpu(g, &p, &c.config(), variant)?;
            Ok((n, s, format!("gpu ({}, {variant:?})", g.name())))
        },
        |_| {
            let (n, s) = train_cpu(&p, &c.config(), threads)?;
            Ok((n, s, if c.single_thread { "cpu (1 thread)".into() } else { crate::device::Cpu::new(None)?.name() }))
        },
    )?;
    let r = report(&mut net, &p, &c.config(), device, seconds);
    outln!(
        "cortical: {} levels x {} minicolumns ({} hypercolumns), {} training images, {} steps on {} in {:.3} s ({:.1} us/step)",
        r.levels,
        r.minicolumns,
        r.hypercolumns,
        r.train_images,
        r.steps,
        r.device,
        seconds,
        r.seconds_per_step * 1e6
    )?;
    print_quality(&r)?;
    if let Some(path) = &c.out {
        net.save(path)?;
    }
    if let Some(path) = &c.json {
        crate::io::json::write(path, &r)?;
    }
    Ok(())
}
