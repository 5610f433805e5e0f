//! `neurobits fpga`: the cycle model on a random workload, as a table and JSON.

use anyhow::{anyhow, bail, Result};
use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::gbnn::workload::{sparse_message, ProbePlan};
use neurobits_core::gbnn::{retrieve_in, Mode, Params, Rule};
use neurobits_fpga::{resources, Circuit, Report, Resources, S16x25, S3x3, S4x100, S8x50, Size, MAX_NEURONS};
use serde::Serialize;
use serde_json::json;

use super::retrieve::ModeArg;
use super::RuleArg;
use std::path::PathBuf;

/// One rule's run on the circuit.
#[derive(Serialize, Clone, Debug)]
pub struct FpgaRow {
    /// Rule name.
    pub rule: &'static str,
    /// Probes (distinct stored messages).
    pub probes: u64,
    /// Mean clock cycles per probe (load to unload).
    pub mean_cycles: f64,
    /// Most clock cycles of any probe.
    pub max_cycles: u64,
    /// Clock cycles over all probes.
    pub total_cycles: u64,
    /// Mean updates per probe.
    pub mean_iterations: f64,
    /// Mean latency per probe in µs at the report's clock (measured Fmax where one exists).
    pub mean_latency_us: f64,
    /// FNV-1a of all final states, as the CPU, GPU and firmware compute it.
    pub digest: String,
    /// Whether the outputs equal the CPU driver's bit for bit.
    pub identical_to_cpu: bool,
}

/// Runs `rules` on a circuit of size `S` in `a.mode`; returns the rows and the store cycles.
pub fn run_circuit<S: Size>(a: &FpgaConfig, rules: &[Rule]) -> Result<(Vec<FpgaRow>, u64)> {
    let mut c = Circuit::<S>::new();
    let g = *c.geometry();
    let mode: Mode = a.mode.into();
    let active = a.active.unwrap_or(S::C);
    let mut m = vec![0u16; S::C];
    for k in 0..a.messages {
        // The messages of `gbnn generate --active`: all clusters active unless asked.
        sparse_message(&g, a.seed, k, active, &mut m);
        c.store(&m).map_err(|e| anyhow!("{e}"))?;
    }
    let store_cycles = c.cycles();
    let plan = ProbePlan::new(g, a.seed, a.messages, a.seed.wrapping_add(1), a.probes, a.erased)
        .and_then(|p| p.with_modes(active, a.substituted))
        .map_err(|e| anyhow!("{e}"))?;
    let params = Params { gamma: a.gamma, max_iter: 20 };
    let (clock_mhz, _) = super::synth::clock(S::C, S::L, a.clock_mhz)?;
    let (mut v, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()]);
    let mut rows = Vec::new();
    for &rule in rules {
        let mut report = Report::default();
        let (mut hw, mut sw) = (FNV_OFFSET, FNV_OFFSET);
        for p in 0..a.probes {
            plan.probe(p, &mut m);
            let (stats, cycles) = c.retrieve_in(&m, rule, mode, params).map_err(|e| anyhow!("{e}"))?;
            report.add(cycles, stats.iterations);
            hw = fnv1a_words(hw, c.output());
            retrieve_in(&g, c.weights(), &m, rule, mode, &params, &mut v, &mut s);
            sw = fnv1a_words(sw, &v);
        }
        rows.push(FpgaRow {
            rule: rule.name(),
            probes: a.probes,
            mean_cycles: report.mean_cycles(),
            max_cycles: report.max_cycles,
            total_cycles: report.total_cycles,
            mean_iterations: report.total_iterations as f64 / a.probes.max(1) as f64,
            mean_latency_us: report.mean_latency(clock_mhz * 1e6) * 1e6,
            digest: format!("{hw:016x}"),
            identical_to_cpu: hw == sw,
        });
    }
    Ok((rows, store_cycles))
}

/// [`run_circuit`] on the compiled circuit of size `a.clusters × a.neurons`.
pub fn run_sized(a: &FpgaConfig, rules: &[Rule]) -> Result<(Vec<FpgaRow>, u64)> {
    match (a.clusters, a.neurons) {
        (8, 50) => run_circuit::<S8x50>(a, rules),
        (4, 100) => run_circuit::<S4x100>(a, rules),
        (16, 25) => run_circuit::<S16x25>(a, rules),
        (3, 3) => run_circuit::<S3x3>(a, rules),
        (cl, l) => bail!("no circuit is compiled for {cl}x{l}; available: 8x50, 4x100, 16x25, 3x3 (declare others with circuit_size!)"),
    }
}

/// Runs `fpga`: prints the report, writes JSON, and fails if the circuit differs from the CPU.
pub fn run(a: &FpgaConfig) -> Result<()> {
    if let Some(out) = &a.out {
        crate::io::atomic::check_writable(out)?;
    }
    let (cl, l) = (a.clusters, a.neurons);
    if cl == 0 || l == 0 {
        bail!("the circuit needs at least 1 cluster and 1 neuron per cluster");
    }
    if cl.saturating_mul(l) > MAX_NEURONS {
        bail!("{cl}x{l} = {} neurons exceeds the {MAX_NEURONS}-neuron fully-parallel circuit", cl.saturating_mul(l));
    }
    if a.clock_mhz.is_some_and(|f| !(f.is_finite() && f > 0.0)) {
        bail!("--clock-mhz must be a positive number");
    }
    let mode: Mode = a.mode.into();
    let active = a.active.unwrap_or(cl);
    if active == 0 || active > cl {
        bail!("--active {active}: need 1 <= active <= --clusters {cl}");
    }
    if a.erased + a.substituted > active {
        bail!("--erased {} + --substituted {}: more than the {active} active clusters", a.erased, a.substituted);
    }
    if a.substituted > 0 && mode == Mode::Erasure {
        bail!("--substituted {}: needs --mode noisy or sparse (erasure probes' symbols are right)", a.substituted);
    }
    if active < cl && mode != Mode::Sparse {
        bail!("--active {active}: silent clusters need --mode sparse");
    }
    // Default: every rule the mode defines.
    let rules: Vec<Rule> = if a.rules.is_empty() {
        Rule::ALL.into_iter().filter(|r| r.supports(mode)).collect()
    } else {
        a.rules.iter().map(|&r| r.into()).collect()
    };
    if let Some(r) = rules.iter().find(|r| !r.supports(mode)) {
        bail!("--rules {}: not defined for --mode {} (use sum-of-sum or sum-of-max)", r.name(), mode.name());
    }
    if let Some(dir) = &a.synth_report {
        #[cfg(feature = "plots")]
        super::synth_report::write_report(dir)?;
        #[cfg(not(feature = "plots"))]
        bail!("--synth-report {}: this build has no plots feature", dir.display());
    }
    let (rows, store_cycles) = run_sized(a, &rules)?;
    let r = resources(cl, l, a.gamma);
    let (clock_mhz, clock_label) = super::synth::clock(cl, l, a.clock_mhz)?;
    let measured = super::synth::for_size(cl, l)?;
    crate::out!("{}", table(a, &rows, store_cycles, &r)?)?;
    if let Some(path) = &a.out {
        let doc = json!({
            "clusters": cl, "neurons": l, "messages": a.messages, "erased": a.erased, "gamma": a.gamma,
            "mode": mode.name(), "substituted": a.substituted, "active": active,
            "clock_mhz": clock_mhz, "clock": clock_label, "store_cycles": store_cycles, "rules": rows,
            "resources_formula": resources_json(&r),
            "resources_measured": measured, "synthesis_command": super::synth::results()?.command,
        });
        crate::io::json::write(path, &doc)?;
    }
    anyhow::ensure!(rows.iter().all(|r| r.identical_to_cpu), "the circuit's states differ from the CPU driver's");
    Ok(())
}

fn resources_json(r: &Resources) -> serde_json::Value {
    json!({
        "weight_ffs": r.weight_ffs, "state_ffs": r.state_ffs, "score_bits": r.score_bits, "score_ffs": r.score_ffs,
        "sos_adder_trees": r.sos_adder_trees, "sos_full_adders": r.sos_full_adders, "sos_comparators": r.sos_comparators,
        "sos_equality": r.sos_equality, "som_and2": r.som_and2, "som_or_trees": r.som_or_trees,
        "som_and_trees": r.som_and_trees, "som_depth_luts": r.som_depth_luts, "sos_adder_levels": r.sos_adder_levels,
        "sos_wta_levels": r.sos_wta_levels,
    })
}

/// The human-readable report.
pub fn table(a: &FpgaConfig, rows: &[FpgaRow], store_cycles: u64, r: &Resources) -> Result<String> {
    let (_, clock) = super::synth::clock(a.clusters, a.neurons, a.clock_mhz)?;
    let mut s = format!(
        "circuit {}x{} ({} neurons), {} messages stored in {} cycles, {} {} probes with {} erased{}, clock {clock}\n",
        a.clusters,
        a.neurons,
        a.clusters * a.neurons,
        a.messages,
        store_cycles,
        a.probes,
        Mode::from(a.mode).name(),
        a.erased,
        match (a.substituted, a.active) {
            (0, None) => String::new(),
            (s, None) => format!(", {s} substituted"),
            (s, Some(c)) => format!(", {s} substituted, {c} of {} clusters active", a.clusters),
        }
    );
    s += &format!(
        "{:<15} {:>11} {:>10} {:>12} {:>10} {:>13}  {:<16} {}\n",
        "rule", "mean cycles", "max cycles", "total cycles", "mean iter", "latency (us)", "digest", "= CPU"
    );
    for x in rows {
        s += &format!(
            "{:<15} {:>11.2} {:>10} {:>12} {:>10.2} {:>13.3}  {:<16} {}\n",
            x.rule,
            x.mean_cycles,
            x.max_cycles,
            x.total_cycles,
            x.mean_iterations,
            x.mean_latency_us,
            x.digest,
            if x.identical_to_cpu { "yes" } else { "NO" }
        );
    }
    s += &format!(
        "resources, formula (counted from the structure): weight FFs {}, state FFs {}, score {} bits x {} = {} FFs\n",
        r.weight_ffs, r.state_ffs, r.score_bits, r.sos_adder_trees, r.score_ffs
    );
    s += &format!(
        "  sum-of-sum: {} adder trees ({} full adders), {} comparators of {} bits, {} equality comparators; depth {} adder levels | {} WTA levels\n",
        r.sos_adder_trees, r.sos_full_adders, r.sos_comparators, r.score_bits, r.sos_equality, r.sos_adder_levels, r.sos_wta_levels
    );
    s += &format!(
        "  sum-of-max: {} AND2, {} OR trees of {} inputs, {} AND trees of {} inputs; depth {} LUT6 levels\n",
        r.som_and2, r.som_or_trees, a.neurons, r.som_and_trees, a.clusters, r.som_depth_luts
    );
    s += "resources, measured (the RTL, fpga-model/rtl, synthesised by `make fpga-synth`):\n";
    for line in super::synth::lines(a.clusters, a.neurons)? {
        s += &format!("  {line}\n");
    }
    Ok(s)
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `fpga`: the cycle model of the fully-parallel circuit on a random workload.
pub struct FpgaConfig {
    /// Clusters C (C·L ≤ 400; sizes with a compiled circuit: 8x50, 4x100, 16x25, 3x3).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 8))]
    pub clusters: usize,
    /// Neurons per cluster L.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50))]
    pub neurons: usize,
    /// Rules to run, comma-separated (default: all). `--rule` is the old spelling.
    #[cfg_attr(feature = "cli", arg(long, value_enum, value_delimiter = ',', alias = "rule"))]
    pub rules: Vec<RuleArg>,
    /// Random messages stored (at most 10 000 000).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=crate::validate::MAX_MESSAGES)))]
    pub messages: u64,
    /// Probes (distinct stored messages).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..)))]
    pub probes: u64,
    /// Erased clusters per probe.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 4))]
    pub erased: usize,
    /// How the probes are read (as `gbnn retrieve --mode`): noisy and sparse run sum-of-sum and
    /// sum-of-max.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = ModeArg::Erasure))]
    pub mode: ModeArg,
    /// Known symbols per probe replaced by a wrong one (`--mode noisy`; as `gbnn generate`).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub substituted: usize,
    /// Active clusters per stored message (`--mode sparse`; default: all; as `gbnn generate`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub active: Option<usize>,
    /// Sum-of-sum γ.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2))]
    pub gamma: u32,
    /// Clock in MHz for latencies (default: the measured Fmax of the RTL on an iCE40 HX8K where
    /// place-and-route ran for this size, else an assumed 100).
    #[cfg_attr(feature = "cli", arg(long, value_parser = crate::validate::clock_mhz))]
    pub clock_mhz: Option<f64>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// Write the RTL's synthesis table and charts (measured vs formula) into this folder.
    #[cfg_attr(feature = "cli", arg(long))]
    pub synth_report: Option<PathBuf>,
    /// Also write the report as JSON to this file. `--json` is the old spelling.
    #[cfg_attr(feature = "cli", arg(short = 'o', long, alias = "json"))]
    pub out: Option<PathBuf>,
}
