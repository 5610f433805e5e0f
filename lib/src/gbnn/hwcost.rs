//! `neurobits hwcost`: one GBNN workload on every target, tabulated — latency, throughput, memory
//! and the digest of the decoded states, which must agree across targets.

use anyhow::{bail, Context, Result};
use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::{
    gbnn::{retrieve, Network, Params, Rule},
    Word,
};
use neurobits_gpu_host::Gpu;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use super::fpga::FpgaConfig;
use super::scenario::Scenario;
use super::RuleArg;
use crate::device::Cpu;
use crate::io::atomic::{write_set, write_string};
use crate::plot::{bar_chart_log, Bars};

/// One (target, rule) cell of the report.
#[derive(Serialize, Clone, Debug)]
pub struct Row {
    /// Target name (CPU, GPU, FPGA model, firmware).
    pub target: String,
    /// Rule name.
    pub rule: &'static str,
    /// `measured`, `estimate` or `does not fit` / `not available`.
    pub kind: String,
    /// Latency of one probe in µs.
    pub latency_us: Option<f64>,
    /// Probes per second.
    pub throughput_per_s: Option<f64>,
    /// Bytes of W on the target.
    pub w_bytes: Option<u64>,
    /// Bytes of state per probe on the target.
    pub state_bytes: Option<u64>,
    /// FNV-1a digest of the final states.
    pub digest: Option<String>,
    /// How the figure was obtained, or why it is missing.
    pub note: String,
}

fn digest(states: &[Word]) -> String {
    format!("{:016x}", fnv1a_words(FNV_OFFSET, states))
}

pub(super) fn missing(target: &str, rules: &[Rule], kind: &str, note: &str) -> Vec<Row> {
    rules
        .iter()
        .map(|r| Row {
            target: target.into(),
            rule: r.name(),
            kind: kind.into(),
            latency_us: None,
            throughput_per_s: None,
            w_bytes: None,
            state_bytes: None,
            digest: None,
            note: note.into(),
        })
        .collect()
}

/// Runs `hwcost`: every target, tables, JSON, CSV and the chart.
pub fn run(a: &HwcostConfig) -> Result<()> {
    // The output folder before the timings (`-o -`, a file there: one line, nothing made).
    crate::io::atomic::check_folder(&a.out)?;
    let s = Scenario {
        id: 0,
        clusters: a.clusters,
        neurons: a.neurons,
        stored: a.messages,
        probes: a.probes,
        erased: a.erased,
        gamma: a.gamma,
    };
    let rules: Vec<Rule> =
        if a.rules.is_empty() { Rule::ALL.to_vec() } else { a.rules.iter().map(|&r| r.into()).collect() };
    let fpga_ok = a.fpga_clock_mhz.is_none_or(|f| f > 0.0 && f.is_finite());
    if !(fpga_ok && a.mcu_clock_mhz > 0.0 && a.mcu_clock_mhz.is_finite()) {
        bail!("clocks must be positive numbers of MHz");
    }
    let net = s.network(a.seed)?;
    let g = *net.geometry();
    let (probes, _) = s.probes(a.seed, a.probes, a.erased)?;
    let params = Params { gamma: a.gamma, max_iter: 20 };
    let (w_bytes, row_bytes) = (g.weight_words() as u64 * 8, g.row_words() as u64 * 8);
    let lat_k = a.latency_probes.clamp(1, a.probes.max(1) as usize).min(a.probes as usize);
    let mut rows = Vec::new();

    // CPU: single-probe latency on one core (first `lat_k` probes), batch throughput on 1 and all cores.
    let one = Cpu::new(Some(1))?;
    let all = Cpu::new(None)?;
    for &rule in &rules {
        let (mut v, mut sc) = (vec![0; g.row_words()], vec![0; g.row_words()]);
        let mut latency = 0.0;
        for _warm_then_timed in 0..2 {
            let t = Instant::now();
            for p in probes.chunks(g.clusters()).take(lat_k) {
                retrieve(&g, net.weights(), p, rule, &params, &mut v, &mut sc);
            }
            latency = t.elapsed().as_secs_f64() / lat_k.max(1) as f64;
        }
        for (name, b) in [("cpu 1 core", &one), ("cpu all cores", &all)] {
            b.retrieve(&net, &probes[..g.clusters()], rule, &params)?; // wakes the pool
            let t = Instant::now();
            let batch = b.retrieve(&net, &probes, rule, &params)?;
            let secs = t.elapsed().as_secs_f64();
            rows.push(Row {
                target: format!(
                    "{name} ({} threads)",
                    if name == "cpu 1 core" { 1 } else { rayon::current_num_threads() }
                ),
                rule: rule.name(),
                kind: "measured".into(),
                latency_us: Some(latency * 1e6),
                throughput_per_s: Some(a.probes as f64 / secs),
                w_bytes: Some(w_bytes),
                state_bytes: Some(2 * row_bytes),
                digest: Some(digest(&batch.states)),
                note: format!("latency: mean of {lat_k} single-probe retrievals on one core"),
            });
        }
    }
    rows.extend(gpu_rows(a, &net, &probes, &rules, &params, lat_k)?);
    rows.extend(fpga_rows(a, &rules)?);
    rows.extend(super::hwcost_mcu::mcu_rows(a, &rules, w_bytes)?);

    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let md = markdown(a, &rows);
    // All four files appear together, or none do.
    write_set(&a.out, &["hwcost.md", "hwcost.csv", "hwcost.json", "hwcost.svg"], |dir| {
        write_string(&dir.join("hwcost.md"), &md)?;
        write_string(&dir.join("hwcost.csv"), &csv(&rows))?;
        crate::io::json::write(&dir.join("hwcost.json"), &rows)?;
        let bars: Vec<Bars> = rules
            .iter()
            .map(|r| Bars {
                label: r.name().to_string(),
                // One CPU bar: the all-cores row repeats the single-probe latency.
                values: rows
                    .iter()
                    .filter(|x| x.rule == r.name() && !x.target.starts_with("cpu all cores"))
                    .map(|x| (x.target.clone(), x.latency_us))
                    .collect(),
            })
            .collect();
        let title =
            format!("GBNN {}x{}: latency per retrieval (us, log scale; n/a: not available)", a.clusters, a.neurons);
        bar_chart_log(&dir.join("hwcost.svg"), &title, "microseconds (log)", &bars)?;
        Ok(())
    })?;
    crate::out!("{md}")?;
    for r in &rules {
        let ds: Vec<&String> = rows.iter().filter(|x| x.rule == r.name()).filter_map(|x| x.digest.as_ref()).collect();
        if ds.windows(2).any(|w| w[0] != w[1]) {
            bail!(
                "digest mismatch for {}: the targets decoded different states (see {})",
                r.name(),
                a.out.join("hwcost.md").display()
            );
        }
    }
    Ok(())
}

fn gpu_rows(
    a: &HwcostConfig,
    net: &Network,
    probes: &[u16],
    rules: &[Rule],
    params: &Params,
    lat_k: usize,
) -> Result<Vec<Row>> {
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => return Ok(missing("gpu", rules, "not available", &e.to_string())),
    };
    let name = format!("gpu ({})", gpu.name());
    let dnet = gpu.upload(net)?;
    let c = net.geometry().clusters();
    let row_bytes = net.geometry().row_words() as u64 * 8;
    let mut rows = Vec::new();
    for &rule in rules {
        dnet.retrieve(&probes[..c], rule, params)?; // warm-up
        let out = dnet.retrieve(probes, rule, params)?;
        let mut single = Vec::new();
        let t = Instant::now();
        for p in probes.chunks(c).take(lat_k) {
            single.extend(dnet.retrieve(p, rule, params)?.states);
        }
        let latency = t.elapsed().as_secs_f64() / lat_k.max(1) as f64;
        let same_single = single[..] == out.states[..single.len()];
        anyhow::ensure!(same_single, "GPU single-probe and batch states differ for {}", rule.name());
        rows.push(Row {
            target: format!("{name} batched"),
            rule: rule.name(),
            kind: "measured".into(),
            latency_us: Some(out.total_ms * 1e3 / a.probes.max(1) as f64),
            throughput_per_s: Some(a.probes as f64 / (out.total_ms / 1e3)),
            w_bytes: Some(net.weights().len() as u64 * 8),
            state_bytes: Some(2 * row_bytes * a.probes),
            digest: Some(digest(&out.states)),
            note: format!("latency: batch time / probes (kernels {:.3} ms of {:.3} ms)", out.kernel_ms, out.total_ms),
        });
        rows.push(Row {
            target: format!("{name} single probe"),
            rule: rule.name(),
            kind: "measured".into(),
            latency_us: Some(latency * 1e6),
            throughput_per_s: Some(1.0 / latency),
            w_bytes: Some(net.weights().len() as u64 * 8),
            state_bytes: Some(2 * row_bytes),
            digest: Some(digest(&out.states)),
            note: format!("mean of {lat_k} one-probe launches, transfers included; its states equal the batch's"),
        });
    }
    Ok(rows)
}

fn fpga_rows(a: &HwcostConfig, rules: &[Rule]) -> Result<Vec<Row>> {
    let (clock_mhz, clock) = super::synth::clock(a.clusters, a.neurons, a.fpga_clock_mhz)?;
    let target = format!("fpga model @{clock_mhz} MHz");
    let n = a.clusters.saturating_mul(a.neurons);
    if n > neurobits_fpga::MAX_NEURONS {
        return Ok(missing(
            &target,
            rules,
            "does not fit",
            &format!("{n} neurons > the 400-neuron fully-parallel circuit"),
        ));
    }
    let fa = FpgaConfig {
        clusters: a.clusters,
        neurons: a.neurons,
        rules: vec![],
        messages: a.messages,
        probes: a.probes,
        erased: a.erased,
        mode: super::retrieve::ModeArg::Erasure,
        substituted: 0,
        active: None,
        gamma: a.gamma,
        clock_mhz: Some(clock_mhz),
        seed: a.seed,
        synth_report: None,
        out: None,
    };
    let (fr, _) = match super::fpga::run_sized(&fa, rules) {
        Ok(x) => x,
        Err(e) => return Ok(missing(&target, rules, "not available", &e.to_string())),
    };
    let r = neurobits_fpga::resources(a.clusters, a.neurons, a.gamma);
    let measured = super::synth::summary(a.clusters, a.neurons)?;
    let kind = if a.fpga_clock_mhz.is_none() && clock.contains("measured") { "measured" } else { "estimate" };
    Ok(fr
        .into_iter()
        .map(|x| Row {
            target: target.clone(),
            rule: x.rule,
            kind: kind.into(),
            latency_us: Some(x.mean_latency_us),
            throughput_per_s: Some(1e6 / x.mean_latency_us),
            w_bytes: Some(r.weight_ffs.div_ceil(8)),
            state_bytes: Some((r.state_ffs + r.score_ffs).div_ceil(8)),
            digest: Some(x.digest),
            note: format!(
                "measured cycles ({:.2} mean, {} max) at {clock}; W as flip-flops (symmetric half; formula {} weight FFs); RTL synthesis (Yosys): {measured}",
                x.mean_cycles, x.max_cycles, r.weight_ffs
            ),
        })
        .collect())
}

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or("—".into(), |v| format!("{v:.prec$}"))
}

fn markdown(a: &HwcostConfig, rows: &[Row]) -> String {
    let mut s = format!(
        "GBNN {}x{}, {} stored, {} probes, {} erased, gamma {} (sum-of-sum), seed {}\n\n",
        a.clusters, a.neurons, a.messages, a.probes, a.erased, a.gamma, a.seed
    );
    s += "| target | rule | kind | latency (us) | throughput (/s) | W (bytes) | state (bytes) | digest | note |\n|---|---|---|---|---|---|---|---|---|\n";
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.target,
            r.rule,
            r.kind,
            opt(r.latency_us, 3),
            opt(r.throughput_per_s, 0),
            r.w_bytes.map_or("—".into(), |x| x.to_string()),
            r.state_bytes.map_or("—".into(), |x| x.to_string()),
            r.digest.clone().unwrap_or_else(|| "—".into()),
            r.note
        );
    }
    let fpga_clock = super::synth::clock(a.clusters, a.neurons, a.fpga_clock_mhz).map(|c| c.1).unwrap_or_default();
    s += &format!(
        "\nFPGA latency = model cycles at {fpga_clock}; microcontroller time = QEMU instruction count at an assumed {} MHz and 1 instruction per cycle (an estimate).\n",
        a.mcu_clock_mhz
    );
    s
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("target,rule,kind,latency_us,throughput_per_s,w_bytes,state_bytes,digest,note\n");
    for r in rows {
        s += &format!(
            "\"{}\",{},{},{},{},{},{},{},\"{}\"\n",
            r.target,
            r.rule,
            r.kind,
            r.latency_us.map_or(String::new(), |x| format!("{x:.6}")),
            r.throughput_per_s.map_or(String::new(), |x| format!("{x:.3}")),
            r.w_bytes.map_or(String::new(), |x| x.to_string()),
            r.state_bytes.map_or(String::new(), |x| x.to_string()),
            r.digest.clone().unwrap_or_default(),
            r.note.replace('"', "'")
        );
    }
    s
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `hwcost`: one GBNN workload on every target.
pub struct HwcostConfig {
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 8))]
    /// Clusters C.
    pub clusters: usize,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50))]
    /// Neurons per cluster L.
    pub neurons: usize,
    /// Random messages stored (at most 10 000 000).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..=crate::validate::MAX_MESSAGES)))]
    pub messages: u64,
    /// Probes (distinct stored messages).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..)))]
    pub probes: u64,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 5))]
    /// Erased clusters per probe.
    pub erased: usize,
    /// Rules (default: all).
    #[cfg_attr(feature = "cli", arg(long, value_enum, value_delimiter = ','))]
    pub rules: Vec<RuleArg>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2))]
    /// Sum-of-sum reinforcement factor γ.
    pub gamma: u32,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    /// Probes timed one at a time for the single-probe latencies.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = crate::validate::positive))]
    pub latency_probes: usize,
    /// FPGA clock (MHz; default: the RTL's measured Fmax on an iCE40 HX8K where place-and-route
    /// ran for this size, else an assumed 100).
    #[cfg_attr(feature = "cli", arg(long, value_parser = crate::validate::clock_mhz))]
    pub fpga_clock_mhz: Option<f64>,
    /// Assumed microcontroller clock (MHz; the LM3S6965 runs at up to 50).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50.0, value_parser = crate::validate::clock_mhz))]
    pub mcu_clock_mhz: f64,
    /// The Cortex-M3's firmware ELF (default: mcu/target/thumbv7m-none-eabi/release/neurobits-mcu;
    /// the other boards' are beside it, under their targets).
    #[cfg_attr(feature = "cli", arg(long))]
    pub firmware: Option<PathBuf>,
    /// Fail, rather than mark the target unavailable, when the firmware cannot run.
    #[cfg_attr(feature = "cli", arg(long))]
    pub require_mcu: bool,
    /// A folder for hwcost.md, .csv, .json and .svg.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}
