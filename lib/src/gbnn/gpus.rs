//! `gbnn bench-gpus`: one network stored and retrieved over several GPUs of this host, W
//! sharded by clusters and the states exchanged with NCCL (`neurobits_gpu_host::gbnn::ShardedNetwork`),
//! timed for each GPU count in one run, with every count's results compared with the first's.

use anyhow::{bail, Result};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{Params, Rule};
use neurobits_gpu_host::gbnn::{GpuDecoded, ReplicatedNetwork, ShardedNetwork};
use neurobits_gpu_host::{Gpu, Pinned};
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use super::strict_rate_decoded;
use crate::progress::stages;

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `gbnn bench-gpus`: the defaults are Scenario 3's workload (C=32, L=2048, 10^6 stored,
/// 10^6 probes, 16 erased), stored on the GPUs.
pub struct GpusBenchConfig {
    /// Clusters C.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 32))]
    pub clusters: usize,
    /// Neurons per cluster L.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 2048))]
    pub neurons: usize,
    /// Messages stored (generated here, stored by the GPUs).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..)))]
    pub stored: u64,
    /// Probes (distinct stored messages).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..)))]
    pub probes: u64,
    /// Erased clusters per probe.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 16))]
    pub erased: usize,
    /// GPU counts to time, e.g. `1,2` (default: 1 and all of them).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ','))]
    pub gpus: Vec<usize>,
    /// Message and probe seed.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// Also write the report as JSON to this file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: Option<PathBuf>,
    /// One process per GPU, W sharded over the ranks of the job that started them (mpirun, srun,
    /// torchrun, or RANK and WORLD_SIZE by hand; `--gpus` does not apply): rank 0 compares the
    /// results with one GPU's and writes the report.
    #[cfg_attr(feature = "cli", arg(long))]
    pub distributed: bool,
}

/// One GPU count's measurements.
#[derive(Serialize, Debug)]
pub struct GpusEntry {
    /// GPUs used.
    pub gpus: usize,
    /// `sharded` (W split by clusters, states exchanged over NCCL), `replicated` (W on
    /// every GPU, probes split) or, on one GPU, `single` (the single-device driver) and
    /// `single-serial` (the same with its transfers before and after the kernels).
    pub placement: &'static str,
    /// Where the caller's probes and results live: `pageable` (ordinary `Vec`s) or `pinned`
    /// (page-locked buffers made once and reused, `neurobits_gpu_host::Pinned`).
    pub host_memory: &'static str,
    /// Storing every message on every GPU (each into its own columns), seconds.
    pub store_seconds: f64,
    /// Joint retrieval end to end (probes up, compact results down), seconds, the first call
    /// after the warm-up: into fresh host memory when pageable (first touch of the results'
    /// pages included), into the kept buffer when pinned.
    pub cold_seconds: f64,
    /// The same, into the previous run's results memory (a long-lived process), seconds: the
    /// median of five runs.
    pub seconds: f64,
    /// Kernels, seconds (median of the five runs): rank 0's when sharded (the NCCL exchange is
    /// outside them), the slowest GPU's when replicated.
    pub kernel_seconds: f64,
    /// Probes retrieved exactly.
    pub strict_rate: f64,
    /// Results equal to the first GPU count's.
    pub same_as_first: bool,
}

/// A network on its GPUs, either way.
enum Placed<'g> {
    Sharded(ShardedNetwork<'g>),
    Replicated(ReplicatedNetwork<'g>),
}

impl Placed<'_> {
    fn retrieve(&self, probes: &[u16], params: &Params, buffer: Vec<Decoded>) -> Result<GpuDecoded> {
        Ok(match self {
            Placed::Sharded(n) => n.retrieve_decoded_in(probes, params, buffer)?,
            Placed::Replicated(n) => n.retrieve_decoded_in(probes, Rule::Joint, params, buffer)?,
        })
    }

    /// GPUs in use: a sharded network uses at most one per cluster.
    fn devices(&self) -> usize {
        match self {
            Placed::Sharded(n) => n.devices(),
            Placed::Replicated(n) => n.devices(),
        }
    }
}

/// `bench-gpus` report.
#[derive(Serialize, Debug)]
pub struct GpusReport {
    /// Device name.
    pub device: String,
    /// C, L, stored, probes, erased.
    pub workload: (usize, usize, u64, u64, usize),
    /// W in bytes (all shards).
    pub weight_bytes: u64,
    /// Per GPU count.
    pub entries: Vec<GpusEntry>,
}

/// Timed runs per row after the cold one (the median is reported).
const TIMED_RUNS: usize = 5;

/// The median of `x` (the upper one of an even count), sorting it; also `gbnn bench`'s.
pub(super) fn median(x: &mut [f64]) -> f64 {
    x.sort_by(f64::total_cmp);
    x.get(x.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs `gbnn bench-gpus`.
pub fn run(a: &GpusBenchConfig) -> Result<()> {
    if a.distributed {
        return super::ranks::run(a);
    }
    if let Some(out) = &a.out {
        crate::io::atomic::check_writable(out)?;
    }
    let g = neurobits_core::gbnn::Geometry::new(a.clusters, a.neurons).map_err(|e| anyhow::anyhow!("{e}"))?;
    if a.gpus.contains(&0) {
        bail!("--gpus: a GPU count is at least 1");
    }
    let plan =
        ProbePlan::new(g, a.seed, a.stored, a.seed + 1, a.probes, a.erased).map_err(|e| anyhow::anyhow!("{e}"))?;
    let available = Gpu::count();
    if available == 0 {
        bail!("no CUDA GPU here");
    }
    let mut counts = if a.gpus.is_empty() { vec![1, available] } else { a.gpus.clone() };
    counts.dedup();
    if let Some(&n) = counts.iter().find(|&&n| n == 0 || n > available) {
        bail!("{n} GPUs asked for, {available} here");
    }
    let c = g.clusters();
    // Messages, probes and their truth on the host.
    crate::io::memory::ensure_fits("the messages", (a.stored as u128 + 2 * a.probes as u128) * c as u128 * 2)?;
    let pb = stages(1 + counts.len() as u64);
    pb.set_message("generating messages and probes");
    let (msgs, probes, truth) = workload(&g, &plan, a);
    pb.inc(1);
    let gpus: Vec<Gpu> = (0..*counts.iter().max().unwrap_or(&1)).map(Gpu::open).collect::<Result<_, _>>()?;
    let weight_bytes = g.weight_words() as u64 * 8;
    crate::outln!(
        "C={c}, L={}, {} stored, {} probes, {} erased; W = {:.1} GiB; {} x {}",
        a.neurons,
        a.stored,
        a.probes,
        a.erased,
        weight_bytes as f64 / (1u64 << 30) as f64,
        gpus.len(),
        gpus[0].name()
    )?;
    let params = Params::default();
    let mut report = GpusReport {
        device: gpus[0].name(),
        workload: (c, a.neurons, a.stored, a.probes, a.erased),
        weight_bytes,
        entries: Vec::new(),
    };
    let mut first: Option<Vec<Decoded>> = None;
    // The pinned rows' buffers: made once, outside every timing, as a long-lived caller keeps them.
    let mut pinned: Option<(Pinned<u16>, Pinned<Decoded>)> = None;
    let rows =
        [("sharded", "pageable"), ("replicated", "pageable"), ("replicated", "pinned"), ("single-serial", "pageable")];
    for &n in &counts {
        for (placement, memory) in rows {
            if placement != "sharded" && weight_bytes > gpus[0].memory()?.1 / 2 {
                continue; // a W that crowds one GPU can be neither replicated nor held whole
            }
            if placement == "single-serial" && n != 1 {
                continue;
            }
            // On one GPU the replicated placement is the single-device driver (`DeviceNetwork`),
            // the call a user with one GPU makes: the reference for the speed-ups below;
            // `single-serial` is the same with the transfers before and after the kernels
            // instead of beside them (`set_pipelined(false)`), to show what the pipeline gains.
            let placement = if n == 1 && placement == "replicated" { "single" } else { placement };
            pb.set_message(format!("{n} GPU(s), W {placement}, {memory} memory: storing"));
            let t = Instant::now();
            let stored = match placement {
                "sharded" => ShardedNetwork::store(&gpus[..n], g, &msgs).map(Placed::Sharded),
                _ => ReplicatedNetwork::store(&gpus[..n], g, &msgs).map(|mut r| {
                    r.set_pipelined(placement != "single-serial");
                    Placed::Replicated(r)
                }),
            };
            let net = match stored {
                Ok(net) => net,
                Err(e) => {
                    crate::outln!("{n} GPU(s), W {placement}: {e}")?;
                    continue;
                }
            };
            let store_seconds = t.elapsed().as_secs_f64();
            pb.set_message(format!(
                "{n} GPU(s), W {placement}, {memory} memory: joint retrieval (warm-up, then timed)"
            ));
            net.retrieve(&probes[..c * 64.min(a.probes as usize)], &params, Vec::new())?;
            let timed = match (&net, memory) {
                (Placed::Replicated(r), "pinned") => {
                    if pinned.is_none() {
                        pinned =
                            Some((Pinned::from_slice(&gpus[0], &probes)?, Pinned::zeroed(&gpus[0], probes.len())?));
                    }
                    let (p, out) = pinned.as_mut().expect("made just above");
                    time_pinned(r, p, out, &params)?
                }
                _ => time_pageable(&net, &probes, &params)?,
            };
            let strict = strict_rate_decoded(c, &timed.decoded, &truth);
            let same = match &first {
                None => {
                    first = Some(timed.decoded);
                    true
                }
                Some(f) => *f == timed.decoded,
            };
            let e = GpusEntry {
                gpus: net.devices(),
                placement,
                host_memory: memory,
                store_seconds,
                cold_seconds: timed.cold_ms / 1e3,
                seconds: timed.total_ms / 1e3,
                kernel_seconds: timed.kernel_ms / 1e3,
                strict_rate: strict,
                same_as_first: same,
            };
            crate::outln!(
                "{n} GPU(s){}, W {placement:<10} {memory:<8}: stored in {:.3} s; joint retrieval {:.4} s end to end ({:.4} s the first call; kernels {:.4} s), strict {:.2} %{}",
                if e.gpus < n { format!(" (of which {} hold a shard: one per cluster at most)", e.gpus) } else { String::new() },
                e.store_seconds,
                e.seconds,
                e.cold_seconds,
                e.kernel_seconds,
                100.0 * e.strict_rate,
                if same { ", results = the first row's" } else { ", results DIFFER from the first row's" }
            )?;
            report.entries.push(e);
            if !same {
                bail!("{n} GPUs ({placement}, {memory}) gave different results");
            }
        }
        pb.inc(1);
    }
    // Against the fastest one-GPU row, end to end and in kernels each.
    let ones = report.entries.iter().filter(|e| e.gpus == 1);
    let one = ones.clone().min_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let one_k = ones.min_by(|a, b| a.kernel_seconds.total_cmp(&b.kernel_seconds));
    if let (Some(one), Some(one_k)) = (one, one_k) {
        for e in report.entries.iter().filter(|e| e.gpus > 1) {
            crate::outln!(
                "{} GPUs, W {} {} vs 1 GPU: {:.2}x end to end (against {} {}), {:.2}x in kernels (against {} {})",
                e.gpus,
                e.placement,
                e.host_memory,
                one.seconds / e.seconds,
                one.placement,
                one.host_memory,
                one_k.kernel_seconds / e.kernel_seconds,
                one_k.placement,
                one_k.host_memory
            )?;
        }
    }
    pb.finish_and_clear();
    if let Some(out) = &a.out {
        crate::io::json::write(out, &report)?;
    }
    Ok(())
}

/// One row's times: the first call after the warm-up, the medians of [`TIMED_RUNS`] more, and
/// the results.
struct Timed {
    cold_ms: f64,
    total_ms: f64,
    kernel_ms: f64,
    decoded: Vec<Decoded>,
}

/// Times `net` on `probes` with results into ordinary memory: first into fresh memory, then
/// [`TIMED_RUNS`] times into the first run's (a long-lived process's steady state).
fn time_pageable(net: &Placed, probes: &[u16], params: &Params) -> Result<Timed> {
    let cold = net.retrieve(probes, params, Vec::new())?;
    let (mut totals, mut kernels) = (Vec::with_capacity(TIMED_RUNS), Vec::with_capacity(TIMED_RUNS));
    let mut buffer = cold.decoded.clone();
    for _ in 0..TIMED_RUNS {
        let r = net.retrieve(probes, params, buffer)?;
        anyhow::ensure!(r.decoded == cold.decoded, "two runs of the same batch differ");
        totals.push(r.total_ms);
        kernels.push(r.kernel_ms);
        buffer = r.decoded;
    }
    Ok(Timed {
        cold_ms: cold.total_ms,
        total_ms: median(&mut totals),
        kernel_ms: median(&mut kernels),
        decoded: buffer,
    })
}

/// [`time_pageable`] with the probes and results in page-locked buffers the caller keeps.
fn time_pinned(
    net: &ReplicatedNetwork,
    probes: &Pinned<u16>,
    out: &mut Pinned<Decoded>,
    params: &Params,
) -> Result<Timed> {
    let cold = net.retrieve_decoded_into(probes, Rule::Joint, params, out, Vec::new())?;
    let first = out.to_vec();
    let (mut totals, mut kernels) = (Vec::with_capacity(TIMED_RUNS), Vec::with_capacity(TIMED_RUNS));
    let mut stats = cold.stats; // its memory reused, as a long-lived caller would
    for _ in 0..TIMED_RUNS {
        out.fill(Decoded::default());
        let r = net.retrieve_decoded_into(probes, Rule::Joint, params, out, stats)?;
        anyhow::ensure!(**out == first[..], "two runs of the same batch differ");
        totals.push(r.total_ms);
        kernels.push(r.kernel_ms);
        stats = r.stats;
    }
    Ok(Timed { cold_ms: cold.total_ms, total_ms: median(&mut totals), kernel_ms: median(&mut kernels), decoded: first })
}

/// The bench's stored messages, probes and their truths (`c` clusters each), made in parallel from
/// the configuration's seed and `plan`: the same in one process and in every rank.
pub(super) fn workload(
    g: &neurobits_core::gbnn::Geometry,
    plan: &ProbePlan,
    a: &GpusBenchConfig,
) -> (Vec<u16>, Vec<u16>, Vec<u16>) {
    let c = g.clusters();
    let mut msgs = vec![0u16; a.stored as usize * c];
    msgs.par_chunks_mut(c).enumerate().for_each(|(k, m)| message(g, a.seed, k as u64, m));
    let (mut probes, mut truth) = (vec![0u16; a.probes as usize * c], vec![0u16; a.probes as usize * c]);
    probes.par_chunks_mut(c).zip(truth.par_chunks_mut(c)).enumerate().for_each(|(i, (p, t))| {
        plan.probe(i as u64, p);
        plan.truth(i as u64, t);
    });
    (msgs, probes, truth)
}
