use anyhow::{anyhow, Result};
use neurobits_core::gbnn::Network;

use crate::io::{netfile, symbols};
use std::path::PathBuf;

/// Runs `gbnn store`.
pub fn run(a: &StoreConfig) -> Result<()> {
    crate::io::atomic::check_writable(&a.out)?;
    let g = super::geometry(a.clusters, a.neurons)?;
    let msgs = symbols::read(&a.messages, &g, false)?;
    let mut net = Network::new(a.clusters, a.neurons).map_err(|e| anyhow!("W: {e}"))?;
    for m in msgs.chunks(g.clusters()) {
        net.store(m).map_err(|e| anyhow!("{e}"))?;
    }
    netfile::save(&a.out, &net)?;
    crate::noteln!("stored {} messages in a {}x{} network -> {}", net.stored(), a.clusters, a.neurons, a.out.display());
    Ok(())
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn store`: messages from a CSV file into a network file.
pub struct StoreConfig {
    /// Number of clusters C.
    #[cfg_attr(feature = "cli", arg(long))]
    pub clusters: usize,
    /// Neurons per cluster L.
    #[cfg_attr(feature = "cli", arg(long))]
    pub neurons: usize,
    /// CSV file of messages.
    #[cfg_attr(feature = "cli", arg(long))]
    pub messages: PathBuf,
    /// Network file to write.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}
