//! Side-by-side timing of every rule and implementation in one run.

use anyhow::Result;
use neurobits_core::{
    gbnn::{Network, Params, Rule},
    Word,
};
use neurobits_gpu_host::gbnn::{DenseGpu, GpuDecoded};
use neurobits_gpu_host::Gpu;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;

pub use super::bench_config::BenchConfig;
use super::dense::DenseSumOfSum;
use super::scenario::{scenario, Scenario};
use super::RuleArg;
use super::{rates, strict_rate_decoded};
use crate::device::bench_devices;
use crate::device::Cpu;
use crate::progress::stages;
use indicatif::ProgressBar;
use neurobits_core::gbnn::decode::{decode_state, Decoded};
use neurobits_core::gbnn::kernels::JointWarp;

#[derive(Serialize, Clone, Debug)]
/// One timed implementation.
pub struct Entry {
    /// What ran (device and variant).
    pub implementation: String,
    /// Rule name.
    pub rule: &'static str,
    /// Probes (distinct stored messages).
    pub probes: u64,
    /// End to end: probe upload and state download included (W resident).
    pub seconds: f64,
    /// GPU kernels alone.
    pub kernel_seconds: Option<f64>,
    /// Probes per second.
    pub probes_per_second: f64,
    /// Fraction of probes retrieved exactly.
    pub strict_rate: f64,
    /// Mean updates per probe.
    pub mean_iterations: f64,
    /// Whether the final states equal the CPU's bit for bit (GPU rows run beside the CPU).
    pub bit_exact_vs_cpu: Option<bool>,
}

/// Everything a bench run measured, for the JSON output.
#[derive(Serialize, Default)]
pub struct Report {
    /// Scenario number.
    pub scenario: u8,
    /// Erased clusters per probe.
    pub erased: usize,
    /// GPU name, when one was used.
    pub device: Option<String>,
    /// Timed implementations.
    pub entries: Vec<Entry>,
    /// Device-to-device copy bandwidth (GB/s, read + write).
    pub copy_bandwidth_gb_s: Option<f64>,
    /// Least bytes the joint kernels must move.
    pub joint_min_bytes: Option<u64>,
    /// GB/s the joint kernels achieve on their least traffic.
    pub joint_achieved_gb_s: Option<f64>,
    /// Joint kernels' speed as a fraction of the copy-bandwidth bound (their median run).
    pub joint_fraction_of_bound: Option<f64>,
    /// Kernel milliseconds of each timed warm run of the GPU joint rule's compact results.
    pub joint_kernel_ms_runs: Vec<f64>,
}

struct Ctx<'a> {
    s: Scenario,
    net: &'a Network,
    probes: &'a [u16],
    truth: &'a [u16],
    params: Params,
    count: u64,
    repeats: u32,
}

impl Ctx<'_> {
    fn entry(&self, implementation: String, rule: Rule, seconds: f64, states: &[Word], iters: f64) -> Entry {
        let strict = rates(self.net.geometry(), states, self.truth).strict;
        self.entry_with(implementation, rule, seconds, strict, iters)
    }

    fn entry_decoded(&self, implementation: String, rule: Rule, seconds: f64, d: &[Decoded], iters: f64) -> Entry {
        let strict = strict_rate_decoded(self.net.geometry().clusters(), d, self.truth);
        self.entry_with(implementation, rule, seconds, strict, iters)
    }

    /// A GPU row of compact results: its times, and whether its results equal the CPU's (`cpu`,
    /// when that rule ran there).
    fn entry_gpu(
        &self,
        implementation: String,
        rule: Rule,
        out: &GpuDecoded,
        iters: f64,
        cpu: Option<&Vec<Decoded>>,
    ) -> Entry {
        let mut e = self.entry_decoded(implementation, rule, out.total_ms / 1e3, &out.decoded, iters);
        e.kernel_seconds = Some(out.kernel_ms / 1e3);
        e.bit_exact_vs_cpu = cpu.map(|c| *c == out.decoded);
        e
    }

    fn entry_with(&self, implementation: String, rule: Rule, seconds: f64, strict: f64, iters: f64) -> Entry {
        Entry {
            implementation,
            rule: rule.name(),
            probes: self.count,
            seconds,
            kernel_seconds: None,
            probes_per_second: self.count as f64 / seconds,
            strict_rate: strict,
            mean_iterations: iters,
            bit_exact_vs_cpu: None,
        }
    }

    /// `states` decoded on the host (to compare dense results with compact ones).
    fn decode(&self, states: &[Word]) -> Vec<Decoded> {
        let g = self.net.geometry();
        let mut out = vec![Decoded::default(); states.len() / g.row_words() * g.clusters()];
        for (v, o) in states.chunks(g.row_words()).zip(out.chunks_mut(g.clusters())) {
            decode_state(g, v, o);
        }
        out
    }
}

/// Runs `gbnn bench`: the side-by-side table.
pub fn run(a: &BenchConfig) -> Result<()> {
    if let Some(out) = &a.out {
        crate::io::atomic::check_writable(out)?;
    }
    let s = scenario(a.scenario)?;
    let erased = a.erased.unwrap_or(s.erased);
    let count = a.probes.unwrap_or(s.probes);
    let rules: Vec<Rule> = if !a.rules.is_empty() {
        a.rules.iter().map(|&r| r.into()).collect()
    } else if s.id == 3 {
        vec![RuleArg::Joint.into()]
    } else {
        Rule::ALL.to_vec()
    };
    let (use_cpu, gpu) = bench_devices(a.device)?;
    let params = Params { gamma: s.gamma, max_iter: 20 };
    crate::outln!(
        "scenario {}: C={}, L={}, {} stored, {} probes, {} erased, gamma={} (sum-of-sum), t_max=20",
        s.id,
        s.clusters,
        s.neurons,
        s.stored,
        count,
        erased,
        s.gamma
    )?;
    let t = Instant::now();
    let net = s.network(a.seed)?;
    // One step per table row (CPU rules, optional baseline, GPU upload, rules, cuBLAS, bandwidth).
    let cpu_steps =
        if use_cpu { (1 + a.single_core as u64) * rules.len() as u64 + (a.baseline_probes > 0) as u64 } else { 0 };
    let gpu_steps = if gpu.is_some() { 2 + rules.len() as u64 + (s.id == 2) as u64 } else { 0 };
    let pb = stages(1 + cpu_steps + gpu_steps);
    pb.inc(1);
    crate::outln!(
        "stored {} messages on the CPU in {:.3} s (W = {:.1} MiB)",
        s.stored,
        t.elapsed().as_secs_f64(),
        net.weights().len() as f64 * 8.0 / (1 << 20) as f64
    )?;
    let (probes, truth) = s.probes(a.seed, count, erased)?;
    let ctx = Ctx { s, net: &net, probes: &probes, truth: &truth, params, count, repeats: a.repeats };
    let mut report = Report { scenario: s.id, erased, ..Default::default() };
    let mut cpu_states: HashMap<&'static str, Vec<Decoded>> = HashMap::new();

    if use_cpu {
        let mut backends = vec![Cpu::new(None)?];
        if a.single_core {
            backends.push(Cpu::new(Some(1))?);
        }
        for b in &backends {
            for &rule in &rules {
                pb.set_message(format!("{}: {} on {count} probes", b.name(), rule.name()));
                let t = Instant::now();
                let batch = b.retrieve_decoded(&net, &probes, rule, &params)?;
                let secs = t.elapsed().as_secs_f64();
                let iters = batch.stats.iter().map(|x| x.iterations as f64).sum::<f64>() / count as f64;
                report.entries.push(ctx.entry_decoded(b.name(), rule, secs, &batch.decoded, iters));
                print_entry(report.entries.last().expect("just pushed"))?;
                cpu_states.entry(rule.name()).or_insert(batch.decoded);
                pb.inc(1);
            }
        }
        if a.baseline_probes > 0 {
            pb.set_message("CPU dense-float baseline");
            cpu_dense_baseline(&ctx, a.baseline_probes, &mut report)?;
            pb.inc(1);
        }
    }
    if let Some(gpu) = &gpu {
        gpu_rows(&ctx, gpu, &rules, &cpu_states, &pb, &mut report)?;
    }
    pb.finish_and_clear();
    if let Some(out) = &a.out {
        crate::io::json::write(out, &report)?;
    }
    Ok(())
}

fn cpu_dense_baseline(ctx: &Ctx, baseline_probes: usize, report: &mut Report) -> Result<()> {
    let g = *ctx.net.geometry();
    if g.neurons() > 16_384 {
        crate::outln!("dense-float CPU baseline skipped: its f32 W would be {} GiB", (g.neurons().pow(2) * 4) >> 30)?;
        return Ok(());
    }
    let k = baseline_probes.min(ctx.count as usize);
    let c = g.clusters();
    let dense = DenseSumOfSum::new(ctx.net, ctx.s.gamma)?;
    let t = Instant::now();
    let (states, _) = dense.retrieve(&ctx.probes[..k * c], ctx.params.max_iter);
    let seconds = t.elapsed().as_secs_f64();
    let reference = Cpu::new(None)?.retrieve(ctx.net, &ctx.probes[..k * c], Rule::SumOfSum, &ctx.params)?;
    let same = reference.states == states;
    let sub = Ctx { count: k as u64, truth: &ctx.truth[..k * c], ..*ctx };
    let mut e =
        sub.entry(format!("dense-f32 sgemm baseline ({k}-probe subset)"), Rule::SumOfSum, seconds, &states, f64::NAN);
    e.bit_exact_vs_cpu = Some(same);
    report.entries.push(e);
    print_entry(report.entries.last().expect("just pushed"))?;
    crate::outln!(
        "dense baseline ran on the first {k} probes only; its states are {} the bit-packed sum-of-sum's",
        if same { "identical to" } else { "DIFFERENT from" }
    )?;
    anyhow::ensure!(same, "the dense-float baseline disagrees with the bit-packed sum-of-sum");
    let base = report.entries.last().expect("baseline").probes_per_second;
    for e in report.entries.iter().filter(|e| e.rule == "joint") {
        crate::outln!(
            "speed-up of joint on {} over the dense baseline (per probe): {:.0}x",
            e.implementation,
            e.probes_per_second / base
        )?;
    }
    Ok(())
}

fn gpu_rows(
    ctx: &Ctx,
    gpu: &Gpu,
    rules: &[Rule],
    cpu: &HashMap<&'static str, Vec<Decoded>>,
    pb: &ProgressBar,
    report: &mut Report,
) -> Result<()> {
    let g = *ctx.net.geometry();
    let (free, total) = gpu.memory()?;
    crate::outln!(
        "GPU: {} ({:.1} GiB free of {:.1} GiB)",
        gpu.name(),
        free as f64 / 1073741824.0,
        total as f64 / 1073741824.0
    )?;
    report.device = Some(gpu.name());
    pb.set_message("GPU: uploading W");
    let t = Instant::now();
    let mut dnet = gpu.upload(ctx.net)?;
    // An experiment's knob: lanes per probe of the one-launch joint path (default: its own pick).
    let lanes = std::env::var("NEUROBITS_GBNN_WARP_LANES").ok().and_then(|l| l.parse().ok()).unwrap_or(0);
    dnet.set_joint_warp(Some(lanes));
    pb.inc(1);
    crate::outln!("uploaded W in {:.3} s; it stays resident", t.elapsed().as_secs_f64())?;
    let name = format!("gpu ({})", gpu.name());
    let mut sos_states = None;
    for &rule in rules {
        pb.set_message(format!("GPU: {} on {} probes (warm-up, then timed)", rule.name(), ctx.count));
        // One untimed warm-up (module JIT, first-touch allocations), then the timed run.
        dnet.retrieve_decoded(&ctx.probes[..g.clusters().min(ctx.probes.len())], rule, &ctx.params)?;
        let out = dnet.retrieve_decoded(ctx.probes, rule, &ctx.params)?;
        let iters = out.stats.iter().map(|x| x.iterations as f64).sum::<f64>() / ctx.count as f64;
        report.entries.push(ctx.entry_gpu(name.clone(), rule, &out, iters, cpu.get(rule.name())));
        print_entry(report.entries.last().expect("just pushed"))?;
        if let Some(false) = report.entries.last().and_then(|e| e.bit_exact_vs_cpu) {
            anyhow::bail!("GPU {} results differ from the CPU's", rule.name());
        }
        if rule == Rule::Joint {
            // Again into the first run's results memory, `repeats` times: a long-lived process's
            // steady state. The median run is reported: one run of Scenario 2's 0.06 ms of
            // kernels varies by about ±8 % on an H100.
            let (mut kernel, mut total) = (Vec::new(), Vec::new());
            let mut warm = dnet.retrieve_decoded_in(ctx.probes, rule, &ctx.params, out.decoded.clone())?;
            for run in 0..ctx.repeats {
                if run > 0 {
                    warm = dnet.retrieve_decoded_in(ctx.probes, rule, &ctx.params, warm.decoded)?;
                }
                if warm.decoded != out.decoded {
                    anyhow::bail!("GPU joint results differ from one run to the next");
                }
                kernel.push(warm.kernel_ms);
                total.push(warm.total_ms);
            }
            report.joint_kernel_ms_runs = kernel.clone();
            (warm.kernel_ms, warm.total_ms) = (super::gpus::median(&mut kernel), super::gpus::median(&mut total));
            let reused = format!("{name}, results memory reused (median of {})", ctx.repeats);
            report.entries.push(ctx.entry_gpu(reused, rule, &warm, iters, cpu.get(rule.name())));
            print_entry(report.entries.last().expect("just pushed"))?;
            crate::outln!(
                "joint: kernels of the {} warm runs {:.4}–{:.4} ms",
                ctx.repeats,
                kernel.first().copied().unwrap_or(f64::NAN),
                kernel.last().copied().unwrap_or(f64::NAN)
            )?;
            let e_max = ctx.probes.chunks(g.clusters()).map(|p| g.erased_mask(p).count_ones()).max().unwrap_or(0);
            if JointWarp::fits(&g, e_max) {
                // The same compact results through the per-update launches, for the ratio.
                pb.set_message(format!("GPU: {} through the per-update launches", rule.name()));
                dnet.set_joint_warp(None);
                let steps = dnet.retrieve_decoded_in(ctx.probes, rule, &ctx.params, warm.decoded.clone());
                dnet.set_joint_warp(Some(lanes));
                let steps = steps?;
                let launches = format!("{name}, per-update launches");
                report.entries.push(ctx.entry_gpu(launches, rule, &steps, iters, cpu.get(rule.name())));
                print_entry(report.entries.last().expect("just pushed"))?;
                crate::outln!(
                    "joint: one launch (a group of lanes per probe) {:.2}x faster in kernels than the per-update launches",
                    steps.kernel_ms / warm.kernel_ms
                )?;
            }
            // The same retrieval returning dense states (K·C·⌈L/64⌉ words through pinned memory).
            pb.set_message(format!("GPU: {} with dense states", rule.name()));
            let dense = dnet.retrieve(ctx.probes, rule, &ctx.params)?;
            let mut e = ctx.entry(format!("{name}, dense states"), rule, dense.total_ms / 1e3, &dense.states, iters);
            e.kernel_seconds = Some(dense.kernel_ms / 1e3);
            e.bit_exact_vs_cpu = Some(ctx.decode(&dense.states) == out.decoded);
            report.entries.push(e);
            print_entry(report.entries.last().expect("just pushed"))?;
        }
        if rule == Rule::SumOfSum {
            sos_states = Some(out.decoded);
        }
        pb.inc(1);
    }
    let cpu_joint =
        report.entries.iter().find(|e| e.rule == "joint" && e.implementation.starts_with("cpu")).map(|e| e.seconds);
    // The compact-results rows: the first call (the first GPU joint row) for the speed-ups, the
    // median warm run for the bound.
    let gpu_joint = report.entries.iter().find(|e| e.rule == "joint" && e.kernel_seconds.is_some()).cloned();
    let gpu_warm = report
        .entries
        .iter()
        .find(|e| e.rule == "joint" && e.implementation.contains("results memory reused"))
        .cloned()
        .or(gpu_joint.clone());
    if let (Some(c), Some(gj)) = (cpu_joint, &gpu_joint) {
        crate::outln!(
            "joint: GPU kernels {:.1}x, GPU end to end {:.1}x faster than all CPU cores",
            c / gj.kernel_seconds.unwrap_or(f64::NAN),
            c / gj.seconds
        )?;
    }
    if ctx.s.id == 2 {
        pb.set_message("GPU: the paper's cuBLAS method");
        let dense = DenseGpu::new(gpu, ctx.net, ctx.s.gamma)?;
        let (states, kernel_ms, total_ms) = dense.retrieve(ctx.probes, ctx.params.max_iter)?;
        let mut e = ctx.entry(
            format!("paper's GPU method (cuBLAS sgemm, {})", gpu.name()),
            Rule::SumOfSum,
            total_ms / 1e3,
            &states,
            f64::NAN,
        );
        e.kernel_seconds = Some(kernel_ms / 1e3);
        e.bit_exact_vs_cpu = cpu.get("sum-of-sum").or(sos_states.as_ref()).map(|c| *c == ctx.decode(&states));
        report.entries.push(e);
        print_entry(report.entries.last().expect("just pushed"))?;
        if let Some(gj) = &gpu_joint {
            crate::outln!(
                "joint GPU kernels vs the paper's cuBLAS sum-of-sum kernels: {:.0}x",
                kernel_ms / 1e3 / gj.kernel_seconds.unwrap_or(f64::NAN)
            )?;
        }
        pb.inc(1);
    }
    pb.set_message("GPU: copy bandwidth");
    if let Some(gj) = &gpu_warm {
        let bw = gpu.copy_bandwidth(1 << 30)?;
        let e = report.erased;
        let min_bytes = ctx.count * ((g.clusters() - e) * e * g.words_per_cluster() * 8) as u64;
        let achieved = min_bytes as f64 / gj.kernel_seconds.unwrap_or(f64::NAN);
        let first = gpu_joint.as_ref().and_then(|e| e.kernel_seconds).map_or(f64::NAN, |k| min_bytes as f64 / k);
        crate::outln!(
            "memory: copy bandwidth {:.0} GB/s (read+write); joint reads at least {:.2} GB of W rows \
             ((C-e)*e*ceil(L/64)*8 B per probe); the median warm run achieves {:.0} GB/s = {:.1}% of the bound \
             (the first call: {:.1}%)",
            bw / 1e9,
            min_bytes as f64 / 1e9,
            achieved / 1e9,
            100.0 * achieved / bw,
            100.0 * first / bw
        )?;
        report.copy_bandwidth_gb_s = Some(bw / 1e9);
        report.joint_min_bytes = Some(min_bytes);
        report.joint_achieved_gb_s = Some(achieved / 1e9);
        report.joint_fraction_of_bound = Some(achieved / bw);
    }
    pb.inc(1);
    Ok(())
}

fn print_entry(e: &Entry) -> Result<()> {
    let kernel = e.kernel_seconds.map_or(String::new(), |k| format!("  kernels {:>9.4} ms", k * 1e3));
    let exact = match e.bit_exact_vs_cpu {
        Some(true) => "  bit-exact vs CPU",
        Some(false) => "  DIFFERS from CPU",
        None => "",
    };
    crate::outln!(
        "{:<44} {:<15} {:>8} probes {:>10.4} s {:>12.0} probes/s  strict {:>6.2}%  per probe {:>9.3} us{kernel}{exact}",
        e.implementation,
        e.rule,
        e.probes,
        e.seconds,
        e.probes_per_second,
        100.0 * e.strict_rate,
        1e6 / e.probes_per_second
    )?;
    Ok(())
}
