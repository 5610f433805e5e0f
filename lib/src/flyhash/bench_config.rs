//! The configuration of `neurobits flyhash bench`, apart from the bench (which the search bench
//! also reads), so that the two bench files do not import each other.

use clap::builder::TypedValueParser;
use std::path::PathBuf;

use super::data;
use crate::device::BenchDevice;

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash bench`: FlyHash timed on the CPU and GPU.
pub struct FlyBenchConfig {
    /// `fmnist`: d=784, m=25 088, s=39, k=1 254 on the 60 000 Fashion-MNIST training images;
    /// `batch`: d=1024, m=131 072, s=51, k=6 554 on uniform inputs, b = 2^1..2^15;
    /// `search`: exact Hamming top-r of `--queries` codes in `--db-codes` codes (25 088 bits,
    /// 1 254 ones).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Config::Fmnist))]
    pub config: Config,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = BenchDevice::Cpu))]
    /// Where to time: cpu, gpu, all (side by side) or auto.
    pub device: BenchDevice,
    /// `fmnist`: folder of the Fashion-MNIST IDX files.
    #[cfg_attr(feature = "cli", arg(short = 'i', long = "input", alias = "data", default_value = data::FASHION_MNIST))]
    pub data: PathBuf,
    /// Largest batch exponent of the `batch` sweep.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..=20)))]
    pub max_exp: u32,
    /// Largest batch the CPU runs in the sweep (it is slow; larger ones are skipped).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 8192))]
    pub cpu_max_batch: usize,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// `search`: database codes.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000).map(|v| v as usize)))]
    pub db_codes: usize,
    /// `search`: query codes.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000).map(|v| v as usize)))]
    pub queries: usize,
    /// `search`: neighbours per query r.
    #[cfg_attr(feature = "cli", arg(long = "neighbours", alias = "r", value_name = "R", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000).map(|v| v as usize)))]
    pub r: usize,
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    /// Also write the results as JSON to this file (`-`: standard output).
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
/// A FlyHash benchmark configuration.
pub enum Config {
    /// Fashion-MNIST: d=784, m=25 088, s=39, k=1 254, b=60 000.
    Fmnist,
    /// Batch: d=1024, m=131 072, s=51, k=6 554, random inputs.
    Batch,
    /// Hamming top-r over a large database of codes.
    Search,
}
