//! Batch retrieval on one device, streamed in chunks: a batch of any size needs device memory
//! for one chunk only, and with compact results ([`DeviceNetwork::retrieve_decoded`]) host
//! memory for 4 bytes per cluster instead of the dense states.

use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Mode, Params, Rule, Schedule, Stats};
use neurobits_core::Word;
use std::mem::MaybeUninit;
use std::time::Instant;

use super::chunk::{bytes_per_probe, Chunk};
use super::kept::Plan;
use super::scan::{scan_probes, Scan};
use super::slots::{as_slots, check_slots, download_decoded, fill, probe_count};
use super::DeviceNetwork;
use crate::launch::{ms_since, profile_note, profiling, KernelTimer};
use crate::timeline::Timeline;
use crate::GpuError;

/// Dense result of a GPU batch retrieval.
pub struct GpuBatch {
    /// `K` rows of [`Geometry::row_words`](neurobits_core::gbnn::Geometry::row_words) words, identical to the CPU's.
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

/// Statistics and times of a retrieval whose results went into the caller's memory
/// ([`DeviceNetwork::retrieve_decoded_into`]).
pub struct GpuRun {
    /// Per-probe iterations and convergence.
    pub stats: Vec<Stats>,
    /// GPU time inside the kernels (the slowest GPU's, over several).
    pub kernel_ms: f64,
    /// Wall time including probe upload and result download.
    pub total_ms: f64,
}

/// What a caller of [`DeviceNetwork::run_chunks`] does around each chunk `i`.
pub(super) trait ChunkHooks {
    /// The chunk buffers to run in when the caller holds them already (with the first chunk's
    /// probes queued into them); `None`: the kept ones.
    fn buffers(&mut self) -> Option<Chunk> {
        None
    }
    /// Before the chunk's probes are uploaded (or taken from `ch.spare`).
    fn before(&mut self, _i: usize, _ch: &mut Chunk) -> Result<(), GpuError> {
        Ok(())
    }
    /// After the chunk's first launches are queued.
    fn begun(&mut self, _i: usize, _ch: &mut Chunk) -> Result<(), GpuError> {
        Ok(())
    }
    /// Takes the chunk's final state, `bufs[t % 2]` after `t` updates.
    fn finish(&mut self, i: usize, ch: &mut Chunk, t: u32, timer: &mut KernelTimer) -> Result<(), GpuError>;
    /// Chunk `i`'s most erased clusters when the hooks checked its probes themselves (else the
    /// batch's, from the plan).
    fn e_max(&self, _i: usize) -> Option<u32> {
        None
    }
}

/// Hooks that only take each chunk's final state.
struct Finish<F>(F);

impl<F: FnMut(&mut Chunk, u32, &mut KernelTimer) -> Result<(), GpuError>> ChunkHooks for Finish<F> {
    fn finish(&mut self, _i: usize, ch: &mut Chunk, t: u32, timer: &mut KernelTimer) -> Result<(), GpuError> {
        (self.0)(ch, t, timer)
    }
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

    /// Runs the core's schedule for `rule` in `mode` on every chunk of `probes` (`plan`: chunk
    /// size, most erased clusters, lean start); `hooks.finish` takes each chunk's final state
    /// (`bufs[t % 2]` after `t` updates) before the next chunk overwrites it. Each step is
    /// marked on `tl` (see [`crate::timeline`]). Writes every probe's statistics into `stats`
    /// (one slot per probe) and returns the kernel milliseconds.
    pub(super) fn run_chunks(
        &self,
        probes: &[u16],
        (rule, mode, params): (Rule, Mode, &Params),
        (cap, e_max, lean): (usize, u32, bool),
        hooks: &mut impl ChunkHooks,
        (stats, tl): (&mut [MaybeUninit<Stats>], &mut Timeline),
    ) -> Result<f64, GpuError> {
        let g = &self.geom;
        let k = probes.len() / g.clusters();
        if stats.len() != k {
            return Err(GpuError::Input(format!("{} statistics slots for {k} probes", stats.len())));
        }
        if self.shard != Shard::all(g) {
            return Err(GpuError::Input("a shard alone cannot retrieve: use ShardedNetwork".into()));
        }
        let ta = Instant::now();
        let mut ch = match hooks.buffers() {
            Some(ch) if ch.lists[0].len() >= cap => ch,
            Some(_) => return Err(GpuError::Input("chunk buffers held for fewer probes than a chunk".into())),
            None => self.take_chunk(cap, rule)?,
        };
        ch.ready = None;
        let mut host = self.take_host(k)?;
        tl.mark(format_args!("buffers"));
        profile_note(|| format!("chunk buffers for {cap} probes: {:.1} ms", ms_since(ta)));
        let mut timer = KernelTimer::default();
        let st = &self.gpu().stream;
        // The last chunk whose statistics' copies are queued but not yet converted: the event
        // after them and its probes.
        let mut copied: Option<(cudarc::driver::CudaEvent, std::ops::Range<usize>)> = None;
        let mut run = || -> Result<(), GpuError> {
            let mut at = 0;
            for (i, part) in probes.chunks(cap * g.clusters()).enumerate() {
                let tb = Instant::now();
                hooks.before(i, &mut ch)?;
                tl.mark(format_args!("before{i}"));
                let e = hooks.e_max(i).unwrap_or(e_max);
                self.begin(&mut ch, part, (rule, mode), (e, e), lean, &mut timer)?;
                tl.mark(format_args!("begin{i}"));
                hooks.begun(i, &mut ch)?;
                tl.mark(format_args!("begun{i}"));
                if profiling() {
                    st.synchronize()?;
                    profile_note(|| format!("chunk of {} probes: upload and start {:.1} ms", ch.k, ms_since(tb)));
                }
                // The core's schedule drives the chunk: it ends when no probe changed or at the limit.
                let mut sched = Schedule::with_mode(rule, mode, g, params);
                let mut n = ch.k as u32;
                while let Some(u) = sched.next_update() {
                    self.update(&mut ch, u, sched.t(), n, params, &mut timer)?;
                    self.compact(&mut ch, n, &mut timer)?;
                    tl.mark(format_args!("u{i}.{}", sched.t()));
                    // The previous chunk's statistics, converted while this chunk's first update
                    // runs (after the batch they held the caller 0.3–0.9 ms per 2.5·10^5
                    // probes; before this update's launch they held the GPU as long).
                    if let Some((ev, r)) = copied.take() {
                        ev.synchronize()?;
                        host.stats_to(k, r.start, &mut stats[r])?;
                        tl.mark(format_args!("stats{}", i - 1));
                    }
                    n = host.read_count(st, &ch.count)?;
                    tl.mark(format_args!("n{i}.{}={n}", sched.t()));
                    ch.lists.swap(0, 1);
                    sched.record(n > 0);
                }
                hooks.finish(i, &mut ch, sched.t(), &mut timer)?;
                // Queued, not waited for: the next chunk's launches follow on the stream at once.
                host.queue_stats(st, &ch, at, k)?;
                // (A chunk without updates left the one before it unconverted: converted now, so
                // that every probe's statistics are written.)
                if let Some((ev, r)) = copied.replace((st.record_event(None)?, at..at + ch.k)) {
                    ev.synchronize()?;
                    host.stats_to(k, r.start, &mut stats[r])?;
                }
                tl.mark(format_args!("finish{i}"));
                at += ch.k;
            }
            Ok(())
        };
        let run = run();
        // The statistics' copies into `host` are queued on the stream: wait for them before
        // reading, reusing or freeing it (also after an error).
        let synced = st.synchronize().map_err(GpuError::from);
        tl.mark(format_args!("synced"));
        run.and(synced)?;
        self.keep_chunk(ch, rule);
        // The last chunk's statistics (every chunk's were queued, so all of them are written).
        let written = copied.map_or(Ok(()), |(_, r)| host.stats_to(k, r.start, &mut stats[r]));
        tl.mark(format_args!("stats"));
        self.keep_host(host);
        written?;
        let kernel_ms = timer.total_ms()?;
        tl.mark(format_args!("timer"));
        tl.kernels(&mut timer);
        Ok(kernel_ms)
    }

    /// Retrieves `K` probes (`K·C` symbols) and returns the dense final states: each probe
    /// iterates until it converges; per update only the still-changing probes get threads (the
    /// active list is compacted on the device). The states come back through the pinned
    /// double buffer, chunk by chunk.
    pub fn retrieve(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuBatch, GpuError> {
        self.retrieve_mode(probes, rule, Mode::Erasure, params)
    }

    /// [`DeviceNetwork::retrieve`] in `mode` (the core's `retrieve_batch_in`, state for state):
    /// noisy probes (every cluster may change) or sparse ones (silent clusters, a global
    /// winner-take-all per update). A rule the mode does not define is an input error.
    pub fn retrieve_mode(&self, probes: &[u16], rule: Rule, mode: Mode, params: &Params) -> Result<GpuBatch, GpuError> {
        let start = Instant::now();
        let rw = self.geom.row_words();
        let Scan { k, e_max, .. } = scan_probes(&self.geom, probes, &[self.shard], (rule, mode))?;
        let cap = self.chunk_cap(k, bytes_per_probe(&self.geom, rule))?;
        let mut states = Vec::with_capacity(k * rw);
        let gpu = self.gpu();
        let mut hooks = Finish(|ch: &mut Chunk, t: u32, _: &mut KernelTimer| {
            gpu.download_prefix(&ch.bufs[t as usize % 2], ch.k * rw, &mut states)
        });
        let how = (rule, mode, params);
        let (stats, kernel_ms) = fill(Vec::new(), k, |stats| {
            self.run_chunks(probes, how, (cap, e_max, false), &mut hooks, (stats, &mut Timeline::default()))
        })?;
        Ok(GpuBatch { states, stats, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }

    /// [`DeviceNetwork::retrieve`] returning compact results: each cluster's lowest active
    /// symbol and active count ([`Decoded`]), decoded on the device; 4 bytes per cluster cross
    /// the bus instead of `⌈L/64⌉` words.
    pub fn retrieve_decoded(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<GpuDecoded, GpuError> {
        self.retrieve_decoded_in(probes, rule, params, Vec::new())
    }

    /// [`DeviceNetwork::retrieve_decoded`] in `mode` (see [`DeviceNetwork::retrieve_mode`]):
    /// the decoding of the core's `retrieve_batch_decoded_in`.
    pub fn retrieve_decoded_mode(
        &self,
        probes: &[u16],
        rule: Rule,
        mode: Mode,
        params: &Params,
    ) -> Result<GpuDecoded, GpuError> {
        let start = Instant::now();
        let k = probe_count(&self.geom, probes)?;
        let run = fill(Vec::new(), k * self.geom.clusters(), |dst| {
            fill(Vec::new(), k, |stats| self.retrieve_decoded_to(probes, (rule, mode), params, dst, stats))
        });
        let total_ms = ms_since(start);
        crate::timeline::flush();
        let (decoded, (stats, kernel_ms)) = run?;
        Ok(GpuDecoded { decoded, stats, kernel_ms, total_ms })
    }

    /// [`DeviceNetwork::retrieve_decoded`] into `buffer`'s memory (e.g. the previous batch's
    /// `decoded`, given back): a long-lived process then pays no page faults for its results.
    pub fn retrieve_decoded_in(
        &self,
        probes: &[u16],
        rule: Rule,
        params: &Params,
        buffer: Vec<Decoded>,
    ) -> Result<GpuDecoded, GpuError> {
        let start = Instant::now();
        let k = probe_count(&self.geom, probes)?;
        let how = (rule, Mode::Erasure);
        let run = fill(buffer, k * self.geom.clusters(), |dst| {
            fill(Vec::new(), k, |stats| self.retrieve_decoded_to(probes, how, params, dst, stats))
        });
        let total_ms = ms_since(start);
        crate::timeline::flush();
        let (decoded, (stats, kernel_ms)) = run?;
        Ok(GpuDecoded { decoded, stats, kernel_ms, total_ms })
    }

    /// [`DeviceNetwork::retrieve_decoded`] into `out` (`K·C` values) that the caller keeps
    /// between calls. With `probes` and `out` in page-locked memory ([`crate::Pinned`]) the
    /// transfers run at the link's speed beside the kernels instead of through the driver's
    /// staging copies.
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
        let k = probe_count(&self.geom, probes)?;
        let how = (rule, Mode::Erasure);
        let run = fill(stats, k, |stats| self.retrieve_decoded_to(probes, how, params, as_slots(out), stats));
        let total_ms = ms_since(start);
        crate::timeline::flush();
        let (stats, kernel_ms) = run?;
        Ok(GpuRun { stats, kernel_ms, total_ms })
    }

    /// [`DeviceNetwork::retrieve_decoded_mode`] into `dst` (`K·C` values) and `stats` (`K`
    /// slots); returns the kernel milliseconds.
    pub(super) fn retrieve_decoded_to(
        &self,
        probes: &[u16],
        (rule, mode): (Rule, Mode),
        params: &Params,
        dst: &mut [MaybeUninit<Decoded>],
        stats: &mut [MaybeUninit<Stats>],
    ) -> Result<f64, GpuError> {
        let (c, gpu) = (self.geom.clusters(), self.gpu());
        // Raw driver calls below (the kept words' copies) take the thread's current context.
        gpu.ctx.bind_to_thread()?;
        let mut tl = Timeline::start(gpu, || format!("{} probes, compact results", probes.len() / c))?;
        let k = probe_count(&self.geom, probes)?;
        check_slots(k, c, dst.len(), stats.len())?;
        // The first chunk's probes are queued into the kept chunk buffers before the check (a
        // batch pipelined like the last one): they are checked there on the device, or go up
        // while the host checks the batch. After bad probes these buffers stay kept; after
        // another error they are freed.
        let mut pre = self.preload(probes, rule)?;
        tl.mark(format_args!("preload {}", pre.as_ref().map_or(0, |p| p.1 / c)));
        let ts = Instant::now();
        // The most erased clusters of `part` after checking its probes, on the host or, `on_device`
        // (`part` is the first chunk, preloaded), where they lie; bad probes: the preloaded buffers
        // stay kept (their probes are overwritten before use).
        let check = |part: &[u16], pre: &mut Option<(Chunk, usize, Plan)>, on_device: bool| {
            let found = match pre {
                Some((ch, ..)) if on_device => self.check_preloaded(ch, part, (rule, mode)),
                _ => scan_probes(&self.geom, part, &[self.shard], (rule, mode)).map(|s| s.e_max),
            };
            found.inspect_err(|_| {
                if let Some((ch, ..)) = pre.take() {
                    self.keep_chunk(ch, rule);
                }
            })
        };
        // The batch's most erased clusters decide the one-launch warp path. Where the geometry
        // rules that path out whatever the probes, a pipelined batch checks only its first chunk
        // here and each later chunk while the one before it runs (`super::pipeline`): the whole
        // check before the first launch took about 2 ms for 10^6 probes on an H200 host (64 MB
        // read), 0.5–2.9 ms per GPU on four.
        let warp_possible = mode == Mode::Erasure && self.warp_fits(rule, 0);
        let batch_e_max = if warp_possible { Some(check(probes, &mut pre, false)?) } else { None };
        let warp = batch_e_max.is_some_and(|e| self.warp_fits(rule, e));
        let piped = |cap| self.pipelined && !warp && super::pipeline::piece(k, cap) < k;
        // The probes per chunk each path takes for a cap.
        let need = |cap| if piped(cap) { super::pipeline::piece(k, cap) } else { cap };
        // Preloaded buffers follow the kept plan (they are the chunk buffers it would find).
        let (cap, plan) = match &pre {
            Some((.., plan)) => (plan.cap, *plan),
            None => self.chunk_cap_kept((k, bytes_per_probe(&self.geom, rule), rule), need)?,
        };
        let (piece, pipelined) = (super::pipeline::piece(k, cap), piped(cap));
        let check_rest = batch_e_max.is_none() && pipelined;
        // The first chunk, when it is the preloaded one, is checked on the device.
        let on_device = check_rest && matches!(&pre, Some((_, n, _)) if *n == piece * c);
        let e_max = match batch_e_max {
            Some(e) => e,
            None => check(if check_rest { &probes[..piece * c] } else { probes }, &mut pre, on_device)?,
        };
        tl.mark(format_args!("scan"));
        profile_note(|| format!("probe scan {:.1} ms", ms_since(ts)));
        // The whole batch's results stay on the device until they are downloaded: by chunk while
        // later chunks run (a long batch), else once at the end. The buffer and the chunk size
        // are kept for the next batch (`super::kept`).
        let t0 = Instant::now();
        let mut out = self.take_out(k * c)?;
        tl.mark(format_args!("out"));
        // Preloaded buffers serve only the pipelined path with the same first chunk.
        let pre = match pre {
            Some((ch, n, _)) if pipelined && n == piece * c => Some((ch, n)),
            Some((ch, ..)) => {
                self.keep_chunk(ch, rule);
                None
            }
            None => None,
        };
        let path = if warp {
            "warp"
        } else if pipelined {
            "pipelined"
        } else {
            "chunks"
        };
        tl.mark(format_args!("cap={cap} {path}"));
        let kernel_ms = if pipelined {
            let how = (rule, mode, params);
            self.run_decoded_pipelined(probes, how, (piece, e_max, pre, check_rest), &mut out, (dst, stats), &mut tl)?
        } else {
            let run = if warp {
                self.run_joint_warp(probes, (cap, e_max), &mut out, (stats, &mut tl))?
            } else {
                let mut at = 0;
                let mut hooks = Finish(|ch: &mut Chunk, t: u32, timer: &mut KernelTimer| {
                    self.decode(ch, t, &mut out, at, timer)?;
                    at += ch.k * c;
                    Ok(())
                });
                self.run_chunks(probes, (rule, mode, params), (cap, e_max, true), &mut hooks, (stats, &mut tl))?
            };
            let t1 = Instant::now();
            download_decoded(gpu, &out, dst)?;
            tl.mark(format_args!("download"));
            let (r, d) = ((t1 - t0).as_secs_f64() * 1e3, ms_since(t1));
            profile_note(|| format!("retrieval {r:.1} ms, download {d:.1} ms"));
            run
        };
        self.keep_out(out);
        self.keep_plan(plan);
        tl.finish();
        Ok(kernel_ms)
    }
}
