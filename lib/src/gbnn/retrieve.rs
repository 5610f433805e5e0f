use anyhow::bail;
use anyhow::Result;
use neurobits_core::gbnn::{Mode, Params, Rule, SILENT};

use super::RuleArg;
use crate::device::Device;
use crate::device::DeviceChoice;
use crate::io::{netfile, output, symbols};
use std::path::PathBuf;

/// Runs `gbnn retrieve`.
pub fn run(a: &RetrieveConfig) -> Result<()> {
    crate::io::atomic::check_writable(&a.out)?;
    let net = netfile::load(&a.net)?;
    let g = *net.geometry();
    let probes = symbols::read(&a.probes, &g, true)?;
    let rule: Rule = a.rule.into();
    let mode: Mode = a.mode.into();
    if !rule.supports(mode) {
        bail!("--rule {}: not defined for --mode {} (use sum-of-sum or sum-of-max)", rule.name(), mode.name());
    }
    if mode != Mode::Sparse {
        if let Some(i) = probes.iter().position(|&s| s == SILENT) {
            bail!(
                "{}: probe {} has a silent cluster '-': needs --mode sparse",
                a.probes.display(),
                i / g.clusters() + 1
            );
        }
    }
    // The results held until they are written: per probe its statistics and a list per cluster
    // (one symbol each, mostly); the states the backend computes are checked where it makes them.
    let k = (probes.len() / g.clusters()) as u128;
    crate::budget::check_items(
        format_args!("{}: the results of {k} probes", a.probes.display()),
        k,
        64 + g.clusters() as u128 * 32,
    )?;
    let params = Params { gamma: a.gamma, max_iter: a.max_iter };
    let device = Device::open(a.device)?;
    let backend = device.gbnn(&net)?;
    // Compact results cross the bus; only probes with an ambiguous cluster come back densely.
    let (rows, stats) = backend.retrieve_active_in(&probes, rule, mode, &params)?;
    // Streamed into the output file: the text is never held whole.
    crate::io::atomic::write_atomic(&a.out, |w| {
        match a.format {
            Format::Csv => output::write_csv(w, &rows),
            Format::Json => output::write_json(w, &g, rule.name(), &rows, &stats),
        }
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot write {}", a.out.display())))
    })?;
    let unconverged = stats.iter().filter(|s| !s.converged).count();
    crate::noteln!(
        "retrieved {} probes with {} on {} -> {}{}",
        stats.len(),
        rule.name(),
        backend.name(),
        a.out.display(),
        if unconverged > 0 {
            format!(" ({unconverged} did not converge within {} updates)", a.max_iter)
        } else {
            String::new()
        }
    );
    Ok(())
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn retrieve`: probes from a CSV file against a network file.
pub struct RetrieveConfig {
    /// Network file written by `store`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub net: PathBuf,
    /// CSV file of probes (`?` marks an erased cluster, `-` a silent one).
    #[cfg_attr(feature = "cli", arg(long))]
    pub probes: PathBuf,
    /// How to read the probes: erasure (known symbols are right), noisy (known symbols may be
    /// wrong: no cluster is frozen), sparse (silent clusters, global winner-take-all).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = ModeArg::Erasure))]
    pub mode: ModeArg,
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    /// Retrieval rule.
    pub rule: RuleArg,
    /// Sum-of-sum reinforcement factor γ.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2))]
    pub gamma: u32,
    /// Sum-of-sum update limit t_max.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=crate::validate::MAX_ITER as i64)))]
    pub max_iter: u32,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Format::Csv))]
    /// Output format.
    pub format: Format,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    /// Where to compute: cpu, gpu, or auto (the GPU when it can, else the CPU).
    pub device: DeviceChoice,
    /// Output file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
/// Output format of `gbnn retrieve`.
pub enum Format {
    /// CSV: one line per probe, the active neurons of each cluster.
    Csv,
    /// JSON with states and statistics.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
/// `--mode` of `gbnn retrieve` and `gbnn experiment` ([`Mode`]).
pub enum ModeArg {
    /// Erased clusters unknown, known symbols right.
    Erasure,
    /// Known symbols possibly wrong.
    Noisy,
    /// Sparse messages: silent clusters, global winner-take-all.
    Sparse,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Erasure => Mode::Erasure,
            ModeArg::Noisy => Mode::Noisy,
            ModeArg::Sparse => Mode::Sparse,
        }
    }
}
