//! The configuration of `neurobits gbnn bench`.

use std::path::PathBuf;

use super::RuleArg;
use crate::device::BenchDevice;

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn bench`: every rule and implementation timed side by side.
pub struct BenchConfig {
    /// Scenario (1, 2 or 3: C=32, L=2048, 1 000 000 stored and probed, 16 erased).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3)))]
    pub scenario: u8,
    /// Rules to time (default: all four; joint only for Scenario 3).
    #[cfg_attr(feature = "cli", arg(long, value_enum, value_delimiter = ','))]
    pub rules: Vec<RuleArg>,
    /// Erased clusters (default: the scenario's).
    #[cfg_attr(feature = "cli", arg(long))]
    pub erased: Option<usize>,
    /// Probes (default: the scenario's).
    #[cfg_attr(feature = "cli", arg(long, value_parser = clap::value_parser!(u64).range(1..)))]
    pub probes: Option<u64>,
    /// Probes given to the CPU dense-float baseline (0 skips it); it is reported per probe.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 128))]
    pub baseline_probes: usize,
    /// Timed warm runs of the GPU joint rule's compact results (their median is reported and
    /// gives the fraction of the bandwidth bound).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000)))]
    pub repeats: u32,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = BenchDevice::Cpu))]
    /// Where to time: cpu, gpu, all (side by side) or auto.
    pub device: BenchDevice,
    /// Also time every rule on one CPU core.
    #[cfg_attr(feature = "cli", arg(long))]
    pub single_core: bool,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// Also write the table as JSON to this file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: Option<PathBuf>,
}
