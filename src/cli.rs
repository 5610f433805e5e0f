//! The command tree and its dispatch: each command parses its flags into a configuration and calls
//! one library function; `main.rs` only adds error presentation.

use std::io::Write as _;

use anyhow::Context as _;
use clap::{ArgMatches, Parser, Subcommand};

use neurobits::gbnn::bench::BenchConfig;
use neurobits::gbnn::experiment::ExperimentConfig;
use neurobits::gbnn::fpga::FpgaConfig;
use neurobits::gbnn::generate::GenerateConfig;
use neurobits::gbnn::hwcost::HwcostConfig;
use neurobits::gbnn::retrieve::RetrieveConfig;
use neurobits::gbnn::store::StoreConfig;
use neurobits::{flyhash, gbnn};

/// Bit-exact bio-inspired neural models on CPUs, GPUs, microcontrollers and an FPGA model.
#[derive(Parser, Debug)]
#[command(name = "neurobits", version = neurobits::VERSION, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// No progress bars and no summaries or tables on stdout/stderr; errors and warnings only.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// CPU threads of every computing command (default: one per core).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: Option<u32>,
    /// Memory budget: every allocation sized from the input is checked against it before it is
    /// made (e.g. 512M, 8G; binary units). Default: 80% of the available memory, at most 1T.
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_max_memory)]
    pub max_memory: Option<u64>,
}

/// `--max-memory`'s value: the library's size grammar (`neurobits::budget::parse_size`).
fn parse_max_memory(s: &str) -> Result<u64, String> {
    neurobits::budget::parse_size(s).map_err(|e| match e {
        neurobits::Error::Config { why, .. } => why,
        e => e.to_string(),
    })
}

/// The options that name an output path: `-` among them sends data to standard output.
const OUTPUTS: [&str; 3] = ["out", "json", "levels_out"];

/// Whether the command line gives `-` (standard output) to one of its output options: then
/// standard output carries data only, and human text goes to standard error
/// (`neurobits::console`).
pub fn stdout_is_data(matches: &ArgMatches) -> bool {
    let mut m = matches;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    OUTPUTS.iter().any(|id| m.try_get_raw(id).ok().flatten().is_some_and(|mut v| v.any(|v| v == "-")))
}

/// Every command.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Gripon–Berrou associative memory (GBNN).
    #[command(subcommand)]
    Gbnn(GbnnCommand),
    /// Cycle model of the fully-parallel ≤400-neuron GBNN circuit: cycles, resources, latency.
    Fpga(FpgaConfig),
    /// One GBNN workload on every target: latency, throughput, memory, and matching digests.
    Hwcost(HwcostConfig),
    /// FlyHash: sparse binary projection, exact winner-take-all, Hamming search.
    #[command(subcommand)]
    Flyhash(FlyCommand),
    /// FlyNN classifier kept in a model file: fit, then predict.
    #[command(subcommand)]
    Flynn(crate::commands::flynn::FlynnCommand),
    /// Oscillatory chaotic neural network (OCNN): clustering by synchronized chaos.
    #[command(subcommand)]
    Ocnn(OcnnCommand),
    /// The cortical-column network (Nere, Franey, Hashmi & Lipasti 2012).
    #[command(subcommand)]
    Cortical(CorticalCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to standard output.
    Man,
}

/// `neurobits cortical …`.
#[derive(Debug, Subcommand)]
pub enum CorticalCommand {
    /// Train a network on labelled images and save it with its readout (the model verbs).
    Fit(crate::commands::cortical::FitArgs),
    /// Label images with a network saved by `cortical fit`.
    Predict(crate::commands::cortical::PredictArgs),
    /// Train a network on labelled images; print and save its digests and quality.
    Train(neurobits::cortical::TrainConfig),
    /// Judge a saved network: strict memorisation of the training list, the nearest-feature
    /// readout on the test list, the digests.
    Eval(neurobits::cortical::EvalConfig),
    /// Time per training step: single-thread CPU, all cores and each GPU variant, side by side.
    Bench(neurobits::cortical::bench::BenchConfig),
    /// Profile every GPU and the CPU, split the network over them (spec §6) and time the split
    /// against one GPU and the even split (and, with --brute-force, every split).
    Profile(neurobits::cortical::split::cmd::ProfileConfig),
    /// Plot profile runs (JSON of `cortical profile --out`) as the paper's Fig. 26: one GPU,
    /// even split, profiled split, best of all splits.
    ProfileFigure(neurobits::cortical::split::figure::FigureConfig),
    /// Draw a saved network's learned features: each bottom minicolumn's weights on the LGN cells
    /// of its receptive field, as images (SVG).
    Features(neurobits::cortical::features::FeaturesConfig),
    /// Plot `cortical bench --out` JSON: speed-up over one CPU thread against size (the paper's
    /// Fig. 7) and every variant's time per step (Figs. 14-17), per minicolumn count.
    BenchFigure(neurobits::cortical::bench_figure::BenchFigureConfig),
}

/// `neurobits ocnn …`.
#[derive(Subcommand, Debug)]
pub enum OcnnCommand {
    /// Cluster points: one label per input line.
    Cluster(crate::commands::ocnn::ClusterArgs),
    /// The FCPS sets with known classes over seeds: k and adjusted Rand index.
    Experiment(neurobits::ocnn::experiment::ExperimentConfig),
    /// The paper's Table 2 workload on every GPU decomposition and the CPU, side by side.
    Bench(neurobits::ocnn::bench::BenchConfig),
}

/// `neurobits gbnn …`.

#[derive(Subcommand, Debug)]
pub enum GbnnCommand {
    /// Store messages (CSV, C symbols per line) into a network file.
    Store(StoreConfig),
    /// Retrieve probes (CSV, `?` = erased) from a network file.
    Retrieve(RetrieveConfig),
    /// Write a network for firmware: a blob for `include_bytes!` and a Rust module beside it.
    Export(neurobits::gbnn::export::ExportConfig),
    /// Write random messages, and probes of them, from the portable PRNG.
    Generate(GenerateConfig),
    /// Reproduce the paper's retrieval-rate experiments (Fig. 9, 10, 14).
    Experiment(ExperimentConfig),
    /// Time every rule and implementation side by side.
    Bench(BenchConfig),
    /// Store and retrieve one network over several GPUs (W sharded, NCCL), per GPU count.
    BenchGpus(neurobits::gbnn::gpus::GpusBenchConfig),
    /// Score a `retrieve` output against the true messages.
    Score(neurobits::gbnn::score::ScoreConfig),
}

/// `neurobits flyhash …`.
#[derive(Subcommand, Debug)]
pub enum FlyCommand {
    /// Hash input vectors (IDX, CSV or NPY) into FlyHash codes.
    Hash(flyhash::commands::HashConfig),
    /// Write the projection as CSV: one line per output, its s input indices ascending.
    Projection(flyhash::commands::ProjectionConfig),
    /// Top-r Hamming neighbours of query codes in a database of codes.
    Search(flyhash::commands::SearchConfig),
    /// FlyHash vs SimHash on Fashion-MNIST: precision of Hamming neighbours.
    Eval(flyhash::commands::EvalConfig),
    /// Time FlyHash on the CPU and GPU (exact and bisect64).
    Bench(neurobits::flyhash::bench::FlyBenchConfig),
    /// FlyNN classifier over FlyHash codes (CPU and GPU), beside exact k-NN.
    Flynn(neurobits::flyhash::flynn::FlynnConfig),
    /// A FlyHash index in one file: build, add (appends), search.
    #[command(subcommand)]
    Index(crate::commands::index::IndexCommand),
    #[cfg(feature = "ann")]
    /// Build an ann-benchmarks HDF5 file (train, test, 100 exact Euclidean neighbours) from IDX
    /// images, e.g. fashion-mnist-784-euclidean.hdf5 from Fashion-MNIST.
    AnnData(flyhash::ann_data::AnnDataConfig),
    /// Plot ann-benchmarks result rows (JSON): recall@k against queries per second.
    AnnFigure(flyhash::ann_figure::AnnFigureConfig),
    /// The approximate index in ann-benchmarks form: recall@k against queries per second.
    AnnBench(neurobits::flyhash::ann_bench::AnnBenchConfig),
}

/// Writes data (not human text: `--quiet` leaves it alone) to standard output.
fn data_out(bytes: &[u8]) -> anyhow::Result<()> {
    std::io::stdout().write_all(bytes).context("cannot write to standard output")
}

/// Runs a parsed command line: applies the global options, then the command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    neurobits::console::set_quiet(cli.quiet);
    // Before any command allocates: the budget every allocation sized from input is checked
    // against (`neurobits::budget`), named by this option in the refusals.
    neurobits::budget::set_max(cli.max_memory, "--max-memory");
    // Before any command starts a thread: rayon's global pool is built once, here with a bounded
    // count (`--threads`, else `RAYON_NUM_THREADS`, else one per core), so that rayon never
    // builds it itself (unbounded, and a panic if a thread cannot start).
    if let Some(warning) = neurobits::device::init_cpu_threads(cli.threads.map(|n| n as usize))? {
        eprintln!("warning: {warning}");
    }
    match cli.command {
        Command::Gbnn(cmd) => match cmd {
            GbnnCommand::Store(a) => gbnn::store::run(&a),
            GbnnCommand::Retrieve(a) => gbnn::retrieve::run(&a),
            GbnnCommand::Export(a) => gbnn::export::run(&a),
            GbnnCommand::Generate(a) => gbnn::generate::run(&a),
            GbnnCommand::Experiment(a) => gbnn::experiment::run(&a),
            GbnnCommand::Bench(a) => gbnn::bench::run(&a),
            GbnnCommand::BenchGpus(a) => gbnn::gpus::run(&a),
            GbnnCommand::Score(a) => gbnn::score::run(&a),
        },
        Command::Flynn(c) => crate::commands::flynn::run(&c),
        Command::Fpga(a) => gbnn::fpga::run(&a),
        Command::Hwcost(a) => gbnn::hwcost::run(&a),
        Command::Flyhash(c) => match c {
            FlyCommand::Hash(a) => flyhash::commands::hash(&a),
            FlyCommand::Projection(a) => flyhash::commands::projection(&a),
            FlyCommand::Search(a) => flyhash::commands::search(&a),
            FlyCommand::Eval(a) => flyhash::commands::eval(&a),
            FlyCommand::Bench(a) => flyhash::bench::run(&a),
            FlyCommand::Flynn(a) => flyhash::flynn::run(&a),
            FlyCommand::Index(c) => crate::commands::index::run(&c),
            #[cfg(feature = "ann")]
            FlyCommand::AnnData(a) => flyhash::ann_data::run(&a).map(drop).map_err(Into::into),
            FlyCommand::AnnFigure(a) => flyhash::ann_figure::run(&a).map(drop).map_err(Into::into),
            FlyCommand::AnnBench(a) => flyhash::ann_bench::run(&a),
        },
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "neurobits", &mut out);
            data_out(&out)
        }
        Command::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
            data_out(&out)
        }
        Command::Cortical(CorticalCommand::Fit(a)) => crate::commands::cortical::fit(&a),
        Command::Cortical(CorticalCommand::Predict(a)) => crate::commands::cortical::predict(&a),
        Command::Cortical(CorticalCommand::Train(a)) => neurobits::cortical::run_train(&a),
        Command::Cortical(CorticalCommand::Eval(a)) => neurobits::cortical::run_eval(&a),
        Command::Cortical(CorticalCommand::Bench(a)) => neurobits::cortical::bench::run(&a),
        Command::Cortical(CorticalCommand::Profile(a)) => neurobits::cortical::split::cmd::run(&a),
        Command::Cortical(CorticalCommand::ProfileFigure(a)) => neurobits::cortical::split::figure::run(&a),
        Command::Cortical(CorticalCommand::Features(a)) => neurobits::cortical::features::run(&a),
        Command::Cortical(CorticalCommand::BenchFigure(a)) => neurobits::cortical::bench_figure::run(&a).map(|_| ()),
        Command::Ocnn(OcnnCommand::Cluster(a)) => crate::commands::ocnn::run(&a),
        Command::Ocnn(OcnnCommand::Experiment(a)) => neurobits::ocnn::experiment::run(&a),
        Command::Ocnn(OcnnCommand::Bench(a)) => neurobits::ocnn::bench::run(&a),
    }
}
