use anyhow::Result;
use neurobits_core::{Params, Rule};

use crate::cli::{Format, RetrieveArgs};
use crate::device::select;
use crate::io::{atomic::write_string, netfile, output, symbols};

pub fn run(a: &RetrieveArgs) -> Result<()> {
    let net = netfile::load(&a.net)?;
    let g = *net.geometry();
    let probes = symbols::read(&a.probes, &g, true)?;
    let rule: Rule = a.rule.into();
    let params = Params { gamma: a.gamma, max_iter: a.max_iter };
    let backend = select(a.device)?;
    let batch = backend.retrieve(&net, &probes, rule, &params)?;
    let text = match a.format {
        Format::Csv => output::csv(&g, &batch.states),
        Format::Json => output::json(&g, rule.name(), &batch.states, &batch.stats),
    };
    write_string(&a.out, &text)?;
    let unconverged = batch.stats.iter().filter(|s| !s.converged).count();
    eprintln!(
        "retrieved {} probes with {} on {} -> {}{}",
        batch.stats.len(),
        rule.name(),
        backend.name(),
        a.out.display(),
        if unconverged > 0 { format!(" ({unconverged} did not converge within {} updates)", a.max_iter) } else { String::new() }
    );
    Ok(())
}
