//! Batch retrieval on one device, streamed in chunks: a batch of any size needs device memory
//! for one chunk only, and with compact results ([`DeviceNetwork::retrieve_decoded`]) host
//! memory for 4 bytes per cluster instead of the dense states.

use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Geometry, Params, Rule, Schedule, Stats};
use neurobits_core::Word;
use std::time::Instant;

use super::chunk::{bytes_per_probe, Chunk};
use super::DeviceNetwork;
use crate::launch::KernelTimer;
use crate::GpuError;

/// Dense result of a GPU batch retrieval.
pub struct GpuBatch {
    /// `K` rows of [`Geometry::row_words`] words, identical to the CPU's.
    pub states: Vec<Word>,
    /// Per-probe iterations and convergence, identical to the CPU's.
    pub stats: Vec<Stats>,
    /// GPU time inside the retrieval kernels.
    pub kernel_ms: f64,
    /// Wall time including probe upload and result download.
    pub total_ms: f64,
}

/// Compact result of a GPU batch retrieval.
pub struct GpuDecoded {
    /// `K · C` decoded clusters (lowest active symbol and active count), identical to the
    /// CPU's `retrieve_batch_decoded`.
    pub decoded: Vec<Decoded>,
    /// Per-probe iterations and convergence.
    pub stats: Vec<Stats>,
    /// GPU time inside the kernels (retrieval and decoding).
    pub kernel_ms: f64,
    /// Wall time including probe upload and result download.
    pub total_ms: f64,
}

pub(super) fn check_probes(g: &Geometry, probes: &[u16]) -> Result<usize, GpuError> {
    let c = g.clusters();
    if !probes.len().is_multiple_of(c) {
        return Err(GpuError::Input(format!("{} symbols is not a whole number of {c}-symbol probes", probes.len())));
    }
    for p in probes.chunks(c) {
        g.check_symbols(p, true).map_err(|e| GpuError::Input(e.to_string()))?;
    }
    Ok(probes.len() / c)
}

/// Chunk buffers are kept under this, and under half the free device memory.
const CHUNK_BUDGET: u64 = 8 << 30;

impl DeviceNetwork<'_> {
    /// Probes per chunk for a batch of `k`, `per_probe` device bytes each.
    pub(super) fn chunk_cap(&self, k: usize, per_probe: u64) -> Result<usize, GpuError> {
        let (free, _) = self.gpu().memory()?;
        let fits = ((free / 2).min(CHUNK_BUDGET) / per_probe.max(1)) as usize;
        Ok(self.chunk.unwrap_or(fits).min(fits).min(k).max(1))
    }

    /// Runs the core's schedule on every chunk of `probes`; `finish` takes each chunk's final
    /// state (`bufs[t % 2]` after `t` updates) before the next chunk overwrites it.
    fn run_chunks(
        &self,
        probes: &[u16],
        rule: Rule,
        params: &Params,
        cap: usize,
        mut finish: impl FnMut(&mut Chunk, u32, &mut KernelTimer) -> Result<(), GpuError>,
    ) -> Result<(Vec<Stats>, f64), GpuError> {
        let g = &self.geom;
        let k = probes.len() / g.clusters();
        if self.shard != Shard::all(g) {
            return Err(GpuError::Input("a shard alone cannot retrieve: use ShardedNetwork".into()));
        }
        let mut ch = self.alloc_chunk(cap, rule)?;
        let mut timer = KernelTimer::default();
        let st = &self.gpu().stream;
        let mut stats = Vec::with_capacity(k);
        for part in probes.chunks(cap * g.clusters()) {
            self.begin(&mut ch, part, rule, &mut timer)?;
            // The core's schedule drives the chunk: it ends when no probe changed or at the limit.
            let mut sched = Schedule::new(rule, g, params);
            let mut n = ch.k as u32;
            while let Some(u) = sched.next_update() {
                self.update(&mut ch, u, sched.t(), n, params, &mut timer)?;
                self.compact(&mut ch, n, &mut timer)?;
                n = st.clone_dtoh(&ch.count)?[0];
                ch.lists.swap(0, 1);
                sched.record(n > 0);
            }
            finish(&mut ch, sched.t(), &mut timer)?;
            let (mut iters, mut conv) = (vec![0u32; ch.k], vec![0u32; ch.k]);
            st.memcpy_dtoh(&ch.iters.slice(0..ch.k), &mut iters)?;
            st.memcpy_dtoh(&ch.converged.slice(0..ch.k), &mut conv)?;
            stats.extend(iters.iter().zip(&conv).map(|(&i, &c)| Stats { iterations: i, converged: c != 0 }));
        }
        Ok((stats, timer.total_ms()?))
    }

    /// Retrieves `K` probes (`K·C` symbols) and returns the dense final states: each probe
    /// iterates until it converges; per update only the still-changing probes get threads (the
    /// active list is compacted on the device). The states come back through the pinned
    /// double buffer, chunk by chunk.
    pub fn retrieve(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuBatch, GpuError> {
        let start = Instant::now();
        let rw = self.geom.row_words();
        let k = check_probes(&self.geom, probes)?;
        let cap = self.chunk_cap(k, bytes_per_probe(&self.geom, rule))?;
        let mut states = Vec::with_capacity(k * rw);
        let gpu = self.gpu();
        let (stats, kernel_ms) = self.run_chunks(probes, rule, params, cap, |ch, t, _| {
            gpu.download_prefix(&ch.bufs[t as usize % 2], ch.k * rw, &mut states)
        })?;
        Ok(GpuBatch { states, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }

    /// [`DeviceNetwork::retrieve`] returning compact results: each cluster's lowest active
    /// symbol and active count ([`Decoded`]), decoded on the device; 4 bytes per cluster cross
    /// the bus instead of `⌈L/64⌉` words.
    pub fn retrieve_decoded(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuDecoded, GpuError> {
        let start = Instant::now();
        let c = self.geom.clusters();
        let k = check_probes(&self.geom, probes)?;
        let cap = self.chunk_cap(k, bytes_per_probe(&self.geom, rule) + 4 * c as u64)?;
        let mut out = self.gpu().stream.alloc_zeros::<u32>(cap * c)?;
        let mut decoded = vec![Decoded::default(); k * c];
        // SAFETY: `Decoded` is `repr(transparent)` over `u32`.
        let raw = unsafe { std::slice::from_raw_parts_mut(decoded.as_mut_ptr().cast::<u32>(), k * c) };
        let mut at = 0;
        let (stats, kernel_ms) = self.run_chunks(probes, rule, params, cap, |ch, t, timer| {
            self.decode(ch, t, &mut out, timer)?;
            let n = ch.k * c;
            self.gpu().stream.memcpy_dtoh(&out.slice(0..n), &mut raw[at..at + n])?;
            at += n;
            Ok(())
        })?;
        Ok(GpuDecoded { decoded, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }
}
