//! What a network keeps between batches besides its chunk buffers ([`super::chunk`]), so that a
//! batch of compact results pays no per-call allocation and no memory query once its sizes have
//! been seen:
//!
//! - page-locked host words ([`HostWords`]) for the per-probe statistics, queued behind each
//!   chunk on the stream and converted once an event behind them has passed, while the next chunk
//!   runs (two blocking copies into fresh pageable vectors per chunk held the host, and so the
//!   GPU, between chunks), and for the active count the schedule reads after each update;
//! - the device buffer of the batch's decoded results (an allocation and a memset per call, and
//!   the stream-ordered pool gives the memory back at every synchronisation, so each call mapped
//!   it again);
//! - the chunk size chosen for the last batch ([`Plan`]): `cuMemGetInfo` is asked only when the
//!   batch size, the rule or the chunk cap changes, or the chunk buffers sized then are gone.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use neurobits_core::gbnn::{Rule, Stats};
use std::mem::MaybeUninit;
use std::sync::Arc;

use super::chunk::Chunk;
use super::DeviceNetwork;
use crate::{GpuError, Pinned};

/// Page-locked words for the statistics and the active count.
pub(super) struct HostWords {
    /// The batch's iteration counts (`K` words), then their convergence flags (`K` words).
    stats: Pinned<u32>,
    /// The active count after an update.
    count: Pinned<u32>,
}

impl HostWords {
    /// Queues the copies of chunk `ch`'s statistics (probes `at..at + ch.k` of a batch of `k`)
    /// behind its kernels on `st`. Stream order keeps the next chunk's `begin` from overwriting
    /// them first; read them with [`HostWords::stats_to`] only after an event recorded behind
    /// these copies has passed (or `st` is synchronised), and synchronise `st` before these words
    /// are reused or freed.
    pub(super) fn queue_stats(
        &mut self,
        st: &Arc<CudaStream>,
        ch: &Chunk,
        at: usize,
        k: usize,
    ) -> Result<(), GpuError> {
        let n = ch.k;
        // The raw copies below take the thread's current context: with several GPUs it must be
        // this stream's (the safe copies they replace bound it themselves).
        st.context().bind_to_thread()?;
        if at + n > k || 2 * k > self.stats.len() || ch.iters.len() < n || ch.converged.len() < n {
            return Err(GpuError::Input("statistics past their buffer".into()));
        }
        let (iters, _read) = ch.iters.device_ptr(st);
        // SAFETY: `iters` holds at least `n` words (checked), the destination `n` page-locked
        // words that stay alive and untouched until the caller synchronises `st`.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(self.stats.range_mut(at..at + n), iters, st.cu_stream()) }?;
        let (conv, _read) = ch.converged.device_ptr(st);
        // SAFETY: as above.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(self.stats.range_mut(k + at..k + at + n), conv, st.cu_stream())
        }?;
        Ok(())
    }

    /// The statistics of probes `at..at + out.len()` of the batch's `k` (once their copies,
    /// queued by [`HostWords::queue_stats`], have arrived) into `out`, in parallel blocks on
    /// rayon's pool. Converting a batch's 2.5·10^5 after its last synchronisation took 0.3–0.9
    /// ms on an H200 host (2 MB of page-locked words read, 2 MB written) — whether on one thread
    /// or on the pool — so the pipelined driver converts each chunk's while the next one runs.
    pub(super) fn stats_to(&self, k: usize, at: usize, out: &mut [MaybeUninit<Stats>]) -> Result<(), GpuError> {
        use rayon::prelude::*;
        let end = at + out.len();
        if end > k || 2 * k > self.stats.len() {
            return Err(GpuError::Input(format!("statistics {at}..{end} of a batch of {k}")));
        }
        let (iters, conv) = (self.stats.range(at..end), self.stats.range(k + at..k + end));
        const BLOCK: usize = 1 << 14;
        out.par_chunks_mut(BLOCK).zip(iters.par_chunks(BLOCK)).zip(conv.par_chunks(BLOCK)).for_each(|((o, i), c)| {
            for ((o, &i), &c) in o.iter_mut().zip(i).zip(c) {
                o.write(Stats { iterations: i, converged: c != 0 });
            }
        });
        Ok(())
    }

    /// Reads `count` (one word) once the work queued on `st` so far has written it: the host
    /// needs it to size the next launch, so this waits, as the blocking copy it replaces did.
    pub(super) fn read_count(&mut self, st: &Arc<CudaStream>, count: &CudaSlice<u32>) -> Result<u32, GpuError> {
        st.context().bind_to_thread()?; // as in `queue_stats`
        let (src, read) = count.device_ptr(st);
        // SAFETY: `count` holds a word; the destination is a page-locked word read only after
        // the synchronisation below.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut self.count[..1], src, st.cu_stream()) }?;
        drop(read);
        st.synchronize()?;
        Ok(self.count[0])
    }
}

/// The chunk size chosen for a batch, and what it was chosen for.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) struct Plan {
    /// Probes in the batch.
    pub k: usize,
    /// Device bytes per probe of a chunk.
    pub per_probe: u64,
    /// The network's chunk cap then ([`DeviceNetwork::set_chunk_probes`]).
    pub chunk: Option<usize>,
    pub rule: Rule,
    /// Probes per chunk.
    pub cap: usize,
}

/// The kept buffers other than the chunk's.
#[derive(Default)]
pub(super) struct Kept {
    host: Option<HostWords>,
    out: Option<CudaSlice<u32>>,
    plan: Option<Plan>,
    /// Batches whose first chunk was checked by `gbnn_probe_check`.
    device_checks: usize,
}

impl DeviceNetwork<'_> {
    fn kept_more(&self) -> Result<std::sync::MutexGuard<'_, Kept>, GpuError> {
        self.more.lock().map_err(|_| GpuError::Cuda("kept buffers poisoned".into()))
    }

    /// Host words for a batch of `k` probes: the kept ones when they are large enough.
    pub(super) fn take_host(&self, k: usize) -> Result<HostWords, GpuError> {
        let kept = self.kept_more()?.host.take();
        let gpu = self.gpu();
        match kept {
            Some(h) if h.stats.len() >= 2 * k => Ok(h),
            Some(h) => {
                let count = h.count;
                drop(h.stats); // freed before the larger one is made
                Ok(HostWords { stats: Pinned::zeroed(gpu, 2 * k)?, count })
            }
            None => Ok(HostWords { stats: Pinned::zeroed(gpu, 2 * k)?, count: Pinned::zeroed(gpu, 1)? }),
        }
    }

    /// Counts a first chunk checked on the device ([`DeviceNetwork::check_preloaded`]).
    pub(super) fn note_device_check(&self) {
        if let Ok(mut m) = self.kept_more() {
            m.device_checks += 1;
        }
    }

    /// How many batches so far had their first chunk checked on the device (`gbnn_probe_check`,
    /// a pipelined batch of the same size as the last) rather than on the host: a diagnostic.
    pub fn device_probe_checks(&self) -> usize {
        self.kept_more().map_or(0, |m| m.device_checks)
    }

    /// Keeps `h` for the next batch. Only after the stream has been synchronised: no copy may
    /// still be writing into it.
    pub(super) fn keep_host(&self, h: HostWords) {
        if let Ok(mut m) = self.kept_more() {
            m.host = Some(h);
        }
    }

    /// A device buffer for `n` decoded values: the kept one when it is large enough, else a new
    /// one (checked against the free memory first). Its contents are the last batch's: every
    /// value a batch downloads is written by its own decoding first.
    pub(super) fn take_out(&self, n: usize) -> Result<CudaSlice<u32>, GpuError> {
        let kept = self.kept_more()?.out.take();
        match kept {
            Some(out) if out.len() >= n.max(1) => Ok(out),
            small => {
                drop(small); // freed before the larger one is made
                let gpu = self.gpu();
                gpu.ensure_fits(n as u64 * 4)?;
                Ok(gpu.stream.alloc_zeros::<u32>(n.max(1))?)
            }
        }
    }

    /// Keeps `out` for the next batch.
    pub(super) fn keep_out(&self, out: CudaSlice<u32>) {
        if let Ok(mut m) = self.kept_more() {
            m.out = Some(out);
        }
    }

    /// [`DeviceNetwork::chunk_cap`] for a batch of `k` probes under `rule`, without asking the
    /// driver for its free memory when the last batch had the same size, rule and chunk cap and
    /// the chunk buffers kept hold the `need(cap)` probes this batch's chunks will take: no
    /// device memory is then allocated for chunks, so the cap chosen from the free memory then
    /// still holds (a chunk that needs new buffers gets a fresh cap, as before).
    pub(super) fn chunk_cap_kept(
        &self,
        (k, per_probe, rule): (usize, u64, Rule),
        need: impl Fn(usize) -> usize,
    ) -> Result<(usize, Plan), GpuError> {
        if let Some(p) = self.planned((k, per_probe, rule))? {
            let kept = self.kept.lock().map_err(|_| GpuError::Cuda("chunk cache poisoned".into()));
            if kept?.as_ref().is_some_and(|(r, ch)| *r == rule && ch.lists[0].len() >= need(p.cap)) {
                return Ok((p.cap, p));
            }
        }
        let cap = self.chunk_cap(k, per_probe)?;
        Ok((cap, Plan { k, per_probe, chunk: self.chunk, rule, cap }))
    }

    /// The kept plan when it was made for a batch of `k` probes of `per_probe` bytes under `rule`
    /// with the current chunk cap.
    pub(super) fn planned(&self, (k, per_probe, rule): (usize, u64, Rule)) -> Result<Option<Plan>, GpuError> {
        let key = Plan { k, per_probe, chunk: self.chunk, rule, cap: 0 };
        Ok(self.kept_more()?.plan.filter(|p| Plan { cap: 0, ..*p } == key))
    }

    /// The kept chunk buffers when they are for `rule` and `fit`; else they stay kept.
    pub(super) fn take_kept_chunk(&self, rule: Rule, fit: impl Fn(&Chunk) -> bool) -> Result<Option<Chunk>, GpuError> {
        let mut kept = self.kept.lock().map_err(|_| GpuError::Cuda("chunk cache poisoned".into()))?;
        if kept.as_ref().is_some_and(|(r, ch)| *r == rule && fit(ch)) {
            return Ok(kept.take().map(|(_, ch)| ch));
        }
        Ok(None)
    }

    /// Remembers `plan` after a batch that ran with it (and kept its chunk buffers).
    pub(super) fn keep_plan(&self, plan: Plan) {
        if let Ok(mut m) = self.kept_more() {
            m.plan = Some(plan);
        }
    }

    /// Frees the kept host words, result buffer and plan (see
    /// [`DeviceNetwork::release_buffers`]).
    pub(super) fn release_more(&self) {
        if let Ok(mut m) = self.kept_more() {
            *m = Kept::default();
        }
    }
}
