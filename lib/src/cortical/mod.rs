//! The cortical-column network on the host (spec `docs/manual/src/spec-cortical*.md`): data and the LGN,
//! the network file, the CPU drivers (single thread and rayon), the GPU variants, training,
//! evaluation, the benchmark and the multi-device profiler.

pub mod bench;
#[cfg(feature = "cli")]
pub mod bench_figure;
mod commands;
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
use neurobits_core::cortical::{digest, train, Geometry, Learner, Protocol, Schedule};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use crate::device::DeviceChoice;
pub use commands::{run_eval, run_train, EvalConfig};
pub use config::{
    check_lgn_threshold, check_training, Config, RuleArg, LGN_THRESHOLD_COMPETITIVE, MAX_EPOCHS, MAX_EXPOSURE,
    MAX_LGN_THRESHOLD, MAX_STEPS_PER_IMAGE,
};
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
    /// Training images per class: the first ones of each class in file order, among those not
    /// held out (default: all of them); the list trained on and the readout's reference.
    #[cfg_attr(feature = "cli", arg(long))]
    pub train_per_class: Option<usize>,
    /// Held-out test images per class: the last ones of each class in file order (the same
    /// list whatever --train-per-class is).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50))]
    pub test_per_class: usize,
    /// Validation images per class, carved out of the training images (the last ones before the
    /// test list): when set, the held-out scores are on them and the test list is not touched
    /// (choose constants with this, never on the test list).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub validation_per_class: usize,
    /// Pixel replication per axis before the LGN (2 turns 8x8 digits into 16x16).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2))]
    pub upsample: usize,
    /// The LGN cells' threshold θ: an on-off cell fires iff its centre–surround contrast d > θ,
    /// an off-on cell iff −d > θ (pixels 0…16); default 12 under the competitive rule (chosen on
    /// the validation list), 16 under the spec's (D-10); `cortical eval`: the network's, from its
    /// file.
    #[cfg_attr(feature = "cli", arg(long))]
    pub lgn_threshold: Option<i32>,
}

/// `neurobits cortical train`: the network, the data and the protocol of spec §3–4.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct TrainConfig {
    /// The images and the lists taken from them.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub images: ImageArgs,
    /// Levels L of the tree (2^L - 1 hypercolumns).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 5))]
    pub levels: u32,
    /// Minicolumns M per hypercolumn (2M inputs each), 1..=128.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 16))]
    pub minicolumns: usize,
    /// Passes over the training list.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 20))]
    pub epochs: u32,
    /// Consecutive learning steps per image.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub exposure: u32,
    /// Seed of the initial weights, random firing and shuffles.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// LTD step β in [0, 1] of `--rule spec` (0.5 canonical; 0 = the paper's §5.2 reading,
    /// `--ltd-mode none` of the spec).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0.5))]
    pub beta: f64,
    /// Learning rule: competitive (generalises; the default) or spec (the spec's D-3 … D-6,
    /// its digests).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = RuleArg::Competitive))]
    pub rule: RuleArg,
    /// Learning rate 2^-RATE of `--rule competitive`, 1..=15.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2))]
    pub rate: u32,
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
            rule: self.rule,
            rate: self.rate,
            schedule: self.schedule,
            upsample: self.images.upsample,
            lgn_threshold: self.images.lgn_threshold,
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
    /// The LGN threshold the images went through.
    pub lgn_threshold: i32,
    /// Memorisation of the training list (judged on the images trained on: not generalisation).
    pub train: quality::Memorisation,
    /// The held-out images (test list, or validation list with --validation-per-class).
    pub held_out: quality::HeldOut,
    /// Readout accuracy on the held-out list.
    pub test_accuracy: f64,
    /// Readout NMI on the held-out list.
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
    if im.train_per_class == Some(0) {
        bail!("--train-per-class must be at least 1");
    }
    if !(0.0..=1.0).contains(&c.beta) {
        bail!("--beta must be in [0, 1]");
    }
    if !(1..=15).contains(&c.rate) {
        bail!("--rate must be in 1..=15, got {}", c.rate);
    }
    config::check_lgn_threshold(im.lgn_threshold)?;
    let theta = c.config().lgn_threshold();
    let ds = data::Dataset::read(&im.data)?;
    let (train_ids, val_ids, test_ids) = ds.holdout(im.train_per_class, im.validation_per_class, im.test_per_class);
    let test_ids = if im.validation_per_class > 0 { val_ids } else { test_ids };
    if train_ids.is_empty() || test_ids.is_empty() {
        bail!("{}: the split leaves no training or no held-out images", im.data.display());
    }
    Ok(Prepared {
        geo,
        train_x: ds.bottom(&geo, &train_ids, im.upsample, theta)?,
        train_labels: train_ids.iter().map(|&i| ds.labels[i]).collect(),
        test_x: ds.bottom(&geo, &test_ids, im.upsample, theta)?,
        test_labels: test_ids.iter().map(|&i| ds.labels[i]).collect(),
    })
}

/// Trains on the CPU (`threads`) and returns the network and the seconds spent.
pub fn train_cpu(p: &Prepared, c: &Config, threads: cpu::Threads) -> Result<(Network, f64)> {
    let mut net = Network::new(p.geo, c.seed)?;
    (net.rule, net.lgn_threshold) = (c.rule(), c.lgn_threshold());
    let mut trainer = cpu::CpuTrainer::new(&mut net, &p.train_x, c.schedule.into(), threads);
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
    train(&mut Stoppable(learner), &mut vec![0u32; p.train_labels.len()], &protocol, |_| pb.inc(1))?;
    finish(learner)?;
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok(seconds)
}

/// A learner that stops before its next step once the caller's cancel token is set
/// ([`crate::cancel`]); one atomic load per step.
struct Stoppable<'a, L>(&'a mut L);

impl<L: Learner> Learner for Stoppable<'_, L>
where
    anyhow::Error: From<L::Error>,
{
    type Error = anyhow::Error;
    fn learn(&mut self, image: usize) -> Result<()> {
        crate::cancel::check()?;
        Ok(self.0.learn(image)?)
    }
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
        let (train, test) = (readout_input(net, &p.train_x), readout_input(net, &p.test_x));
        let pred = readout(net, &train, &p.train_labels, &test);
        let test_top = cpu::evaluate(net, &p.test_x, cpu::Threads::Rayon);
        let test_top: Vec<i32> = test_top.chunks(n_hc).map(|w| w[n_hc - 1]).collect();
        let mut held = quality::held_out(&test_top, &p.test_labels, &top, &p.train_labels, &pred);
        if net.rule.is_competitive() {
            let vote = quality::vote(&train.features, &p.train_labels, &test.features, n_hc, geo.minicolumns());
            let right = vote.iter().zip(&p.test_labels).filter(|(v, l)| **v == **l as i64).count();
            held.vote_accuracy = Some(right as f64 / p.test_labels.len().max(1) as f64);
        }
        (winners, mem, held)
    };
    let (winners, train, held_out) = judge(net);
    let (test_accuracy, test_nmi) = (held_out.readout_accuracy, held_out.readout_nmi);
    let random_baseline = match Network::random(geo, c.seed) {
        Ok(mut r) => {
            r.rule = net.rule;
            let (_, m, h) = judge(&mut r);
            (m, h.readout_accuracy, h.readout_nmi)
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
        lgn_threshold: c.lgn_threshold(),
        train,
        held_out,
        test_accuracy,
        test_nmi,
        random_baseline,
        seconds_per_step: seconds / net.t.max(1) as f64,
        train_seconds: seconds,
        winners: levels.iter().map(|&(o, n)| winners.chunks(n_hc).map(|w| w[o..o + n].to_vec()).collect()).collect(),
    }
}

/// What the readout reads of a list of images: the features (`[image][hc]`: the evaluation
/// winners under the competitive rule, the nearest features under the spec's) and, under the
/// competitive rule, the population codes (`[image][hc][m]`, [`cpu::population`]; empty
/// otherwise). Computed on the host CPU whatever device trained the network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadoutInput {
    /// Features per hypercolumn.
    pub features: Vec<i32>,
    /// Population codes (competitive rule only).
    pub codes: Vec<u32>,
}

/// The readout's input for `images` (bottom inputs) under `net`'s rule.
pub fn readout_input(net: &mut Network, images: &[u64]) -> ReadoutInput {
    if net.rule.is_competitive() {
        let (features, codes) = cpu::population(net, images);
        ReadoutInput { features, codes }
    } else {
        ReadoutInput { features: cpu::features(net, images), codes: vec![] }
    }
}

/// The readout's labels for held-out images `test` from the training images `train`: under the
/// competitive rule the label of the training image whose population code is nearest in L1
/// ([`quality::nearest_code`]), under the spec's rule that of the training image whose nearest
/// features agree most ([`quality::nearest`]).
pub fn readout(net: &Network, train: &ReadoutInput, train_labels: &[u32], test: &ReadoutInput) -> Vec<i64> {
    let (n_hc, m) = (net.geo.hypercolumns(), net.geo.minicolumns());
    if net.rule.is_competitive() && train.codes.is_empty() {
        // A model saved before the population code (no training codes): the vote it was saved
        // with, so its predictions stay what they were.
        return quality::vote(&train.features, train_labels, &test.features, n_hc, m);
    }
    let near = if net.rule.is_competitive() {
        quality::nearest_code(&train.codes, &test.codes, n_hc * m)
    } else {
        quality::nearest(&train.features, &test.features, n_hc)
    };
    near.into_iter().map(|k| train_labels[k] as i64).collect()
}
