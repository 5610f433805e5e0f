//! The GBNN on the GPU: a network resident on the device ([`DeviceNetwork`]) answering batches
//! of probes, and the dense cuBLAS baseline ([`DenseGpu`]).

mod dense;

use cudarc::driver::CudaSlice;
use neurobits_core::gbnn::kernels::{self as k, Shape};
use neurobits_core::gbnn::{Geometry, Network, Params, Rule, Schedule, Stats, Update};
use neurobits_core::Word;
use std::time::Instant;

pub use dense::DenseGpu;

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// A network whose weight matrix is resident on a GPU.
pub struct DeviceNetwork<'g> {
    gpu: &'g Gpu,
    geom: Geometry,
    stored: u64,
    pub(crate) w: CudaSlice<u64>,
}

/// Result of a GPU batch retrieval.
pub struct GpuBatch {
    /// `K` rows of [`Geometry::row_words`] words, identical to the CPU's.
    pub states: Vec<Word>,
    /// Per-probe iterations and convergence, identical to the CPU's.
    pub stats: Vec<Stats>,
    /// GPU time inside the retrieval kernels.
    pub kernel_ms: f64,
    /// Wall time including probe upload and state download.
    pub total_ms: f64,
}

fn check_probes(g: &Geometry, probes: &[u16]) -> Result<usize, GpuError> {
    let c = g.clusters();
    if !probes.len().is_multiple_of(c) {
        return Err(GpuError::Input(format!("{} symbols is not a whole number of {c}-symbol probes", probes.len())));
    }
    for p in probes.chunks(c) {
        g.check_symbols(p, true).map_err(|e| GpuError::Input(e.to_string()))?;
    }
    Ok(probes.len() / c)
}

impl Gpu {
    /// Copies `net`'s weight matrix to the device.
    pub fn upload(&self, net: &Network) -> Result<DeviceNetwork<'_>, GpuError> {
        self.ensure_fits(net.weights().len() as u64 * 8)?;
        let w = self.stream.clone_htod(net.weights())?;
        Ok(DeviceNetwork { gpu: self, geom: *net.geometry(), stored: net.stored(), w })
    }

    /// Stores `msgs` (`M·C` symbols) into a new network on the device.
    pub fn store(&self, geom: Geometry, msgs: &[u16]) -> Result<DeviceNetwork<'_>, GpuError> {
        let c = geom.clusters();
        for m in msgs.chunks(c) {
            geom.check_symbols(m, false).map_err(|e| GpuError::Input(e.to_string()))?;
        }
        let m = (msgs.len() / c) as u32;
        self.ensure_fits(geom.weight_words() as u64 * 8 + msgs.len() as u64 * 2)?;
        let mut w = self.stream.alloc_zeros::<u64>(geom.weight_words())?;
        let d_msgs = self.stream.clone_htod(msgs)?;
        let args = k::Store { shape: Shape::of(&geom), m, msgs: rd(self, &d_msgs), w: wr(self, &mut w) };
        // SAFETY: `w` holds W and `d_msgs` the M·C checked symbols the M·C threads read.
        unsafe { launch(self, &mut KernelTimer::default(), m as u64 * c as u64, args)? };
        Ok(DeviceNetwork { gpu: self, geom, stored: m as u64, w })
    }
}

impl DeviceNetwork<'_> {
    /// The network's shape.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Copies the weight matrix back into a host [`Network`].
    pub fn download(&self) -> Result<Network, GpuError> {
        let w = self.gpu.stream.clone_dtoh(&self.w)?;
        Network::from_parts(self.geom, self.stored, w).map_err(|e| GpuError::Input(e.to_string()))
    }

    /// Retrieves `K` probes (`K·C` symbols): each iterates until it converges; per update only
    /// the still-changing probes get threads (the active list is compacted on the device).
    pub fn retrieve(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuBatch, GpuError> {
        let start = Instant::now();
        let (g, gpu) = (&self.geom, self.gpu);
        let k = check_probes(g, probes)?;
        let (shape, rw) = (Shape::of(g), g.row_words() as u64);
        let words = k as u64 * rw;
        gpu.ensure_fits(2 * words * 8 + k as u64 * (4 * 5 + 8 * g.clusters() as u64) + probes.len() as u64 * 2)?;
        let st = &gpu.stream;
        let d_probes = st.clone_htod(probes)?;
        // SAFETY (uninitialised buffers): gbnn_init writes every word of both state buffers and
        // every per-probe field before any kernel reads them.
        let (mut buf0, mut buf1) = unsafe { (st.alloc::<u64>(words as usize)?, st.alloc::<u64>(words as usize)?) };
        let (mut list_a, mut list_b) = unsafe { (st.alloc::<u32>(k)?, st.alloc::<u32>(k)?) };
        let (mut changed, mut iters, mut converged) =
            unsafe { (st.alloc::<u32>(k)?, st.alloc::<u32>(k)?, st.alloc::<u32>(k)?) };
        let mut count = st.alloc_zeros::<u32>(1)?;
        // Occupancy of the erased clusters, for the joint iterations (L <= 4096); the plain
        // word-per-thread update serves larger clusters.
        let use_occ = rule == Rule::Joint && g.words_per_cluster() <= 64;
        // Two, for the occupancy of the current and of the previous state (zero before update 1,
        // like the erased clusters of the initial state).
        let occ_len = if use_occ { k * g.clusters() } else { 1 };
        let mut occ = [st.alloc_zeros::<u64>(occ_len)?, st.alloc_zeros::<u64>(occ_len)?];
        let kj = if rule == Rule::Joint { k } else { 1 };
        let (mut rows, mut known) = (st.alloc_zeros::<u32>(kj * g.clusters())?, st.alloc_zeros::<u32>(kj)?);
        let (mut erased_list, mut erased_mask) = (st.alloc_zeros::<u8>(kj * g.clusters())?, st.alloc_zeros::<u64>(kj)?);
        let mut timer = KernelTimer::default();
        let k32 = k as u32;
        let init = k::Init {
            shape,
            k: k32,
            rule: rule as u32,
            probes: rd(gpu, &d_probes),
            buf0: wr(gpu, &mut buf0),
            buf1: wr(gpu, &mut buf1),
            list: wr(gpu, &mut list_a),
            changed: wr(gpu, &mut changed),
            iters: wr(gpu, &mut iters),
            converged: wr(gpu, &mut converged),
        };
        // SAFETY, here and for every launch below: the buffers were allocated above with the
        // sizes the argument structs document (K probes, K·rw state words, K·C index entries).
        unsafe { launch(gpu, &mut timer, words, init)? };
        if rule == Rule::Joint {
            let index = k::ProbeIndex {
                shape,
                k: k32,
                probes: rd(gpu, &d_probes),
                rows: wr(gpu, &mut rows),
                known: wr(gpu, &mut known),
                erased_list: wr(gpu, &mut erased_list),
                erased_mask: wr(gpu, &mut erased_mask),
            };
            unsafe { launch(gpu, &mut timer, k as u64, index)? };
        }
        let (rows, known) = (rd(gpu, &rows), rd(gpu, &known));
        let (erased_list, erased_mask) = (rd(gpu, &erased_list), rd(gpu, &erased_mask));
        let e_max = probes.chunks(g.clusters()).map(|p| g.erased_mask(p).count_ones()).max().unwrap_or(0);
        // The core's schedule drives the batch: it ends when no probe changed or at the limit.
        let mut sched = Schedule::new(rule, g, params);
        let mut n = k32;
        while let Some(u) = sched.next_update() {
            let t = sched.t();
            let (cur, next) = if t.is_multiple_of(2) { (&buf0, &mut buf1) } else { (&buf1, &mut buf0) };
            let (cur, next, list) = (rd(gpu, cur), wr(gpu, next), rd(gpu, &list_a));
            let (w, changed_p) = (rd(gpu, &self.w), wr(gpu, &mut changed));
            match u {
                Update::SumOfSum => {
                    let a =
                        k::StepSos { shape, gamma: params.gamma, n_active: n, w, cur, next, list, changed: changed_p };
                    unsafe { launch(gpu, &mut timer, n as u64 * g.clusters() as u64, a)? }
                }
                // Update 0 runs on every probe, in order: the list is still the identity.
                Update::JointFirst => {
                    let a = k::JointFirst {
                        shape,
                        e_max,
                        k: k32,
                        w,
                        rows,
                        known,
                        erased_list,
                        erased_mask,
                        cur,
                        next,
                        changed: changed_p,
                    };
                    unsafe { launch(gpu, &mut timer, k as u64 * e_max as u64 * g.words_per_cluster() as u64, a)? }
                }
                Update::JointIter if use_occ => {
                    let [o0, o1] = &mut occ;
                    let (now, prev) = if t.is_multiple_of(2) { (o0, o1) } else { (o1, o0) };
                    let threads = n as u64 * e_max as u64;
                    let a = k::Occupancy {
                        shape,
                        e_max,
                        n_active: n,
                        rows,
                        known,
                        erased_list,
                        erased_mask,
                        cur,
                        list,
                        occ: wr(gpu, now),
                    };
                    unsafe { launch(gpu, &mut timer, threads, a)? };
                    let (occ, occ_prev) = (rd(gpu, now), rd(gpu, prev));
                    let a = k::StepJoint {
                        shape,
                        e_max,
                        n_active: n,
                        w,
                        rows,
                        known,
                        erased_list,
                        erased_mask,
                        occ,
                        occ_prev,
                        cur,
                        next,
                        list,
                        changed: changed_p,
                    };
                    unsafe { launch(gpu, &mut timer, threads, a)? }
                }
                _ => {
                    let probes = rd(gpu, &d_probes);
                    let a = k::StepWord {
                        shape,
                        update: u as u32,
                        n_active: n,
                        w,
                        probes,
                        cur,
                        next,
                        list,
                        changed: changed_p,
                    };
                    unsafe { launch(gpu, &mut timer, n as u64 * rw, a)? }
                }
            }
            st.memset_zeros(&mut count)?;
            let a = k::Compact {
                n_active: n,
                list_in: rd(gpu, &list_a),
                changed: wr(gpu, &mut changed),
                iters: wr(gpu, &mut iters),
                converged: wr(gpu, &mut converged),
                list_out: wr(gpu, &mut list_b),
                count: wr(gpu, &mut count),
            };
            unsafe { launch(gpu, &mut timer, n as u64, a)? };
            n = st.clone_dtoh(&count)?[0];
            std::mem::swap(&mut list_a, &mut list_b);
            sched.record(n > 0);
        }
        let t = sched.t();
        // Step t-1 wrote buffer t % 2; a probe that converged earlier holds equal buffers.
        let last = if t.is_multiple_of(2) { &buf0 } else { &buf1 };
        let states = gpu.download(last)?;
        let (iters, converged) = (st.clone_dtoh(&iters)?, st.clone_dtoh(&converged)?);
        let kernel_ms = timer.total_ms()?;
        let stats = iters.iter().zip(&converged).map(|(&i, &c)| Stats { iterations: i, converged: c != 0 }).collect();
        Ok(GpuBatch { states, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }
}
