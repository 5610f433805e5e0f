//! One network on several GPUs of a host, W replicated: each GPU holds all of W (stored once on
//! GPU 0 and broadcast over NCCL, or uploaded to each) and retrieves its share of every batch,
//! driven by its own host thread. Probes are independent, so nothing is exchanged while they
//! iterate; the results are bit-identical to one GPU. The placement for a W that fits one GPU
//! ([`super::ShardedNetwork`] is the one for a W that does not).

use cudarc::nccl::{result as nccl, Comm};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::{Geometry, Mode, Network, Params, Rule, Stats};
use std::mem::MaybeUninit;
use std::time::Instant;

use super::retrieve::{GpuDecoded, GpuRun};
use super::sharded::{nccl_available, nccl_err};
use super::slots::{as_slots, check_slots, fill, probe_count};
use super::DeviceNetwork;
use crate::launch::{ms_since, profile_note};
use crate::{Gpu, GpuError};

/// A network with W resident on every one of several GPUs.
pub struct ReplicatedNetwork<'g> {
    nets: Vec<DeviceNetwork<'g>>,
}

impl<'g> ReplicatedNetwork<'g> {
    /// Stores `msgs` on GPU 0 and broadcasts W to the others (NCCL).
    pub fn store(gpus: &'g [Gpu], geom: Geometry, msgs: &[u16]) -> Result<Self, GpuError> {
        let first = gpus.first().ok_or_else(|| GpuError::Input("no GPU given".into()))?.store(geom, msgs)?;
        let mut nets = vec![first];
        for g in &gpus[1..] {
            g.ensure_fits(geom.weight_words() as u64 * 8)?;
            let w = g.stream.alloc_zeros::<u64>(geom.weight_words())?;
            nets.push(g.resident(geom, nets[0].stored, nets[0].shard, w));
        }
        if nets.len() > 1 {
            if !nccl_available() {
                return Err(GpuError::Input("NCCL (libnccl.so) not found on the library path".into()));
            }
            super::sharded::keep_nvls_off();
            let comms = Comm::from_devices(nets.iter().map(|n| n.gpu().stream.clone()).collect()).map_err(nccl_err)?;
            nccl::group_start().map_err(nccl_err)?;
            for (comm, net) in comms.iter().zip(&mut nets) {
                comm.broadcast_in_place(&mut net.w, 0).map_err(nccl_err)?;
            }
            nccl::group_end().map_err(nccl_err)?;
            for n in &nets {
                n.gpu().stream.synchronize()?;
            }
        }
        Ok(ReplicatedNetwork { nets })
    }

    /// Uploads `net`'s W to every GPU.
    pub fn upload(gpus: &'g [Gpu], net: &Network) -> Result<Self, GpuError> {
        if gpus.is_empty() {
            return Err(GpuError::Input("no GPU given".into()));
        }
        Ok(ReplicatedNetwork { nets: gpus.iter().map(|g| g.upload(net)).collect::<Result<_, _>>()? })
    }

    /// GPUs holding W.
    pub fn devices(&self) -> usize {
        self.nets.len()
    }

    /// Each GPU's copy.
    pub fn replicas(&self) -> &[DeviceNetwork<'g>] {
        &self.nets
    }

    /// [`DeviceNetwork::set_pipelined`] on every GPU's copy.
    pub fn set_pipelined(&mut self, on: bool) {
        for n in &mut self.nets {
            n.set_pipelined(on);
        }
    }

    /// Retrieves `K` probes with compact results: GPU `r` takes the `r`-th of equal runs of
    /// probes, all GPUs at once; `kernel_ms` is the slowest GPU's kernel time.
    pub fn retrieve_decoded(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuDecoded, GpuError> {
        self.retrieve_decoded_in(probes, rule, params, Vec::new())
    }

    /// [`ReplicatedNetwork::retrieve_decoded`] into `buffer`'s memory (see
    /// [`DeviceNetwork::retrieve_decoded_in`]).
    pub fn retrieve_decoded_in(
        &self,
        probes: &[u16],
        rule: Rule,
        params: &Params,
        buffer: Vec<Decoded>,
    ) -> Result<GpuDecoded, GpuError> {
        let start = Instant::now();
        let k = probe_count(&self.nets[0].geom, probes)?;
        let run = fill(buffer, k * self.nets[0].geom.clusters(), |dst| {
            fill(Vec::new(), k, |stats| self.run_parts(probes, (rule, params), dst, stats))
        });
        let total_ms = ms_since(start);
        crate::timeline::flush();
        let (decoded, (stats, kernel_ms)) = run?;
        Ok(GpuDecoded { decoded, stats, kernel_ms, total_ms })
    }

    /// [`ReplicatedNetwork::retrieve_decoded`] into `out` (`K·C` values) that the caller keeps
    /// (see [`DeviceNetwork::retrieve_decoded_into`]): a [`crate::Pinned`] buffer is
    /// page-locked for every GPU, so each GPU's part comes down at its link's speed.
    /// On an error `out` may hold part of this batch's results beside earlier values: read it
    /// only after `Ok`. `stats`: the last run's statistics given back (their memory is reused).
    pub fn retrieve_decoded_into(
        &self,
        probes: &[u16],
        rule: Rule,
        params: &Params,
        out: &mut [Decoded],
        stats: Vec<Stats>,
    ) -> Result<GpuRun, GpuError> {
        let start = Instant::now();
        let k = probe_count(&self.nets[0].geom, probes)?;
        let run = fill(stats, k, |stats| self.run_parts(probes, (rule, params), as_slots(out), stats));
        let total_ms = ms_since(start);
        crate::timeline::flush();
        let (stats, kernel_ms) = run?;
        Ok(GpuRun { stats, kernel_ms, total_ms })
    }

    /// GPU `r` retrieves the `r`-th of equal runs of `probes` into its part of `dst` and of
    /// `stats` (one slot per probe: each GPU's thread converts its own statistics straight into
    /// the caller's memory, with no copy after the join), all GPUs at once; returns the slowest
    /// GPU's kernel milliseconds.
    fn run_parts(
        &self,
        probes: &[u16],
        (rule, params): (Rule, &Params),
        dst: &mut [MaybeUninit<Decoded>],
        stats: &mut [MaybeUninit<Stats>],
    ) -> Result<f64, GpuError> {
        let start = Instant::now();
        let c = self.nets[0].geom.clusters();
        let k = probe_count(&self.nets[0].geom, probes)?;
        check_slots(k, c, dst.len(), stats.len())?;
        let per = k.div_ceil(self.nets.len()).max(1);
        let parts: Vec<Result<f64, GpuError>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .nets
                .iter()
                .zip(probes.chunks(per * c))
                .zip(dst.chunks_mut(per * c))
                .zip(stats.chunks_mut(per))
                .enumerate()
                .map(|(r, (((net, pr), dst), st))| {
                    s.spawn(move || {
                        let t = Instant::now();
                        let part = net.retrieve_decoded_to(pr, (rule, Mode::Erasure), params, dst, st);
                        profile_note(|| {
                            let (a, b) = ((t - start).as_secs_f64() * 1e3, start.elapsed().as_secs_f64() * 1e3);
                            format!("GPU {r}: its part from {a:.2} to {b:.2} ms")
                        });
                        part
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(GpuError::Input("GPU thread panicked".into()))))
                .collect()
        });
        profile_note(|| format!("every GPU's part joined at {:.2} ms", ms_since(start)));
        crate::timeline::note(|| {
            let (a, j) = (crate::timeline::clock_ms(start), ms_since(start));
            format!("{} GPUs' parts: began at {a:.3} ms on the process clock, all joined {j:.3} ms later", parts.len())
        });
        // Every GPU's run, or the first error (the caller then keeps no results).
        let mut kernel_ms = 0f64;
        for part in parts {
            kernel_ms = kernel_ms.max(part?);
        }
        Ok(kernel_ms)
    }
}
