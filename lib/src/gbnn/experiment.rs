//! Reproduces Fig. 9 (sum-of-sum vs sum-of-max), Fig. 10 (γ sweep) and Fig. 14 (joint: rate and
//! running time) of Yao, Gripon & Rabbat (2013).

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::gbnn::{Params, Rule};
use serde::Serialize;
use std::time::Instant;

use super::scenario::scenario;
use super::RuleArg;
use super::{rates, Rates};
use crate::device::Device;
use crate::device::DeviceChoice;
use crate::io::atomic::{write_set, write_string};
use crate::io::journal::Journal;
use crate::plot::{line_chart, Labels, Series};
use crate::progress::bar;
use std::path::PathBuf;

#[derive(Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
/// One result row.
pub struct Row {
    /// Scenario number.
    pub scenario: u8,
    /// Rule name.
    pub rule: String,
    /// Sum-of-sum reinforcement factor γ.
    pub gamma: u32,
    /// Erased clusters per probe.
    pub erased: usize,
    /// Probes (distinct stored messages).
    pub probes: u64,
    #[serde(flatten)]
    /// Retrieval rates.
    pub rates: Rates,
    /// Mean updates per probe.
    pub mean_iterations: f64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Measured density of W (edges over `C(C−1)L²`).
    #[serde(default)]
    pub density: f64,
    /// Theoretical density `1 − (1 − 1/L²)^M` (Gripon & Berrou 2011).
    #[serde(default)]
    pub theory_density: f64,
    /// Theoretical one-iteration retrieval rate `1 − P_e`,
    /// `P_e = 1 − (1 − d^{C−e})^{e(L−1)}` (Gripon & Berrou 2011).
    #[serde(default)]
    pub theory_rate: f64,
    /// Measured strict rate after one iteration: joint's first pass (the AND of the known
    /// neurons' rows), the decoder the `1 − P_e` formula describes.
    #[serde(default)]
    pub one_pass: f64,
}

/// Parses `a..b` (inclusive).
pub fn parse_range(s: &str, clusters: usize) -> Result<(usize, usize)> {
    // A single number, as the other commands take it, is the range of that number alone.
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    let a: usize = a.trim().parse().map_err(|_| anyhow!("--erased '{s}': '{a}' is not a number"))?;
    let b: usize = b.trim().parse().map_err(|_| anyhow!("--erased '{s}': '{b}' is not a number"))?;
    if a > b || b > clusters {
        bail!("--erased '{s}': need a <= b <= {clusters}");
    }
    Ok((a, b))
}

/// Runs `gbnn experiment`: table, CSV, JSON and plots.
pub fn run(a: &ExperimentConfig) -> Result<()> {
    // The output folder before anything else: `-o -` or a file there is the one line, not a
    // line after the scenario's notes (and never a folder named `-`).
    crate::io::atomic::check_folder(&a.out)?;
    let s = scenario(a.scenario)?;
    let (e0, e1) = match &a.erased {
        Some(r) => parse_range(r, s.clusters)?,
        None => (1, s.clusters - 1),
    };
    let probes = a.probes.unwrap_or(s.probes);
    // Each probe is a distinct stored message: refused here, before the notes, not by the
    // workload after them.
    if probes > s.stored {
        bail!("--probes {probes}: scenario {} stores {} messages, and each probe is a distinct one", s.id, s.stored);
    }
    // The probes, their truth and the final states of one point (twice while they are gathered).
    let (c, rw) = (s.clusters as u128, (s.clusters * s.neurons.div_ceil(64)) as u128);
    crate::budget::check_items(
        format_args!("gbnn experiment --probes {probes}: the probes, their truth and final states"),
        probes as u128,
        c * 4 + rw * 16,
    )?;
    let device = Device::open(a.device)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;

    // (rule, γ): the compared rules at the paper's γ = 2, then the sum-of-sum γ sweep.
    let mut configs: Vec<(Rule, u32)> = a.rules.iter().map(|&r| (r.into(), s.gamma)).collect();
    for &g in &a.gammas {
        if !configs.contains(&(Rule::SumOfSum, g)) {
            configs.push((Rule::SumOfSum, g));
        }
    }
    let net = s.network(a.seed)?;
    let backend = device.gbnn(&net)?;
    crate::noteln!(
        "scenario {}: C={}, L={}, {} stored, {} probes, erased {e0}..{e1}, on {}",
        s.id,
        s.clusters,
        s.neurons,
        s.stored,
        probes,
        backend.name()
    );
    let g = *net.geometry();
    let density = super::theory::measured_density(&net);
    let theory_density = super::theory::density(s.clusters, s.clusters, s.neurons, s.stored);
    crate::noteln!("density: measured {density:.4}, theory 1 - (1 - 1/L^2)^M = {theory_density:.4}");
    // Resume: every finished point is appended to `partial.jsonl` (io::journal: checksummed,
    // under a header naming the run); a rerun of the same run skips the verified points found
    // there, once each, and only those of this run's configurations.
    let key = format!(
        "scenario={} seed={} probes={probes} erased={e0}..{e1} configs={configs:?} device={:?}",
        s.id, a.seed, a.device
    );
    let (journal, done) = Journal::open(&a.out, &key)?;
    let mut rows: Vec<Row> = Vec::new();
    for r in done.iter().filter_map(|l| serde_json::from_str::<Row>(l).ok()) {
        let wanted = r.scenario == s.id
            && r.probes == probes
            && (e0..=e1).contains(&r.erased)
            && configs.iter().any(|&(rule, gamma)| rule.name() == r.rule && gamma == r.gamma);
        if wanted && !rows.iter().any(|x| x.rule == r.rule && x.gamma == r.gamma && x.erased == r.erased) {
            rows.push(r);
        }
    }
    if !rows.is_empty() {
        crate::noteln!(
            "resuming: {} of {} points already done ({})",
            rows.len(),
            (e1 - e0 + 1) * configs.len(),
            a.out.join("partial.jsonl").display()
        );
    }
    // Progress in probes (the work), ticking while a chunk runs.
    let total = (e1 - e0 + 1) as u64 * configs.len() as u64 * probes;
    let pb = bar(total, "probes");
    pb.inc(rows.len() as u64 * probes);
    let chunk = (probes as usize / 32).max(64) * g.clusters();
    for e in e0..=e1 {
        let todo: Vec<_> = configs
            .iter()
            .filter(|&&(rule, gamma)| !rows.iter().any(|r| r.rule == rule.name() && r.gamma == gamma && r.erased == e))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let (pr, truth) = s.probes(a.seed, probes, e)?;
        for &&(rule, gamma) in &todo {
            let t = Instant::now();
            let (mut states, mut iters) = (Vec::with_capacity(probes as usize * g.row_words()), 0u64);
            for part in pr.chunks(chunk) {
                let batch = backend.retrieve(part, rule, &Params { gamma, max_iter: 20 })?;
                iters += batch.stats.iter().map(|x| x.iterations as u64).sum::<u64>();
                states.extend_from_slice(&batch.states);
                pb.inc((part.len() / g.clusters()) as u64);
            }
            let row = Row {
                scenario: s.id,
                rule: rule.name().to_string(),
                gamma,
                erased: e,
                probes,
                rates: rates(&g, &states, &truth),
                mean_iterations: iters as f64 / probes.max(1) as f64,
                seconds: t.elapsed().as_secs_f64(),
                density,
                theory_density,
                theory_rate: 1.0 - super::theory::erasure_error(theory_density, s.clusters, e, s.neurons),
                one_pass: 0.0,
            };
            journal.append(&serde_json::to_string(&row)?)?;
            rows.push(row);
        }
    }
    // Table order: erased, then the configurations' order, whatever order they were computed in.
    rows.sort_by_key(|r| {
        (r.erased, configs.iter().position(|&(rule, gamma)| rule.name() == r.rule && gamma == r.gamma))
    });
    // The measured one-iteration rate per erased count, for every row (resumed ones included).
    let mut one_pass = Vec::new();
    for e in e0..=e1 {
        let (pr, truth) = s.probes(a.seed, probes, e)?;
        one_pass.push(rates(&g, &super::capacity::first_pass(&net, &pr), &truth).strict);
    }
    // Rows resumed from a journal of an older version carry no theory: fill every row alike.
    for r in &mut rows {
        r.one_pass = one_pass[r.erased - e0];
        r.density = density;
        r.theory_density = theory_density;
        r.theory_rate = 1.0 - super::theory::erasure_error(theory_density, s.clusters, r.erased, s.neurons);
    }
    pb.finish_and_clear();
    let capacity = match a.capacity_points {
        0 => Vec::new(),
        n => {
            let target = match a.device {
                DeviceChoice::Cpu => crate::device::Target::CPU,
                DeviceChoice::Gpu => crate::device::Target::Gpu(0),
                DeviceChoice::Auto => crate::device::Target::Auto,
            };
            super::capacity::curves(&s, a.seed, n, probes.min(1000), &a.rules, target)?
        }
    };
    write_outputs(a, s.gamma, &rows, &capacity)?;
    journal.finish();
    crate::out!("{}", table(&rows, s.gamma))?;
    let extra = if capacity.is_empty() {
        ""
    } else {
        ", capacity.csv, capacity.json, capacity-erasure.svg, capacity-sparse.svg"
    };
    crate::noteln!(
        "wrote results.csv, results.json, retrieval.svg, expected.svg, gamma.svg, time.svg{extra} to {}",
        a.out.display()
    );
    Ok(())
}

fn write_outputs(
    a: &ExperimentConfig,
    gamma: u32,
    rows: &[Row],
    capacity: &[super::capacity::CapacityRow],
) -> Result<()> {
    let mut csv = String::from(
        "scenario,rule,gamma,erased,probes,strict,contains,expected,mean_iterations,seconds,density,theory_density,theory_rate,one_pass\n",
    );
    for r in rows {
        csv += &format!(
            "{},{},{},{},{},{:.6},{:.6},{:.6},{:.3},{:.6},{:.6},{:.6},{:.6},{:.6}\n",
            r.scenario,
            r.rule,
            r.gamma,
            r.erased,
            r.probes,
            r.rates.strict,
            r.rates.contains,
            r.rates.expected,
            r.mean_iterations,
            r.seconds,
            r.density,
            r.theory_density,
            r.theory_rate,
            r.one_pass
        );
    }
    let mut names = vec!["results.csv", "results.json", "retrieval.svg", "expected.svg", "time.svg"];
    if rows.iter().any(|r| r.rule == "sum-of-sum") {
        names.push("gamma.svg");
    }
    if !capacity.is_empty() {
        names.extend(super::capacity::FILES);
    }
    // All files of a run appear together, or none do.
    write_set(&a.out, &names, |dir| {
        if !capacity.is_empty() {
            let sc = rows.first().map(|r| r.scenario).unwrap_or(0);
            super::capacity::write(dir, &format!("Scenario {sc}"), capacity)?;
        }
        write_string(&dir.join("results.csv"), &csv)?;
        crate::io::json::write(&dir.join("results.json"), &rows)?;
        // `band`: the Wilson 95 % interval of the strict rate (None: no interval).
        let curves = |pick: &dyn Fn(&Row) -> Option<String>, y: &dyn Fn(&Row) -> f64, band: bool| {
            let mut out: Vec<Series> = Vec::new();
            for r in rows {
                if let Some(label) = pick(r) {
                    let at = match out.iter().position(|s| s.label == label) {
                        Some(i) => i,
                        None => {
                            out.push(Series::new(label, Vec::new()));
                            out.len() - 1
                        }
                    };
                    out[at].points.push((r.erased as f64, y(r)));
                    if band {
                        let k = (r.rates.strict * r.probes as f64).round() as usize;
                        out[at].intervals.push(super::score::wilson95(k, r.probes as usize));
                    }
                }
            }
            out
        };
        let main = |r: &Row| (r.gamma == gamma).then(|| r.rule.to_string());
        let sc = rows.first().map(|r| r.scenario).unwrap_or(0);
        let title = format!("Scenario {sc}: strict retrieval rate (Wilson 95 % bars), gamma = {gamma}");
        let labels = Labels { title: &title, x: "erased clusters", y: "retrieval rate (strict)" };
        let mut measured = curves(&main, &|r| r.rates.strict, true);
        // Theory beside measurement: one point per erased count (every rule's row has it).
        let mut theory = Series::new("theory 1 - P_e (1 iter.)", Vec::new());
        let mut one = Series::new("measured, 1 iter.", Vec::new());
        for r in rows {
            if !theory.points.iter().any(|p| p.0 == r.erased as f64) {
                theory.points.push((r.erased as f64, r.theory_rate));
                one.points.push((r.erased as f64, r.one_pass));
            }
        }
        measured.push(theory);
        measured.push(one);
        line_chart(&dir.join("retrieval.svg"), &labels, &measured, false)?;
        let title = format!("Scenario {sc}: expected retrieval rate (uniform pick among ties), gamma = {gamma}");
        let labels = Labels { title: &title, x: "erased clusters", y: "retrieval rate (expected)" };
        line_chart(&dir.join("expected.svg"), &labels, &curves(&main, &|r| r.rates.expected, false), false)?;
        let sweep = curves(
            &|r: &Row| (r.rule == "sum-of-sum").then(|| format!("gamma = {}", r.gamma)),
            &|r| r.rates.strict,
            true,
        );
        if !sweep.is_empty() {
            let title = format!("Scenario {sc}: sum-of-sum retrieval rate vs gamma");
            let labels = Labels { title: &title, x: "erased clusters", y: "retrieval rate" };
            line_chart(&dir.join("gamma.svg"), &labels, &sweep, false)?;
        }
        let title = format!("Scenario {sc}: running time (all probes)");
        let labels = Labels { title: &title, x: "erased clusters", y: "seconds (log)" };
        line_chart(&dir.join("time.svg"), &labels, &curves(&main, &|r| r.seconds.max(1e-6), false), true)?;
        Ok(())
    })
}

/// Strict retrieval rate (%) per erased count (rows) and rule/γ (columns).
pub fn table(rows: &[Row], gamma: u32) -> String {
    let mut cols: Vec<(&str, u32)> = Vec::new();
    for r in rows {
        if !cols.contains(&(r.rule.as_str(), r.gamma)) {
            cols.push((r.rule.as_str(), r.gamma));
        }
    }
    let name = |(rule, g): (&str, u32)| {
        if g == gamma || rule != "sum-of-sum" {
            rule.to_string()
        } else {
            format!("{rule} g={g}")
        }
    };
    let mut out = format!("{:>7}", "erased");
    for &c in &cols {
        out += &format!(" | {:>16}", name(c));
    }
    out.push('\n');
    let mut es: Vec<usize> = rows.iter().map(|r| r.erased).collect();
    es.dedup();
    for e in es {
        out += &format!("{e:>7}");
        for &c in &cols {
            let r =
                rows.iter().find(|r| r.erased == e && (r.rule.as_str(), r.gamma) == c).expect("every cell computed");
            out += &format!(" | {:>15.2}%", 100.0 * r.rates.strict);
        }
        out.push('\n');
    }
    out
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn experiment`: the paper's retrieval-rate experiments.
pub struct ExperimentConfig {
    /// 1: C=8, L=128, 5000 stored, 3000 probes. 2: C=16, L=512, 50 000 stored, 30 000 probes.
    #[cfg_attr(feature = "cli", arg(long, value_parser = clap::value_parser!(u8).range(1..=2)))]
    pub scenario: u8,
    /// Rules to compare (γ = 2, as in the paper).
    #[cfg_attr(
        feature = "cli",
        arg(long, value_enum, value_delimiter = ',', default_value = "sum-of-sum,sum-of-max,bail-out-early,joint")
    )]
    pub rules: Vec<RuleArg>,
    /// Erased clusters: a number, or a range `a..b` (inclusive); default 1..C-1.
    #[cfg_attr(feature = "cli", arg(long))]
    pub erased: Option<String>,
    /// γ values of the sum-of-sum sweep (Fig. 10), comma-separated; `--gammas` alone skips it.
    /// (Space-separated values are accepted too, the old form.)
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', num_args = 0.., default_value = "0,1,2,4"))]
    pub gammas: Vec<u32>,
    /// Probes per point (default: the scenario's).
    #[cfg_attr(feature = "cli", arg(long, value_parser = clap::value_parser!(u64).range(1..)))]
    pub probes: Option<u64>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    /// Where to compute: cpu, gpu, or auto (the GPU when it can, else the CPU).
    pub device: DeviceChoice,
    /// A folder for results.csv, results.json and the SVG plots.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
    /// Points of the capacity curves: strict retrieval and density vs stored messages, erasure
    /// and sparse, beside the theory (capacity.csv/json/svg); 0 skips them.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 8))]
    pub capacity_points: u64,
}
