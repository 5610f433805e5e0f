//! Compact joint results of a small network in one launch per chunk: `gbnn_joint_warp`, a group
//! of 8, 16 or 32 lanes per probe running the whole retrieval (first pass, later updates,
//! decoding) with its state in shared memory. The per-update path takes about ten launches per chunk (state set-up, index,
//! each update and its compaction, decoding); for Scenario 2 those launches, not W's bytes, were
//! the time.

use cudarc::driver::CudaSlice;
use neurobits_core::gbnn::kernels::{self as k, JointWarp, Shape};
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Rule, Stats};
use std::mem::MaybeUninit;

use super::DeviceNetwork;
use crate::launch::{launch_shaped, rd, wr, wr_at, KernelTimer};
use crate::timeline::Timeline;
use crate::GpuError;

impl DeviceNetwork<'_> {
    /// Whether compact results of a batch under `rule` (at most `e_max` erased clusters per
    /// probe) take the one-launch path.
    pub(super) fn warp_fits(&self, rule: Rule, e_max: u32) -> bool {
        self.joint_warp.is_some()
            && rule == Rule::Joint
            && self.shard == Shard::all(&self.geom)
            && JointWarp::fits(&self.geom, e_max)
    }

    /// Runs every chunk of `probes` (`cap` probes each) as one `gbnn_joint_warp` launch,
    /// decoding into `out` (`K·C` values) and the statistics into `stats` (`K` slots); returns
    /// the kernel milliseconds.
    pub(super) fn run_joint_warp(
        &self,
        probes: &[u16],
        (cap, e_max): (usize, u32),
        out: &mut CudaSlice<u32>,
        (stats, tl): (&mut [MaybeUninit<Stats>], &mut Timeline),
    ) -> Result<f64, GpuError> {
        let (g, gpu) = (&self.geom, self.gpu());
        let (c, st) = (g.clusters(), &gpu.stream);
        let lanes = match self.joint_warp {
            Some(l @ (8 | 16 | 32)) => l,
            Some(0) => JointWarp::lanes(g, e_max),
            other => return Err(GpuError::Input(format!("{other:?} lanes per probe (8, 16 or 32)"))),
        };
        let kp = probes.len() / c;
        if stats.len() != kp {
            return Err(GpuError::Input(format!("{} statistics slots for {kp} probes", stats.len())));
        }
        let mut ch = self.take_chunk(cap, Rule::Joint)?;
        let mut host = self.take_host(kp)?;
        tl.mark(format_args!("buffers"));
        let mut timer = KernelTimer::default();
        let per_block = JointWarp::WARPS * (32 / lanes);
        let shared = per_block * JointWarp::shared_bytes(g);
        let mut run = || -> Result<(), GpuError> {
            let mut at = 0;
            for (i, part) in probes.chunks(cap * c).enumerate() {
                let n = part.len() / c;
                ch.k = n;
                if at + part.len() > out.len() {
                    return Err(GpuError::Input("decoded results past their buffer".into()));
                }
                st.memcpy_htod(part, &mut ch.probes.slice_mut(0..part.len()))?;
                let a = k::JointWarp {
                    shape: Shape::of(g),
                    k: n as u32,
                    lanes,
                    w: rd(gpu, &self.w),
                    probes: rd(gpu, &ch.probes),
                    out: wr_at(gpu, out, at),
                    iters: wr(gpu, &mut ch.iters),
                    converged: wr(gpu, &mut ch.converged),
                };
                let blocks = (n as u64).div_ceil(per_block as u64);
                let blocks =
                    u32::try_from(blocks).map_err(|_| GpuError::Input(format!("{n} probes exceed one launch")))?;
                let shape = (blocks, JointWarp::WARPS * 32, shared);
                // SAFETY: `ch` holds the chunk's `n` probes and a stat slot per probe; `out` the
                // chunk's `n·C` values from `at` (checked above); W is the whole matrix (one
                // device); each probe uses its `shared_bytes` of the block's `per_block` shares.
                unsafe { launch_shaped(gpu, Some(&mut timer), shape, a)? };
                // Queued behind the launch; the next chunk's upload and launch follow at once.
                host.queue_stats(st, &ch, at / c, kp)?;
                tl.mark(format_args!("warp{i}"));
                at += part.len();
            }
            Ok(())
        };
        let run = run();
        // Wait for the statistics' copies before reading, reusing or freeing `host`.
        let synced = st.synchronize().map_err(GpuError::from);
        tl.mark(format_args!("synced"));
        run.and(synced)?;
        self.keep_chunk(ch, Rule::Joint);
        let written = host.stats_to(kp, 0, stats);
        self.keep_host(host);
        written?;
        let kernel_ms = timer.total_ms()?;
        tl.kernels(&mut timer);
        Ok(kernel_ms)
    }
}
