use anyhow::{anyhow, bail, Result};
use neurobits_core::gbnn::workload::{sparse_message, ProbePlan};

use crate::io::atomic::{write_atomic, write_set};
use crate::io::symbols;
use std::path::PathBuf;

/// Runs `gbnn generate`.
pub fn run(a: &GenerateConfig) -> Result<()> {
    let g = super::geometry(a.clusters, a.neurons)?;
    let active = a.active.unwrap_or(a.clusters);
    if active == 0 || active > a.clusters {
        bail!("--active {active}: need 1 <= active <= --clusters {}", a.clusters);
    }
    if a.erased + a.substituted > active {
        bail!("--erased {} + --substituted {}: more than the {active} active clusters", a.erased, a.substituted);
    }
    if a.substituted > 0 && a.neurons < 2 {
        bail!("--substituted {}: needs --neurons >= 2 (a different symbol)", a.substituted);
    }
    let plan = ProbePlan::new(g, a.seed, a.messages, a.seed.wrapping_add(1), a.probes, a.erased)
        .and_then(|p| p.with_modes(active, a.substituted))
        .map_err(|e| anyhow!("{e}"))?;
    let c = g.clusters();
    // Each symbol takes at most its digits and a separator; refuse what cannot fit on the disk
    // before writing anything (u128: no product of u64 counts can wrap).
    let per_row = c as u128 * ((g.neurons_per_cluster() - 1).max(1).ilog10() as u128 + 2);
    let rows = a.messages as u128 + 2 * a.probes as u128;
    crate::io::memory::ensure_disk(&a.out, "the generated files", rows * per_row)?;
    let names: &[&str] = if a.probes > 0 { &["messages.csv", "probes.csv", "truth.csv"] } else { &["messages.csv"] };
    // The files of one run appear together (never messages of one run with probes of another),
    // each streamed line by line: memory stays constant however many messages are asked for.
    write_set(&a.out, names, |dir| {
        let write_rows = |name: &str, count: u64, row: &dyn Fn(u64, &mut [u16])| -> Result<()> {
            write_atomic(&dir.join(name), |w| {
                let (mut sym, mut line) = (vec![0u16; c], String::new());
                for k in 0..count {
                    row(k, &mut sym);
                    line.clear();
                    symbols::push_line(&mut line, &sym);
                    w.write_all(line.as_bytes())?;
                }
                Ok(())
            })
        };
        write_rows("messages.csv", a.messages, &|k, m| sparse_message(&g, a.seed, k, active, m))?;
        if a.probes > 0 {
            write_rows("probes.csv", a.probes, &|p, m| {
                plan.probe(p, m);
            })?;
            write_rows("truth.csv", a.probes, &|p, m| {
                plan.truth(p, m);
            })?;
        }
        Ok(())
    })?;
    crate::noteln!("wrote {} messages and {} probes to {}", a.messages, a.probes, a.out.display());
    Ok(())
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn generate`: random messages and probes from the portable PRNG.
pub struct GenerateConfig {
    #[cfg_attr(feature = "cli", arg(long))]
    /// Clusters C.
    pub clusters: usize,
    #[cfg_attr(feature = "cli", arg(long))]
    /// Neurons per cluster L.
    pub neurons: usize,
    /// Number of random messages.
    #[cfg_attr(feature = "cli", arg(long))]
    pub messages: u64,
    /// Number of probes (distinct stored messages, with `--erased` clusters erased).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub probes: u64,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    /// Erased clusters per probe (`?` in probes.csv).
    pub erased: usize,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    /// Substituted clusters per probe: known symbols replaced by a different one (noisy probes,
    /// for `gbnn retrieve --mode noisy`).
    pub substituted: usize,
    #[cfg_attr(feature = "cli", arg(long))]
    /// Active clusters per message (sparse messages; the others are silent, `-`); default: all.
    pub active: Option<usize>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// A folder: messages.csv, probes.csv and truth.csv are written into it.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}
