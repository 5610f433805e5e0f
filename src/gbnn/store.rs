use anyhow::{anyhow, Result};
use neurobits_core::Network;

use crate::cli::StoreArgs;
use crate::io::{netfile, symbols};

pub fn run(a: &StoreArgs) -> Result<()> {
    let g = super::geometry(a.clusters, a.neurons)?;
    let msgs = symbols::read(&a.messages, &g, false)?;
    let mut net = Network::new(a.clusters, a.neurons).map_err(|e| anyhow!("W: {e}"))?;
    for m in msgs.chunks(g.clusters()) {
        net.store(m).map_err(|e| anyhow!("{e}"))?;
    }
    netfile::save(&a.out, &net)?;
    eprintln!("stored {} messages in a {}x{} network -> {}", net.stored(), a.clusters, a.neurons, a.out.display());
    Ok(())
}
