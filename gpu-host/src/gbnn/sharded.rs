//! One network over several GPUs of a host: W split by clusters ([`Shard::of`]; each GPU holds
//! the links of its own neurons), every GPU holding every probe's state. Per joint update each
//! GPU computes its own erased clusters for every active probe, then the GPUs exchange those
//! clusters as sparse records (3 words for a cluster with at most two nonzero words) with an NCCL
//! all-gather, and rank 0's compacted list of active probes is broadcast so
//! that all GPUs keep the same order. Bit-identical to one GPU and to the CPU.
//!
//! The same network spans processes (and hosts): [`ShardedNetwork::store_rank`] makes this
//! process rank `r` of `R`, one GPU and one shard each, with a communicator built from ranks
//! (`ncclCommInitRank`, the unique id made by rank 0 with [`nccl_id`] and passed on by the caller:
//! `neurobits::dist` sends it over its TCP rendezvous). The schedule is the same; what one process
//! read on the host from every GPU is then reduced by NCCL: the chunk size (minimum over ranks),
//! the overflow count (maximum), and rank 0's count of active probes goes with its list.

use cudarc::driver::CudaSlice;
use cudarc::nccl::{result as nccl, Comm, Id, ReduceOp};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::kernels::{self as k, Shape};
use neurobits_core::gbnn::shard::{Shard, RECORD_WORDS};
use neurobits_core::gbnn::{Geometry, Mode, Network, Params, Rule, Schedule, Stats};
use std::time::Instant;

use super::chunk::{bytes_per_probe, Chunk};
use super::retrieve::{GpuBatch, GpuDecoded};
use super::scan::{scan_probes, Scan};
use super::slots::{download_decoded, fill, probe_count};
use super::DeviceNetwork;
use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// Whether the NCCL library can be loaded (`libnccl.so` on the library path).
pub fn nccl_available() -> bool {
    std::panic::catch_unwind(|| unsafe { cudarc::nccl::sys::is_culib_present() }).unwrap_or(false)
}

/// NVLink multicast (NVLS) can take shared GPUs out of service: never let NCCL use it.
pub(super) fn keep_nvls_off() {
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
}

pub(super) fn nccl_err(e: nccl::NcclError) -> GpuError {
    GpuError::Cuda(format!("NCCL: {e:?}"))
}

/// A new NCCL unique id (128 bytes), made by rank 0 and given to every rank's
/// [`ShardedNetwork::store_rank`].
pub fn nccl_id() -> Result<[u8; 128], GpuError> {
    if !nccl_available() {
        return Err(GpuError::Input("NCCL (libnccl.so) not found on the library path".into()));
    }
    let id = Id::new().map_err(nccl_err)?;
    Ok(id.internal().map(|c| c as u8))
}

/// A network sharded over GPUs, one [`Shard`] per GPU: all of them in this process, or one per
/// process (`span`).
pub struct ShardedNetwork<'g> {
    nets: Vec<DeviceNetwork<'g>>,
    comms: Vec<Comm>,
    /// Over processes: this process's rank and the ranks in all.
    span: Option<(usize, usize)>,
}

impl<'g> ShardedNetwork<'g> {
    /// Stores `msgs` into a network of shape `geom` spread over `gpus` (every GPU stores every
    /// message into its own columns). W is split by whole clusters, so at most `C` GPUs are used
    /// (the first `C` of `gpus`); [`ShardedNetwork::devices`] says how many.
    pub fn store(gpus: &'g [Gpu], geom: Geometry, msgs: &[u16]) -> Result<Self, GpuError> {
        let gpus = Self::usable(gpus, &geom)?;
        let nets = (0..gpus.len())
            .map(|r| gpus[r].store_shard(geom, Shard::of(&geom, r, gpus.len()), msgs))
            .collect::<Result<Vec<_>, _>>()?;
        Self::connect(nets)
    }

    /// Uploads `net`'s W split over `gpus` (at most `C` of them, as [`ShardedNetwork::store`]).
    pub fn upload(gpus: &'g [Gpu], net: &Network) -> Result<Self, GpuError> {
        let gpus = Self::usable(gpus, net.geometry())?;
        let nets = (0..gpus.len())
            .map(|r| gpus[r].upload_shard(net, Shard::of(net.geometry(), r, gpus.len())))
            .collect::<Result<Vec<_>, _>>()?;
        Self::connect(nets)
    }

    /// Rank `rank` of `ranks` processes (one GPU each, `gpu` here) storing `msgs` into its own
    /// shard of a network of shape `geom`; `id` is rank 0's [`nccl_id`], the same at every rank.
    /// Every rank must call this (NCCL builds the communicator collectively), and later calls the
    /// same retrievals with the same probes; every rank then holds the same results.
    pub fn store_rank(
        gpu: &'g Gpu,
        geom: Geometry,
        msgs: &[u16],
        rank: usize,
        ranks: usize,
        id: [u8; 128],
    ) -> Result<Self, GpuError> {
        Self::check_ranks(&geom, rank, ranks)?;
        let net = gpu.store_shard(geom, Shard::of(&geom, rank, ranks), msgs)?;
        Self::connect_rank(net, rank, ranks, id)
    }

    /// [`ShardedNetwork::store_rank`] from a stored network `net` (this rank uploads its shard).
    pub fn upload_rank(
        gpu: &'g Gpu,
        net: &Network,
        rank: usize,
        ranks: usize,
        id: [u8; 128],
    ) -> Result<Self, GpuError> {
        Self::check_ranks(net.geometry(), rank, ranks)?;
        let dn = gpu.upload_shard(net, Shard::of(net.geometry(), rank, ranks))?;
        Self::connect_rank(dn, rank, ranks, id)
    }

    /// Shards are whole clusters: every process must hold one, so at most `C` processes.
    fn check_ranks(g: &Geometry, rank: usize, ranks: usize) -> Result<(), GpuError> {
        if rank >= ranks || ranks > g.clusters() {
            return Err(GpuError::Input(format!(
                "rank {rank} of {ranks}: W is sharded by whole clusters, so at most {} processes serve this network",
                g.clusters()
            )));
        }
        Ok(())
    }

    fn connect_rank(net: DeviceNetwork<'g>, rank: usize, ranks: usize, id: [u8; 128]) -> Result<Self, GpuError> {
        let comms = if ranks > 1 {
            if !nccl_available() {
                return Err(GpuError::Input("NCCL (libnccl.so) not found on the library path".into()));
            }
            keep_nvls_off();
            let id = Id::uninit(id.map(|b| b as core::ffi::c_char));
            // ncclCommInitRank takes the calling thread's current device: make it this GPU's
            // (cudarc's `from_rank` does not; another GPU opened later in this thread may be
            // current).
            let stream = net.gpu().stream.clone();
            stream.context().bind_to_thread()?;
            vec![Comm::from_rank(stream, rank, ranks, id).map_err(nccl_err)?]
        } else {
            Vec::new()
        };
        Ok(ShardedNetwork { nets: vec![net], comms, span: Some((rank, ranks)) })
    }

    /// Shards in all: the GPUs of this process, or the ranks of the job.
    pub fn ranks(&self) -> usize {
        self.span.map_or(self.nets.len(), |(_, r)| r)
    }

    /// Shards are whole clusters: a GPU beyond the `C`-th would hold nothing, so more GPUs than
    /// clusters use the first `C` (splitting a cluster's rows would need a second exchange per
    /// update for the per-cluster winner, which costs more than the idle GPUs would bring).
    fn usable<'a>(gpus: &'a [Gpu], g: &Geometry) -> Result<&'a [Gpu], GpuError> {
        if gpus.is_empty() {
            return Err(GpuError::Input("no GPU to shard the network over".into()));
        }
        Ok(&gpus[..gpus.len().min(g.clusters())])
    }

    fn connect(nets: Vec<DeviceNetwork<'g>>) -> Result<Self, GpuError> {
        let comms = if nets.len() > 1 {
            if !nccl_available() {
                return Err(GpuError::Input("NCCL (libnccl.so) not found on the library path".into()));
            }
            keep_nvls_off();
            Comm::from_devices(nets.iter().map(|n| n.gpu().stream.clone()).collect()).map_err(nccl_err)?
        } else {
            Vec::new()
        };
        Ok(ShardedNetwork { nets, comms, span: None })
    }

    /// GPUs of this process the network is spread over (1 for a rank of several processes).
    pub fn devices(&self) -> usize {
        self.nets.len()
    }

    /// Each device's share of W.
    pub fn shards(&self) -> &[DeviceNetwork<'g>] {
        &self.nets
    }

    /// Caps the probes per chunk on every device (see [`DeviceNetwork::set_chunk_probes`]).
    pub fn set_chunk_probes(&mut self, probes: usize) {
        for n in &mut self.nets {
            n.set_chunk_probes(probes);
        }
    }

    /// Joint retrieval of `K` probes with compact results (as
    /// [`DeviceNetwork::retrieve_decoded`]); `kernel_ms` is rank 0's kernel time.
    pub fn retrieve_decoded(&self, probes: &[u16], params: &Params) -> Result<GpuDecoded, GpuError> {
        self.retrieve_decoded_in(probes, params, Vec::new())
    }

    /// [`ShardedNetwork::retrieve_decoded`] into `buffer`'s memory (see
    /// [`DeviceNetwork::retrieve_decoded_in`]).
    pub fn retrieve_decoded_in(
        &self,
        probes: &[u16],
        params: &Params,
        buffer: Vec<Decoded>,
    ) -> Result<GpuDecoded, GpuError> {
        let start = Instant::now();
        let c = self.nets[0].geom.clusters();
        let k = probe_count(&self.nets[0].geom, probes)?;
        let gpu = self.nets[0].gpu();
        gpu.ensure_fits(k as u64 * c as u64 * 4)?;
        let mut out = gpu.stream.alloc_zeros::<u32>((k * c).max(1))?;
        let mut at = 0;
        let (stats, kernel_ms) = self.run(probes, params, true, |net, ch, t, timer| {
            net.decode(ch, t, &mut out, at, timer)?;
            at += ch.k * c;
            Ok(())
        })?;
        let (decoded, ()) = fill(buffer, k * c, |dst| download_decoded(gpu, &out, dst))?;
        Ok(GpuDecoded { decoded, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }

    /// Joint retrieval with dense final states (from rank 0, which holds them all).
    pub fn retrieve(&self, probes: &[u16], params: &Params) -> Result<GpuBatch, GpuError> {
        let start = Instant::now();
        let rw = self.nets[0].geom.row_words();
        let mut states = Vec::new();
        let (stats, kernel_ms) = self.run(probes, params, false, |net, ch, t, _| {
            net.gpu().download_prefix(&ch.bufs[t as usize % 2], ch.k * rw, &mut states)
        })?;
        Ok(GpuBatch { states, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }

    /// The chunked joint schedule over every device; `finish` gets rank 0's final chunk states.
    fn run(
        &self,
        probes: &[u16],
        params: &Params,
        lean: bool,
        mut finish: impl FnMut(&DeviceNetwork<'g>, &mut Chunk, u32, &mut KernelTimer) -> Result<(), GpuError>,
    ) -> Result<(Vec<Stats>, f64), GpuError> {
        let (g, ranks) = (self.nets[0].geom, self.ranks());
        let (c, wpc) = (g.clusters(), g.words_per_cluster());
        // Owned erased clusters of any probe on any shard: the exchange's slots per probe.
        let shards: Vec<Shard> = (0..ranks).map(|r| Shard::of(&g, r, ranks)).collect();
        let Scan { k, e_max, eo_max } = scan_probes(&g, probes, &shards, (Rule::Joint, Mode::Erasure))?;
        let eo = eo_max.max(1) as usize;
        let per_probe = bytes_per_probe(&g, Rule::Joint) + (1 + ranks as u64) * (eo * (wpc + RECORD_WORDS) * 8) as u64;
        let cap = self.nets.iter().map(|n| n.chunk_cap(k, per_probe)).collect::<Result<Vec<_>, _>>()?;
        let cap = self.min_over_ranks(cap.into_iter().min().unwrap_or(1) as u64)? as usize;
        let mut chs = self.nets.iter().map(|n| n.take_chunk(cap, Rule::Joint)).collect::<Result<Vec<_>, _>>()?;
        let mut xs = Vec::new();
        if ranks > 1 {
            for n in &self.nets {
                let st = &n.gpu().stream;
                let (slots, rec) = (cap * eo, cap * eo * RECORD_WORDS);
                xs.push(Exchange {
                    send: st.alloc_zeros::<u64>(rec)?,
                    recv: st.alloc_zeros::<u64>(ranks * rec)?,
                    ovf: st.alloc_zeros::<u64>(slots * wpc)?,
                    recv_ovf: st.alloc_zeros::<u64>(ranks * slots * wpc)?,
                    ovf_count: st.alloc_zeros::<u32>(1)?,
                });
            }
        }
        let mut timers: Vec<KernelTimer> = (0..ranks).map(|_| KernelTimer::default()).collect();
        let mut stats = Vec::with_capacity(k);
        for part in probes.chunks(cap * c) {
            for ((net, ch), t) in self.nets.iter().zip(&mut chs).zip(&mut timers) {
                net.begin(ch, part, (Rule::Joint, Mode::Erasure), (e_max, eo as u32), lean, t)?;
            }
            let mut sched = Schedule::new(Rule::Joint, &g, params);
            let mut n = chs[0].k as u32;
            while let Some(u) = sched.next_update() {
                let t = sched.t();
                for ((net, ch), tm) in self.nets.iter().zip(&mut chs).zip(&mut timers) {
                    net.update(ch, u, t, n, params, tm)?;
                }
                if ranks > 1 {
                    self.exchange(&mut chs, &mut xs, &mut timers, t, n, eo)?;
                }
                for ((net, ch), tm) in self.nets.iter().zip(&mut chs).zip(&mut timers) {
                    net.compact(ch, n, tm)?;
                }
                if ranks > 1 {
                    // Rank 0's order for everyone (the compaction's atomics order each GPU's list
                    // differently; the exchange indexes slots by position in the list).
                    nccl::group_start().map_err(nccl_err)?;
                    for (comm, ch) in self.comms.iter().zip(&mut chs) {
                        comm.broadcast_in_place(&mut ch.lists[1].slice_mut(0..n as usize), 0).map_err(nccl_err)?;
                        if self.span.is_some() {
                            // Every process reads its own count below: rank 0's, as for the list.
                            comm.broadcast_in_place(&mut ch.count, 0).map_err(nccl_err)?;
                        }
                    }
                    nccl::group_end().map_err(nccl_err)?;
                }
                n = self.nets[0].gpu().stream.clone_dtoh(&chs[0].count)?[0];
                for ch in &mut chs {
                    ch.lists.swap(0, 1);
                }
                sched.record(n > 0);
            }
            let t = sched.t();
            finish(&self.nets[0], &mut chs[0], t, &mut timers[0])?;
            let (ch, st) = (&chs[0], &self.nets[0].gpu().stream);
            ch.download_stats(st, &mut stats)?;
        }
        for n in &self.nets[1..] {
            n.gpu().stream.synchronize()?;
        }
        for (n, ch) in self.nets.iter().zip(chs) {
            n.keep_chunk(ch, Rule::Joint);
        }
        Ok((stats, timers[0].total_ms()?))
    }

    /// After update `t`: each rank packs its erased clusters of `next` as sparse records, the
    /// ranks all-gather the records (and the dense overflow slots, when any rank used some), and
    /// each rank unpacks every rank's words (flagging changes).
    fn exchange(
        &self,
        chs: &mut [Chunk],
        xs: &mut [Exchange],
        timers: &mut [KernelTimer],
        t: u32,
        n: u32,
        eo: usize,
    ) -> Result<(), GpuError> {
        let g = self.nets[0].geom;
        let (shape, ranks, wpc) = (Shape::of(&g), self.ranks(), g.words_per_cluster());
        let slots = n as u64 * eo as u64;
        let next_of = |t: u32| (t as usize + 1) % 2;
        for (((net, ch), x), tm) in self.nets.iter().zip(chs.iter()).zip(xs.iter_mut()).zip(timers.iter_mut()) {
            let gpu = net.gpu();
            gpu.stream.memset_zeros(&mut x.ovf_count)?;
            let a = k::Pack {
                shape,
                shard: net.shard,
                eo_max: eo as u32,
                n_active: n,
                erased_mask: rd(gpu, &ch.erased_mask),
                list: rd(gpu, &ch.lists[0]),
                next: rd(gpu, &ch.bufs[next_of(t)]),
                send: wr(gpu, &mut x.send),
                ovf: wr(gpu, &mut x.ovf),
                ovf_count: wr(gpu, &mut x.ovf_count),
            };
            // SAFETY: `send` holds cap·eo records and `ovf` cap·eo dense slots (n ≤ cap); the
            // chunk buffers as allocated.
            unsafe { launch(gpu, tm, slots, a)? };
        }
        let mut ovf_max = 0;
        if self.span.is_some() {
            // Other processes' counts: the maximum through NCCL, then read here.
            for (comm, x) in self.comms.iter().zip(xs.iter_mut()) {
                comm.all_reduce_in_place(&mut x.ovf_count, &ReduceOp::Max).map_err(nccl_err)?;
            }
        }
        for (net, x) in self.nets.iter().zip(xs.iter()) {
            ovf_max = ovf_max.max(net.gpu().stream.clone_dtoh(&x.ovf_count)?[0] as usize);
        }
        let (records, dense) = (slots as usize * RECORD_WORDS, ovf_max * wpc);
        nccl::group_start().map_err(nccl_err)?;
        for (comm, x) in self.comms.iter().zip(xs.iter_mut()) {
            comm.all_gather(&x.send.slice(0..records), &mut x.recv.slice_mut(0..ranks * records)).map_err(nccl_err)?;
            if dense > 0 {
                comm.all_gather(&x.ovf.slice(0..dense), &mut x.recv_ovf.slice_mut(0..ranks * dense))
                    .map_err(nccl_err)?;
            }
        }
        nccl::group_end().map_err(nccl_err)?;
        for (((net, ch), x), tm) in self.nets.iter().zip(chs.iter_mut()).zip(xs.iter()).zip(timers.iter_mut()) {
            let gpu = net.gpu();
            let [b0, b1] = &mut ch.bufs;
            let (cur, next) = if t.is_multiple_of(2) { (&*b0, b1) } else { (&*b1, b0) };
            let occ_next = wr(gpu, &mut ch.occ[next_of(t)]);
            let a = k::Unpack {
                shape,
                ranks: ranks as u32,
                eo_max: eo as u32,
                n_active: n,
                ovf_max: ovf_max as u32,
                erased_mask: rd(gpu, &ch.erased_mask),
                list: rd(gpu, &ch.lists[0]),
                recv: rd(gpu, &x.recv),
                recv_ovf: rd(gpu, &x.recv_ovf),
                cur: rd(gpu, cur),
                next: wr(gpu, next),
                occ_next,
                changed: wr(gpu, &mut ch.changed),
            };
            // SAFETY: `recv` holds ranks blocks of n·eo records and `recv_ovf` ranks blocks of
            // ovf_max dense slots (gathered just above).
            unsafe { launch(gpu, tm, slots, a)? };
        }
        Ok(())
    }
}

impl ShardedNetwork<'_> {
    /// The smallest of every rank's `x` (this process's alone when it holds every shard).
    fn min_over_ranks(&self, x: u64) -> Result<u64, GpuError> {
        let (Some(_), Some(comm)) = (self.span, self.comms.first()) else { return Ok(x) };
        let st = &self.nets[0].gpu().stream;
        let mut d = st.clone_htod(&[x])?;
        comm.all_reduce_in_place(&mut d, &ReduceOp::Min).map_err(nccl_err)?;
        Ok(st.clone_dtoh(&d)?[0])
    }
}

/// One device's exchange buffers.
struct Exchange {
    send: CudaSlice<u64>,
    recv: CudaSlice<u64>,
    ovf: CudaSlice<u64>,
    recv_ovf: CudaSlice<u64>,
    ovf_count: CudaSlice<u32>,
}
