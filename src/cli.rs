//! Command-line definitions and dispatch.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

use crate::device::DeviceChoice;
use crate::gbnn;

/// Bit-exact bio-inspired neural models on CPUs, GPUs, microcontrollers and an FPGA model.
#[derive(Parser, Debug)]
#[command(name = "neurobits", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Gripon–Berrou associative memory (GBNN).
    #[command(subcommand)]
    Gbnn(GbnnCommand),
    /// Cycle model of the fully-parallel ≤400-neuron GBNN circuit: cycles, resources, latency.
    Fpga(FpgaArgs),
    /// One GBNN workload on every target: latency, throughput, memory, and matching digests.
    Hwcost(HwcostArgs),
    /// FlyHash: sparse binary projection, exact winner-take-all, Hamming search.
    #[command(subcommand)]
    Flyhash(crate::flyhash::cli::FlyCommand),
}

#[derive(Args, Debug)]
pub struct HwcostArgs {
    #[arg(long, default_value_t = 8)]
    pub clusters: usize,
    #[arg(long, default_value_t = 50)]
    pub neurons: usize,
    /// Random messages stored.
    #[arg(long, default_value_t = 400)]
    pub messages: u64,
    /// Probes (distinct stored messages).
    #[arg(long, default_value_t = 100)]
    pub probes: u64,
    #[arg(long, default_value_t = 5)]
    pub erased: usize,
    /// Rules (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rules: Vec<RuleArg>,
    #[arg(long, default_value_t = 2)]
    pub gamma: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Probes timed one at a time for the single-probe latencies.
    #[arg(long, default_value_t = 100)]
    pub latency_probes: usize,
    /// Assumed FPGA clock (MHz).
    #[arg(long, default_value_t = 100.0)]
    pub fpga_clock_mhz: f64,
    /// Assumed microcontroller clock (MHz; the LM3S6965 runs at up to 50).
    #[arg(long, default_value_t = 50.0)]
    pub mcu_clock_mhz: f64,
    /// Firmware ELF (default: mcu/target/thumbv7m-none-eabi/release/neurobits-mcu).
    #[arg(long)]
    pub firmware: Option<PathBuf>,
    /// Fail, rather than mark the target unavailable, when the firmware cannot run.
    #[arg(long)]
    pub require_mcu: bool,
    /// Directory for hwcost.md, .csv, .json and .svg.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct FpgaArgs {
    /// Clusters C (C·L ≤ 400; sizes with a compiled circuit: 8x50, 4x100, 16x25, 3x3).
    #[arg(long, default_value_t = 8)]
    pub clusters: usize,
    /// Neurons per cluster L.
    #[arg(long, default_value_t = 50)]
    pub neurons: usize,
    /// Rules to run (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rule: Vec<RuleArg>,
    /// Random messages stored.
    #[arg(long, default_value_t = 300)]
    pub messages: u64,
    /// Probes (distinct stored messages).
    #[arg(long, default_value_t = 300)]
    pub probes: u64,
    /// Erased clusters per probe.
    #[arg(long, default_value_t = 4)]
    pub erased: usize,
    /// Sum-of-sum γ.
    #[arg(long, default_value_t = 2)]
    pub gamma: u32,
    /// Assumed clock in MHz (an assumption, not a synthesis result).
    #[arg(long, default_value_t = 100.0)]
    pub clock_mhz: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the report as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum GbnnCommand {
    /// Store messages (CSV, C symbols per line) into a network file.
    Store(StoreArgs),
    /// Retrieve probes (CSV, `?` = erased) from a network file.
    Retrieve(RetrieveArgs),
    /// Write random messages, and probes of them, from the portable PRNG.
    Generate(GenerateArgs),
    /// Reproduce the paper's retrieval-rate experiments (Fig. 9, 10, 14).
    Experiment(ExperimentArgs),
    /// Time every rule and implementation side by side.
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct StoreArgs {
    /// Number of clusters C.
    #[arg(long)]
    pub clusters: usize,
    /// Neurons per cluster L.
    #[arg(long)]
    pub neurons: usize,
    /// CSV file of messages.
    #[arg(long)]
    pub messages: PathBuf,
    /// Network file to write.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RuleArg {
    SumOfSum,
    SumOfMax,
    BailOutEarly,
    Joint,
}

impl From<RuleArg> for neurobits_core::Rule {
    fn from(r: RuleArg) -> Self {
        use neurobits_core::Rule;
        match r {
            RuleArg::SumOfSum => Rule::SumOfSum,
            RuleArg::SumOfMax => Rule::SumOfMax,
            RuleArg::BailOutEarly => Rule::BailOutEarly,
            RuleArg::Joint => Rule::Joint,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Csv,
    Json,
}

#[derive(Args, Debug)]
pub struct RetrieveArgs {
    /// Network file written by `store`.
    #[arg(long)]
    pub net: PathBuf,
    /// CSV file of probes (`?` marks an erased cluster).
    #[arg(long)]
    pub probes: PathBuf,
    #[arg(long, value_enum)]
    pub rule: RuleArg,
    /// Sum-of-sum reinforcement factor γ.
    #[arg(long, default_value_t = 1)]
    pub gamma: u32,
    /// Sum-of-sum update limit t_max.
    #[arg(long, default_value_t = 20)]
    pub max_iter: u32,
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    pub format: Format,
    #[arg(long, value_enum, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
    /// Output file.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[arg(long)]
    pub clusters: usize,
    #[arg(long)]
    pub neurons: usize,
    /// Number of random messages.
    #[arg(long)]
    pub messages: u64,
    /// Number of probes (distinct stored messages, with `--erased` clusters erased).
    #[arg(long, default_value_t = 0)]
    pub probes: u64,
    #[arg(long, default_value_t = 0)]
    pub erased: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory for messages.csv, probes.csv and truth.csv.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// 1: C=8, L=128, 5000 stored, 3000 probes. 2: C=16, L=512, 50 000 stored, 30 000 probes.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub scenario: u8,
    /// Rules to compare (γ = 2, as in the paper).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [RuleArg::SumOfSum, RuleArg::SumOfMax, RuleArg::BailOutEarly, RuleArg::Joint])]
    pub rules: Vec<RuleArg>,
    /// Erased clusters, as `a..b` (inclusive); default 1..C-1.
    #[arg(long)]
    pub erased: Option<String>,
    /// γ values of the sum-of-sum sweep (Fig. 10); empty to skip.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_values_t = [0u32, 1, 2, 4])]
    pub gammas: Vec<u32>,
    /// Probes per point (default: the scenario's).
    #[arg(long)]
    pub probes: Option<u64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
    /// Directory for results.csv, results.json and the SVG plots.
    #[arg(long)]
    pub out: PathBuf,
}

/// Where `bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchDevice {
    Cpu,
    Gpu,
    /// CPU and GPU side by side.
    All,
    /// The GPU if present, else the CPU.
    Auto,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Scenario (1, 2 or 3: C=32, L=2048, 1 000 000 stored and probed, 16 erased).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub scenario: u8,
    /// Rules to time (default: all four; joint only for Scenario 3).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rules: Vec<RuleArg>,
    /// Erased clusters (default: the scenario's).
    #[arg(long)]
    pub erased: Option<usize>,
    /// Probes (default: the scenario's).
    #[arg(long)]
    pub probes: Option<u64>,
    /// Probes given to the CPU dense-float baseline (0 skips it); it is reported per probe.
    #[arg(long, default_value_t = 128)]
    pub baseline_probes: usize,
    #[arg(long, value_enum, default_value_t = BenchDevice::Cpu)]
    pub device: BenchDevice,
    /// Also time every rule on one CPU core.
    #[arg(long)]
    pub single_core: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the table as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Gbnn(cmd) => match cmd {
            GbnnCommand::Store(a) => gbnn::store::run(&a),
            GbnnCommand::Retrieve(a) => gbnn::retrieve::run(&a),
            GbnnCommand::Generate(a) => gbnn::generate::run(&a),
            GbnnCommand::Experiment(a) => gbnn::experiment::run(&a),
            GbnnCommand::Bench(a) => gbnn::bench::run(&a),
        },
        Command::Fpga(a) => crate::fpga::run(&a),
        Command::Hwcost(a) => crate::hwcost::run(&a),
        Command::Flyhash(c) => crate::flyhash::cli::run(&c),
    }
}
