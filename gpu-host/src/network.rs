use cudarc::driver::CudaSlice;
use neurobits_core::{Geometry, Network, Params, Rule, Stats, Word};
use std::time::Instant;

use crate::launch::{self, KernelTimer, Shape};
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
    pub stats: Vec<Stats>,
    /// GPU time inside the retrieval kernels.
    pub kernel_ms: f64,
    /// Wall time including probe upload and state download.
    pub total_ms: f64,
}

pub(crate) fn shape(g: &Geometry) -> Shape {
    Shape { c: g.clusters() as u32, l: g.neurons_per_cluster() as u32, rw: g.row_words() as u64, wpc: g.words_per_cluster() as u64 }
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
        launch::store(self, &mut KernelTimer::default(), shape(&geom), &mut w, &d_msgs, m)?;
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
        let s = shape(g);
        let words = k as u64 * s.rw;
        gpu.ensure_fits(2 * words * 8 + k as u64 * (4 * 5 + 8 * g.clusters() as u64) + probes.len() as u64 * 2)?;
        let st = &gpu.stream;
        let d_probes = st.clone_htod(probes)?;
        // SAFETY (uninitialised buffers): gbnn_init writes every word of both state buffers and
        // every per-probe field before any kernel reads them.
        let (mut buf0, mut buf1) = unsafe { (st.alloc::<u64>(words as usize)?, st.alloc::<u64>(words as usize)?) };
        let (mut list_a, mut list_b) = unsafe { (st.alloc::<u32>(k)?, st.alloc::<u32>(k)?) };
        let (mut changed, mut iters, mut converged) = unsafe { (st.alloc::<u32>(k)?, st.alloc::<u32>(k)?, st.alloc::<u32>(k)?) };
        let mut count = st.alloc_zeros::<u32>(1)?;
        // Occupancy of the erased clusters, for the joint iterations (L <= 4096); the plain
        // word-per-thread bail-out-early serves larger clusters.
        let use_occ = rule == Rule::Joint && s.wpc <= 64;
        // Two, for the occupancy of the current and of the previous state (zero before update 1,
        // like the erased clusters of the initial state).
        let occ_len = if use_occ { k * g.clusters() } else { 1 };
        let mut occ = [st.alloc_zeros::<u64>(occ_len)?, st.alloc_zeros::<u64>(occ_len)?];
        let kj = if rule == Rule::Joint { k } else { 1 };
        let mut ix = launch::JointIndex {
            rows: st.alloc_zeros::<u32>(kj * g.clusters())?,
            known: st.alloc_zeros::<u32>(kj)?,
            erased_list: st.alloc_zeros::<u8>(kj * g.clusters())?,
            erased_mask: st.alloc_zeros::<u64>(kj)?,
        };
        let mut timer = KernelTimer::default();
        let k32 = k as u32;
        launch::init(gpu, &mut timer, s, &d_probes, k32, rule.erased_start_on() as u32, &mut buf0, &mut buf1, &mut list_a, &mut changed, &mut iters, &mut converged)?;
        if rule == Rule::Joint {
            launch::probe_index(gpu, &mut timer, s, &d_probes, k32, &mut ix)?;
        }
        let e_max = probes.chunks(g.clusters()).map(|p| g.erased_mask(p).count_ones()).max().unwrap_or(0);
        let limit = rule.iteration_limit(g, params);
        let (mut n, mut t) = (k32, 0u32);
        while t < limit && n > 0 {
            let (cur, next) = if t % 2 == 0 { (&buf0, &mut buf1) } else { (&buf1, &mut buf0) };
            match rule {
                Rule::SumOfSum => launch::step_sos(gpu, &mut timer, s, params.gamma, &self.w, cur, next, &list_a, n, &mut changed)?,
                // Update 0 runs on every probe, in order: the list is still the identity.
                Rule::Joint if t == 0 => launch::joint_first(gpu, &mut timer, s, e_max, &self.w, &ix, cur, next, k32, &mut changed)?,
                Rule::Joint if use_occ => {
                    let [now, prev] = &mut occ;
                    let (now, prev) = if t % 2 == 0 { (now, prev) } else { (prev, now) };
                    launch::occupancy(gpu, &mut timer, s, e_max, &ix, cur, &list_a, n, now)?;
                    launch::step_joint(gpu, &mut timer, s, e_max, &self.w, &ix, now, prev, cur, next, &list_a, n, &mut changed)?
                }
                _ => launch::step_word(gpu, &mut timer, s, rule as u32, &self.w, &d_probes, cur, next, &list_a, n, &mut changed)?,
            }
            st.memset_zeros(&mut count)?;
            launch::compact(gpu, &mut timer, &list_a, n, &mut changed, &mut iters, &mut converged, &mut list_b, &mut count)?;
            n = st.clone_dtoh(&count)?[0];
            std::mem::swap(&mut list_a, &mut list_b);
            t += 1;
        }
        // Step t-1 wrote buffer t % 2; a probe that converged earlier holds equal buffers.
        let last = if t % 2 == 0 { &buf0 } else { &buf1 };
        let states = gpu.download(last)?;
        let (iters, converged) = (st.clone_dtoh(&iters)?, st.clone_dtoh(&converged)?);
        let kernel_ms = timer.total_ms()?;
        let stats = iters.iter().zip(&converged).map(|(&i, &c)| Stats { iterations: i, converged: c != 0 }).collect();
        Ok(GpuBatch { states, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }
}
