use anyhow::{anyhow, Context, Result};
use neurobits_core::gbnn::workload::{message, ProbePlan};

use crate::io::{atomic::write_string, symbols};
use std::path::PathBuf;

/// Runs `gbnn generate`.
pub fn run(a: &GenerateConfig) -> Result<()> {
    let g = super::geometry(a.clusters, a.neurons)?;
    let plan = ProbePlan::new(g, a.seed, a.messages, a.seed.wrapping_add(1), a.probes, a.erased)
        .map_err(|e| anyhow!("{e}"))?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let c = g.clusters();
    let mut msgs = vec![0u16; a.messages as usize * c];
    for (k, m) in msgs.chunks_mut(c).enumerate() {
        message(&g, a.seed, k as u64, m);
    }
    write_string(&a.out.join("messages.csv"), &symbols::format(&msgs, c))?;
    if a.probes > 0 {
        let mut probes = vec![0u16; a.probes as usize * c];
        let mut truth = probes.clone();
        for (p, (pr, tr)) in probes.chunks_mut(c).zip(truth.chunks_mut(c)).enumerate() {
            plan.probe(p as u64, pr);
            plan.truth(p as u64, tr);
        }
        write_string(&a.out.join("probes.csv"), &symbols::format(&probes, c))?;
        write_string(&a.out.join("truth.csv"), &symbols::format(&truth, c))?;
    }
    eprintln!("wrote {} messages and {} probes to {}", a.messages, a.probes, a.out.display());
    Ok(())
}

#[derive(clap::Args, Debug)]
/// `gbnn generate`: random messages and probes from the portable PRNG.
pub struct GenerateConfig {
    #[arg(long)]
    /// Clusters C.
    pub clusters: usize,
    #[arg(long)]
    /// Neurons per cluster L.
    pub neurons: usize,
    /// Number of random messages.
    #[arg(long)]
    pub messages: u64,
    /// Number of probes (distinct stored messages, with `--erased` clusters erased).
    #[arg(long, default_value_t = 0)]
    pub probes: u64,
    #[arg(long, default_value_t = 0)]
    /// Erased clusters per probe.
    pub erased: usize,
    #[arg(long, default_value_t = 1)]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// Directory for messages.csv, probes.csv and truth.csv.
    #[arg(long)]
    pub out: PathBuf,
}
