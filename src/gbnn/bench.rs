//! Side-by-side timing of every rule and implementation in one run.

use anyhow::Result;
use neurobits_core::{Params, Rule};
use serde::Serialize;
use std::time::Instant;

use super::rates;
use crate::cli::BenchArgs;
use crate::dense::DenseSumOfSum;
use crate::device::{select, Backend, Cpu};
use crate::io::atomic::write_string;
use crate::scenario::scenario;

#[derive(Serialize, Clone, Debug)]
pub struct Entry {
    pub implementation: String,
    pub rule: &'static str,
    pub probes: u64,
    pub seconds: f64,
    pub kernel_seconds: Option<f64>,
    pub probes_per_second: f64,
    pub strict_rate: f64,
    pub mean_iterations: f64,
}

pub fn run(a: &BenchArgs) -> Result<()> {
    let s = scenario(a.scenario)?;
    let erased = a.erased.unwrap_or(s.erased);
    let probes = a.probes.unwrap_or(s.probes);
    let params = Params { gamma: s.gamma, max_iter: 20 };
    println!(
        "scenario {}: C={}, L={}, {} stored, {} probes, {} erased, gamma={} (sum-of-sum), t_max=20",
        s.id, s.clusters, s.neurons, s.stored, probes, erased, s.gamma
    );
    let t = Instant::now();
    let net = s.network(a.seed)?;
    println!("stored {} messages in {:.3} s (W = {:.1} MiB)", s.stored, t.elapsed().as_secs_f64(),
        net.weights().len() as f64 * 8.0 / (1 << 20) as f64);
    let (pr, truth) = s.probes(a.seed, probes, erased)?;
    let g = *net.geometry();

    let mut backends: Vec<Box<dyn Backend>> = vec![select(a.device)?];
    if a.single_core {
        backends.push(Box::new(Cpu::new(Some(1))?));
    }
    let mut entries = Vec::new();
    for b in &backends {
        for &r in &a.rules {
            let rule: Rule = r.into();
            let t = Instant::now();
            let batch = b.retrieve(&net, &pr, rule, &params)?;
            let seconds = t.elapsed().as_secs_f64();
            let iters: u64 = batch.stats.iter().map(|x| x.iterations as u64).sum();
            entries.push(Entry {
                implementation: b.name(),
                rule: rule.name(),
                probes,
                seconds,
                kernel_seconds: batch.kernel_seconds,
                probes_per_second: probes as f64 / seconds,
                strict_rate: rates(&g, &batch.states, &truth).strict,
                mean_iterations: iters as f64 / probes as f64,
            });
            print_entry(entries.last().expect("just pushed"));
        }
    }
    if a.baseline_probes > 0 {
        let k = a.baseline_probes.min(probes as usize);
        let c = g.clusters();
        let dense = DenseSumOfSum::new(&net, s.gamma)?;
        let t = Instant::now();
        let (states, _) = dense.retrieve(&pr[..k * c], params.max_iter);
        let seconds = t.elapsed().as_secs_f64();
        let reference = Cpu::new(None)?.retrieve(&net, &pr[..k * c], Rule::SumOfSum, &params)?;
        let same = reference.states == states;
        entries.push(Entry {
            implementation: format!("dense-f32 sgemm baseline ({k}-probe subset)"),
            rule: "sum-of-sum",
            probes: k as u64,
            seconds,
            kernel_seconds: None,
            probes_per_second: k as f64 / seconds,
            strict_rate: rates(&g, &states, &truth[..k * c]).strict,
            mean_iterations: f64::NAN,
        });
        print_entry(entries.last().expect("just pushed"));
        println!(
            "dense baseline ran on the first {k} probes only; its states are {} the bit-packed sum-of-sum's",
            if same { "identical to" } else { "DIFFERENT from" }
        );
        anyhow::ensure!(same, "the dense-float baseline disagrees with the bit-packed sum-of-sum");
        let base = entries.last().expect("baseline").probes_per_second;
        for e in entries.iter().filter(|e| e.rule == "joint") {
            println!(
                "speed-up of joint on {} over the dense baseline (per probe): {:.0}x",
                e.implementation,
                e.probes_per_second / base
            );
        }
    }
    if let Some(out) = &a.out {
        write_string(out, &(serde_json::to_string_pretty(&entries)? + "\n"))?;
    }
    Ok(())
}

fn print_entry(e: &Entry) {
    println!(
        "{:<44} {:<15} {:>8} probes {:>10.4} s {:>12.0} probes/s  strict {:>6.2}%  per probe {:>9.2} us",
        e.implementation,
        e.rule,
        e.probes,
        e.seconds,
        e.probes_per_second,
        100.0 * e.strict_rate,
        1e6 / e.probes_per_second
    );
}
