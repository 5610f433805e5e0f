//! One chunk of probes on one device: its buffers, and the launches of one update of the core's
//! schedule. The single-device driver ([`super::retrieve`]) and the sharded one
//! ([`super::sharded`]) run the same launches; the sharded one adds the exchange between them.

use cudarc::driver::{CudaSlice, CudaStream};
use neurobits_core::gbnn::kernels::{self as k, Shape};
use neurobits_core::gbnn::rules::occupancy_words;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Geometry, Mode, Params, Rule, Stats, Update};
use std::sync::Arc;

use super::DeviceNetwork;
use crate::launch::{launch, launch_shaped, rd, wr, wr_at, KernelTimer};
use crate::GpuError;

/// Device buffers for up to `cap` probes (reused by every chunk of a batch).
pub(super) struct Chunk {
    /// Probes in the current chunk.
    pub k: usize,
    /// The rule of the current chunk.
    pub rule: Rule,
    /// Most erased clusters of any probe of the batch.
    pub e_max: u32,
    /// Most erased clusters of any probe that one shard owns (`e_max` on one device).
    pub eo: u32,
    pub probes: CudaSlice<u16>,
    /// The two state buffers: update `t` reads `bufs[t % 2]` and writes the other.
    pub bufs: [CudaSlice<u64>; 2],
    /// `lists[0]`: the probes still iterating; `lists[1]`: the compaction's output.
    pub lists: [CudaSlice<u32>; 2],
    pub changed: CudaSlice<u32>,
    pub iters: CudaSlice<u32>,
    pub converged: CudaSlice<u32>,
    pub count: CudaSlice<u32>,
    /// The device probe check's two words ([`DeviceNetwork::check_preloaded`]).
    pub found: CudaSlice<u32>,
    /// Occupancy of the states in `bufs` (same parity), for the joint iterations.
    pub occ: [CudaSlice<u64>; 2],
    /// A sparse joint run (compact results on one device): the state buffers hold only the
    /// words their occupancy marks; nothing zeroes them, the first pass writes only its nonzero
    /// words and decoding goes through the occupancy.
    pub sparse: bool,
    /// A second probe buffer for a pipelined batch ([`super::pipeline`]): the next chunk's
    /// probes are uploaded into it while this chunk runs; made on first use.
    pub spare: Option<CudaSlice<u16>>,
    /// Set when `spare` holds the next chunk's probes: the event after their upload. `begin`
    /// then swaps the buffers and has the stream wait for it instead of uploading.
    pub ready: Option<cudarc::driver::CudaEvent>,
    /// Symbols of the first chunk's probes already queued into `probes` before the batch's probe
    /// check (`super::pipeline`; 0: none): the next `begin` of exactly that many skips their
    /// upload. Set only by the caller that queued them, on buffers it holds, right before that
    /// `begin`.
    pub preloaded: usize,
    rows: CudaSlice<u32>,
    known: CudaSlice<u32>,
    erased_list: CudaSlice<u8>,
    pub erased_mask: CudaSlice<u64>,
}

impl Chunk {
    /// Appends the iteration counts and convergence flags of the chunk's `k` probes to `stats`
    /// (waits for the kernels on `st` that wrote them).
    pub(super) fn download_stats(&self, st: &Arc<CudaStream>, stats: &mut Vec<Stats>) -> Result<(), GpuError> {
        let (mut iters, mut conv) = (vec![0u32; self.k], vec![0u32; self.k]);
        st.memcpy_dtoh(&self.iters.slice(0..self.k), &mut iters)?;
        st.memcpy_dtoh(&self.converged.slice(0..self.k), &mut conv)?;
        stats.extend(iters.iter().zip(&conv).map(|(&i, &c)| Stats { iterations: i, converged: c != 0 }));
        Ok(())
    }
}

/// Device bytes per probe of a chunk under `rule`.
pub(super) fn bytes_per_probe(g: &Geometry, rule: Rule) -> u64 {
    let c = g.clusters() as u64;
    let joint = if rule == Rule::Joint { c * 4 + 4 + c + 8 } else { 0 };
    let occ = if rule == Rule::Joint { 2 * c * occupancy_words(g) as u64 * 8 } else { 0 };
    2 * g.row_words() as u64 * 8 + 2 * c + 5 * 4 + joint + occ
}

impl DeviceNetwork<'_> {
    /// Chunk buffers for up to `cap` probes under `rule`: the ones kept from the last batch when
    /// they are large enough (allocating GiBs of device memory takes tens of milliseconds).
    pub(super) fn take_chunk(&self, cap: usize, rule: Rule) -> Result<Chunk, GpuError> {
        let kept = self.kept.lock().map_err(|_| GpuError::Cuda("chunk cache poisoned".into()))?.take();
        if let Some((r, ch)) = kept {
            if r == rule && ch.lists[0].len() >= cap {
                return Ok(ch);
            }
            // Too small or for another rule: freed before the new allocation.
            drop(ch);
        }
        self.alloc_chunk(cap, rule)
    }

    /// Keeps `ch` for the next batch (see [`DeviceNetwork::release_buffers`]).
    pub(super) fn keep_chunk(&self, ch: Chunk, rule: Rule) {
        if let Ok(mut k) = self.kept.lock() {
            *k = Some((rule, ch));
        }
    }

    /// Frees the buffers kept between batches: the chunk buffers (up to 8 GiB or half the free
    /// memory at the time of the largest batch), the last batch's decoded results on the device
    /// (4 bytes per cluster) and its page-locked statistics (8 bytes per probe).
    pub fn release_buffers(&self) {
        if let Ok(mut k) = self.kept.lock() {
            *k = None;
        }
        self.release_more();
    }

    /// Buffers for chunks of up to `cap` probes.
    pub(super) fn alloc_chunk(&self, cap: usize, rule: Rule) -> Result<Chunk, GpuError> {
        let (g, st) = (&self.geom, &self.gpu().stream);
        self.gpu().ensure_fits(cap as u64 * bytes_per_probe(g, rule))?;
        let words = cap * g.row_words();
        // The probe index and the occupancy buffers serve the joint rule only.
        let (cj, occ_len) = if rule == Rule::Joint { (cap, cap * g.clusters() * occupancy_words(g)) } else { (1, 1) };
        // SAFETY (uninitialised buffers): `begin` sets every per-probe field of the chunk's probes
        // and every state word a kernel reads before it writes it: gbnn_init writes both buffers
        // whole, or (lean) buf0 is zeroed and the first joint update writes every erased word of
        // buf1, or (sparse) every reader goes through the occupancy (zeroed here and by `begin`)
        // to words an update wrote; nothing reads known words (decoding takes them from the probe).
        unsafe {
            Ok(Chunk {
                k: 0,
                rule,
                e_max: 0,
                eo: 0,
                probes: st.alloc::<u16>(cap * g.clusters())?,
                bufs: [st.alloc::<u64>(words)?, st.alloc::<u64>(words)?],
                lists: [st.alloc::<u32>(cap)?, st.alloc::<u32>(cap)?],
                changed: st.alloc::<u32>(cap)?,
                iters: st.alloc::<u32>(cap)?,
                converged: st.alloc::<u32>(cap)?,
                count: st.alloc_zeros::<u32>(1)?,
                found: st.alloc_zeros::<u32>(2)?,
                // Zero: the occupancy of the state before update 1 (erased clusters start off).
                occ: [st.alloc_zeros::<u64>(occ_len)?, st.alloc_zeros::<u64>(occ_len)?],
                sparse: false,
                spare: None,
                ready: None,
                preloaded: 0,
                rows: st.alloc::<u32>(cj * g.clusters())?,
                known: st.alloc::<u32>(cj)?,
                erased_list: st.alloc::<u8>(cj * g.clusters())?,
                erased_mask: st.alloc::<u64>(cj)?,
            })
        }
    }

    /// Uploads a chunk's probes (checked; `e_max`: at least their most erased clusters; or takes
    /// them from `ch.spare` when `ch.ready` says they are there) and runs
    /// the initial launches: states in `mode` (`lean`, for compact results of a rule that keeps
    /// known clusters: see `Init::lean`), lists, and for the joint rule the per-probe index.
    pub(super) fn begin(
        &self,
        ch: &mut Chunk,
        probes: &[u16],
        (rule, mode): (Rule, Mode),
        (e_max, eo): (u32, u32),
        lean: bool,
        timer: &mut KernelTimer,
    ) -> Result<(), GpuError> {
        let (g, gpu) = (&self.geom, self.gpu());
        let st = &gpu.stream;
        ch.k = probes.len() / g.clusters();
        ch.rule = rule;
        (ch.e_max, ch.eo) = (e_max, eo);
        let preloaded = std::mem::take(&mut ch.preloaded);
        match (ch.ready.take(), ch.spare.as_mut()) {
            // Uploaded on the copy stream while the last chunk ran (`super::pipeline`).
            (Some(ready), Some(spare)) => {
                std::mem::swap(&mut ch.probes, spare);
                st.wait(&ready)?;
            }
            // Queued on this stream while the host checked the batch (`super::pipeline`).
            _ if preloaded > 0 && preloaded == probes.len() => {}
            _ => st.memcpy_htod(probes, &mut ch.probes.slice_mut(0..probes.len()))?,
        }
        if rule == Rule::Joint {
            let [o0, o1] = &mut ch.occ;
            st.memset_zeros(o0)?;
            st.memset_zeros(o1)?;
        }
        let (shape, k32) = (Shape::of(g), ch.k as u32);
        let lean = lean && rule.keeps_known();
        // Sparse on one device only: the sharded exchange packs whole clusters of `next`.
        ch.sparse = lean && rule == Rule::Joint && self.shard == Shard::all(g);
        if lean && !ch.sparse {
            // A memset at full bandwidth; a thread per word is instruction-bound (5 ms for 10^6
            // probes of 1024 words on an H200).
            // Timed as part of gbnn_init.
            let buf0 = &mut ch.bufs[0];
            timer.time(gpu, neurobits_core::kernel::Kernel::GbnnInit, || {
                Ok(st.memset_zeros(&mut buf0.slice_mut(0..ch.k * g.row_words()))?)
            })?;
        }
        let [b0, b1] = &mut ch.bufs;
        let init = k::Init {
            shape,
            k: k32,
            rule: rule as u32,
            mode: mode as u32,
            lean: lean as u32,
            probes: rd(gpu, &ch.probes),
            buf0: wr(gpu, b0),
            buf1: wr(gpu, b1),
            list: wr(gpu, &mut ch.lists[0]),
            changed: wr(gpu, &mut ch.changed),
            iters: wr(gpu, &mut ch.iters),
            converged: wr(gpu, &mut ch.converged),
        };
        // SAFETY, here and for every launch of this file: the buffers were allocated by
        // `alloc_chunk` for at least `k` probes with the sizes the argument structs document.
        let threads = if lean { ch.k as u64 } else { ch.k as u64 * g.row_words() as u64 };
        unsafe { launch(gpu, timer, threads, init)? };
        if rule == Rule::Joint {
            let index = k::ProbeIndex {
                shape,
                k: k32,
                probes: rd(gpu, &ch.probes),
                rows: wr(gpu, &mut ch.rows),
                known: wr(gpu, &mut ch.known),
                erased_list: wr(gpu, &mut ch.erased_list),
                erased_mask: wr(gpu, &mut ch.erased_mask),
            };
            unsafe { launch(gpu, timer, ch.k as u64, index)? };
        }
        Ok(())
    }

    /// Launches update `u` (step `t`) for the `n` active probes of `lists[0]`; change flags go
    /// to `changed`. On a shard only its own erased clusters are written.
    pub(super) fn update(
        &self,
        ch: &mut Chunk,
        u: Update,
        t: u32,
        n: u32,
        params: &Params,
        timer: &mut KernelTimer,
    ) -> Result<(), GpuError> {
        let (g, gpu, shard) = (&self.geom, self.gpu(), self.shard);
        let shape = Shape::of(g);
        let [b0, b1] = &mut ch.bufs;
        let (cur, next) = if t.is_multiple_of(2) { (&*b0, b1) } else { (&*b1, b0) };
        let (cur, next, list) = (rd(gpu, cur), wr(gpu, next), rd(gpu, &ch.lists[0]));
        let (w, changed) = (rd(gpu, &self.w), wr(gpu, &mut ch.changed));
        let (rows, known) = (rd(gpu, &ch.rows), rd(gpu, &ch.known));
        let (erased_list, erased_mask) = (rd(gpu, &ch.erased_list), rd(gpu, &ch.erased_mask));
        let eo = ch.eo;
        match u {
            Update::SumOfSum | Update::SumOfMaxWta => {
                let update = u as u32;
                let a = k::StepSos { shape, update, gamma: params.gamma, n_active: n, w, cur, next, list, changed };
                unsafe { launch(gpu, timer, n as u64 * g.clusters() as u64, a) }
            }
            // A block per active probe: the global maximum is a block reduction (see
            // `gpu-device/src/gbnn/global.rs`).
            Update::GlobalSumOfSum | Update::GlobalSumOfMax => {
                let update = u as u32;
                let a = k::StepGlobal { shape, update, gamma: params.gamma, n_active: n, w, cur, next, list, changed };
                let threads = k::StepGlobal::threads(g);
                let shape = (n, threads, k::StepGlobal::shared_bytes(threads));
                unsafe { launch_shaped(gpu, Some(timer), shape, a) }
            }
            // Update 0 runs on every probe, in order: the list is still the identity. It ORs the
            // occupancy of the state it writes into occ[1] (zeroed by `begin`).
            Update::JointFirst => {
                let a = k::JointFirst {
                    shape,
                    shard,
                    e_max: eo,
                    k: ch.k as u32,
                    w,
                    rows,
                    known,
                    erased_list,
                    erased_mask,
                    sparse: ch.sparse as u32,
                    next,
                    occ_next: wr(gpu, &mut ch.occ[1]),
                    changed,
                };
                unsafe { launch(gpu, timer, ch.k as u64 * eo as u64 * g.words_per_cluster() as u64, a) }
            }
            // Reads the occupancy of the current state (written by the update before) and puts
            // the next state's in place of the previous one's.
            Update::JointIter => {
                let [o0, o1] = &mut ch.occ;
                let (now, prev) = if t.is_multiple_of(2) { (&*o0, o1) } else { (&*o1, o0) };
                let a = k::StepJoint {
                    shape,
                    shard,
                    e_max: eo,
                    n_active: n,
                    w,
                    rows,
                    known,
                    erased_list,
                    erased_mask,
                    occ: rd(gpu, now),
                    occ_prev: wr(gpu, prev),
                    cur,
                    next,
                    list,
                    changed,
                };
                unsafe { launch(gpu, timer, n as u64 * eo as u64, a) }
            }
            _ => {
                if shard.c1 - shard.c0 != g.clusters() as u32 {
                    return Err(GpuError::Input("a sharded network runs the joint rule only".into()));
                }
                let probes = rd(gpu, &ch.probes);
                let a = k::StepWord { shape, update: u as u32, n_active: n, w, probes, cur, next, list, changed };
                unsafe { launch(gpu, timer, n as u64 * g.row_words() as u64, a) }
            }
        }
    }

    /// After an update: counts it, marks the unchanged probes converged and compacts the others
    /// into `lists[1]` (their number into `count`).
    pub(super) fn compact(&self, ch: &mut Chunk, n: u32, timer: &mut KernelTimer) -> Result<(), GpuError> {
        let gpu = self.gpu();
        gpu.stream.memset_zeros(&mut ch.count)?;
        let [l0, l1] = &mut ch.lists;
        let a = k::Compact {
            n_active: n,
            list_in: rd(gpu, l0),
            changed: wr(gpu, &mut ch.changed),
            iters: wr(gpu, &mut ch.iters),
            converged: wr(gpu, &mut ch.converged),
            list_out: wr(gpu, l1),
            count: wr(gpu, &mut ch.count),
        };
        unsafe { launch(gpu, timer, n as u64, a) }
    }

    /// Compact results of the chunk's final states (`bufs[t % 2]` after `t` updates) into
    /// `out[at..at + k·C]`.
    pub(super) fn decode(
        &self,
        ch: &Chunk,
        t: u32,
        out: &mut CudaSlice<u32>,
        at: usize,
        timer: &mut KernelTimer,
    ) -> Result<(), GpuError> {
        let (g, gpu) = (&self.geom, self.gpu());
        let n = ch.k * g.clusters();
        if at + n > out.len() {
            return Err(GpuError::Input("decoded results past their buffer".into()));
        }
        let (states, probes) = (rd(gpu, &ch.bufs[t as usize % 2]), rd(gpu, &ch.probes));
        // Sparse: the occupancy of the same parity as the final states.
        let occ = rd(gpu, &ch.occ[t as usize % 2]);
        let a = k::Decode {
            shape: Shape::of(g),
            k: ch.k as u32,
            rule: ch.rule as u32,
            probes,
            states,
            sparse: ch.sparse as u32,
            occ,
            out: wr_at(gpu, out, at),
        };
        // SAFETY: `out` holds the chunk's k·C values from `at` (checked above).
        unsafe { launch(gpu, timer, n as u64, a) }
    }
}
