//! `gbnn bench-gpus --distributed`: the sharded network as one process per GPU (launched by
//! `mpirun`, `srun`, `torchrun` or by hand, [`crate::dist`]). Every rank generates the same
//! messages and probes (the core's portable streams), stores its shard of W on its GPU
//! (`ShardedNetwork::store_rank`, NCCL communicator from rank 0's unique id sent over the TCP
//! rendezvous) and runs the same joint retrievals; every rank then holds the same results. Rank 0
//! checks that every rank's results hash alike and equal one GPU's (W whole on its own GPU, in the
//! same run), prints and writes the report.

use anyhow::{bail, Result};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{Geometry, Params};
use neurobits_gpu_host::gbnn::{nccl_id, ShardedNetwork};
use neurobits_gpu_host::Gpu;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::time::Instant;

use super::gpus::GpusBenchConfig;
use super::strict_rate_decoded;
use crate::dist::{self, Collectives};

/// The report of a distributed run.
#[derive(Serialize, Debug)]
pub struct RanksReport {
    /// Rank 0's device name.
    pub device: String,
    /// Which launcher started the ranks (`openmpi`, `slurm`, `torchrun`, `pmi`).
    pub launcher: String,
    /// Processes, one GPU and one shard of W each.
    pub ranks: usize,
    /// C, L, stored, probes, erased.
    pub workload: (usize, usize, u64, u64, usize),
    /// W in bytes (all shards).
    pub weight_bytes: u64,
    /// Storing, seconds (the slowest rank).
    pub store_seconds: f64,
    /// Joint retrieval end to end, seconds, the slowest rank (into fresh host memory).
    pub cold_seconds: f64,
    /// The same into the previous run's results memory, the slowest rank.
    pub seconds: f64,
    /// Rank 0's kernels, seconds (the NCCL exchange is outside them).
    pub kernel_seconds: f64,
    /// Probes retrieved exactly.
    pub strict_rate: f64,
    /// SHA-256 of the decoded results (every rank's is compared with rank 0's).
    pub results_sha256: String,
    /// One GPU holding all of W (rank 0's, same run, warm as `seconds`): end to end, seconds;
    /// `None` where W and rank 0's shard do not fit that GPU together.
    pub one_gpu_seconds: Option<f64>,
    /// Results equal to one GPU's (`None`: not run, see `one_gpu_seconds`).
    pub same_as_one_gpu: Option<bool>,
}

fn sha(d: &[Decoded]) -> [u8; 32] {
    let mut h = Sha256::new();
    d.iter().for_each(|x| h.update(x.0.to_le_bytes()));
    h.finalize().into()
}

fn max_f64(group: &mut dist::Group, x: f64) -> Result<f64> {
    // Non-negative doubles order as their bit patterns do.
    Ok(f64::from_bits(group.all_reduce_max(x.to_bits())?))
}

/// Runs `gbnn bench-gpus --distributed`.
pub fn run(a: &GpusBenchConfig) -> Result<()> {
    // Joined first: a rank that fails later ends the others at once (connection lost).
    let mut group = dist::join_from_env()?;
    let world = group.world().clone();
    if world.is_root() {
        if let Some(out) = &a.out {
            crate::io::atomic::check_writable(out)?;
        }
    }
    let g = Geometry::new(a.clusters, a.neurons).map_err(|e| anyhow::anyhow!("{e}"))?;
    let plan =
        ProbePlan::new(g, a.seed, a.stored, a.seed + 1, a.probes, a.erased).map_err(|e| anyhow::anyhow!("{e}"))?;
    // This host's GPU of the local rank (see `dist::rank_target`).
    let ordinal = world.local_rank % Gpu::count().max(1);
    let c = g.clusters();
    crate::io::memory::ensure_fits("the messages", (a.stored as u128 + 2 * a.probes as u128) * c as u128 * 2)?;
    let (msgs, probes, truth) = super::gpus::workload(&g, &plan, a);
    let gpu = Gpu::open(ordinal)?;
    // The NCCL unique id: made by rank 0, sent over the rendezvous (128 bytes).
    let mut id = if world.is_root() && world.size > 1 { nccl_id()?.to_vec() } else { vec![0; 128] };
    group.broadcast(&mut id)?;
    let id: [u8; 128] =
        id.as_slice().try_into().map_err(|_| anyhow::anyhow!("rank 0 sent an NCCL id of {} bytes", id.len()))?;
    // Everyone alive and holding the id before NCCL's collective init (which has no deadline).
    group.barrier()?;
    let timeout = dist::timeout_from_env()?;
    let nccl = |what: &str| dist::Watchdog::arm(format!("rank {}: {what} (NCCL)", world.rank), timeout);
    let t = Instant::now();
    let net = {
        let _w = nccl("storing the shard");
        let net = ShardedNetwork::store_rank(&gpu, g, &msgs, world.rank, world.size, id)?;
        gpu.synchronize()?;
        net
    };
    let store_seconds = max_f64(&mut group, t.elapsed().as_secs_f64())?;
    let params = Params::default();
    let retrieve = |into: Vec<Decoded>| {
        let _w = nccl("joint retrieval");
        net.retrieve_decoded_in(&probes, &params, into)
    };
    {
        let _w = nccl("warm-up retrieval");
        net.retrieve_decoded(&probes[..c * 64.min(a.probes as usize)], &params)?;
    }
    group.barrier()?;
    let cold = retrieve(Vec::new())?;
    group.barrier()?;
    let out = retrieve(cold.decoded.clone())?;
    anyhow::ensure!(out.decoded == cold.decoded, "rank {}: two runs of the same batch differ", world.rank);
    let (cold_seconds, seconds) = (max_f64(&mut group, cold.total_ms / 1e3)?, max_f64(&mut group, out.total_ms / 1e3)?);
    let digest = sha(&out.decoded);
    let Some(digests) = group.gather(&digest)? else { return Ok(()) };
    if let Some(r) = digests.iter().position(|d| d[..] != digest[..]) {
        bail!("rank {r}'s results differ from rank 0's");
    }
    drop(net);
    // One GPU with all of W, for the comparison (rank 0 alone; the others have finished).
    let one = ShardedNetwork::store(std::slice::from_ref(&gpu), g, &msgs)
        .and_then(|n| {
            // Timed as the ranks' `seconds`: warm, into the memory of a first run.
            n.retrieve_decoded(&probes[..c * 64.min(a.probes as usize)], &params)?;
            let first = n.retrieve_decoded(&probes, &params)?;
            n.retrieve_decoded_in(&probes, &params, first.decoded)
        })
        .map_err(|e| crate::noteln!("one GPU with all of W: {e} (comparison left out)"))
        .ok();
    let report = RanksReport {
        device: gpu.name(),
        launcher: world.launcher.into(),
        ranks: world.size,
        workload: (c, a.neurons, a.stored, a.probes, a.erased),
        weight_bytes: g.weight_words() as u64 * 8,
        store_seconds,
        cold_seconds,
        seconds,
        kernel_seconds: out.kernel_ms / 1e3,
        strict_rate: strict_rate_decoded(c, &out.decoded, &truth),
        results_sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
        one_gpu_seconds: one.as_ref().map(|o| o.total_ms / 1e3),
        same_as_one_gpu: one.as_ref().map(|o| o.decoded == out.decoded),
    };
    crate::outln!(
        "{} ranks ({}), W sharded: stored in {:.3} s; joint retrieval {:.4} s end to end ({:.4} s into fresh memory; rank 0's kernels {:.4} s), strict {:.2} %, every rank's results alike{}",
        report.ranks,
        report.launcher,
        report.store_seconds,
        report.seconds,
        report.cold_seconds,
        report.kernel_seconds,
        100.0 * report.strict_rate,
        match (report.same_as_one_gpu, report.one_gpu_seconds) {
            (Some(true), Some(s)) => format!(", = one GPU's ({s:.4} s; {:.2}x)", s / report.seconds),
            (Some(false), _) => ", DIFFERENT from one GPU's".into(),
            _ => String::new(),
        }
    )?;
    if let Some(out) = &a.out {
        crate::io::json::write(out, &report)?;
    }
    if report.same_as_one_gpu == Some(false) {
        bail!("{} ranks gave results different from one GPU's", report.ranks);
    }
    Ok(())
}
