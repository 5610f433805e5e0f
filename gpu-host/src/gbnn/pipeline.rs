//! Compact results of a long batch on one device with the transfers beside the kernels: the
//! batch runs in chunks (at least [`PIECES`] of at least [`MIN_PIECE`] probes), and a helper
//! thread moves the data on the GPU's copy stream while the GPU iterates — chunk `i + 1`'s probes
//! up into the chunk's spare probe buffer, chunk `i − 1`'s decoded results down into the caller's
//! memory. Pageable copies block the thread that issues them until the data has moved, so they
//! go to that thread, not to the one that drives the schedule (which waits on the GPU every
//! update). Scenario 3 on one H200 spent about half of its end-to-end time in these copies, one
//! after the other with the kernels. Where the caller checked only the first chunk's probes, the
//! helper also checks each later chunk's (on rayon's pool) after queuing its upload, and hands
//! back its most erased clusters or the input error with the upload's event: the chunk's
//! launches wait for both, and a bad probe stops the batch before them.
//!
//! Ordering, all on the device: chunk `i` starts after the event recorded behind its upload;
//! a download starts after the event recorded behind its chunk's decoding; the upload into the
//! spare buffer is queued behind the previous chunk's download on the copy stream, so after that
//! chunk's decoding, its last reader.

use cudarc::driver::{sys, CudaEvent, CudaSlice, DevicePtr, DevicePtrMut};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Mode, Params, Rule, Stats};
use std::mem::MaybeUninit;
use std::sync::mpsc;
use std::time::Instant;

use super::chunk::Chunk;
use super::kept::Plan;
use super::retrieve::ChunkHooks;
use super::scan::scan_probes;
use super::DeviceNetwork;
use crate::launch::{ms_since, profile_note, KernelTimer};
use crate::timeline::{self, Span, Timeline};
use crate::{Gpu, GpuError};

/// The smallest chunk of a pipelined batch: below it a chunk's fixed costs (its launches, host
/// synchronisations and a less busy GPU) outweigh the transfers it hides. Measured on 4 H200s
/// with 2.5·10^5 probes per GPU (Scenario 3): chunks of 2^16 took 7.7 ms of kernels against
/// 6.2 ms in one chunk.
const MIN_PIECE: usize = 1 << 17;
/// A long batch is cut into at least this many chunks: the first upload and the last download
/// are the part of the transfers nothing hides.
const PIECES: usize = 4;

/// Probes per chunk for a batch of `k` probes whose chunks may hold `cap`: the batch is
/// pipelined when this is below `k`.
pub(super) fn piece(k: usize, cap: usize) -> usize {
    cap.min(k.div_ceil(PIECES).max(MIN_PIECE)).max(1)
}

/// An upload's completion event and, when the helper checks the probes, their most erased
/// clusters (or why they were refused).
type Uploaded = (CudaEvent, Option<Result<u32, GpuError>>);
/// What the helper checks uploaded probes against: the geometry, the network's shard, the rule
/// and mode.
type Check<'g> = (&'g neurobits_core::gbnn::Geometry, Shard, (Rule, Mode));

/// A transfer for the helper thread.
enum Job<'a> {
    /// Host probes to a device address; the upload's event goes back.
    Up { src: &'a [u16], dst: u64 },
    /// Decoded values from a device address into the caller's memory, once `ready` has passed.
    Down { src: u64, dst: &'a mut [MaybeUninit<Decoded>], ready: CudaEvent },
}

/// The helper thread: runs `jobs` in order on `gpu`'s copy stream and sends each upload's
/// completion event back through `ups`; with `spans` (the timeline), returns events around each
/// copy.
fn mover(
    gpu: &Gpu,
    jobs: mpsc::Receiver<Job<'_>>,
    ups: mpsc::Sender<Uploaded>,
    (spans, check): (bool, Option<Check<'_>>),
) -> Result<Vec<Span>, GpuError> {
    gpu.ctx.bind_to_thread()?;
    let copy = gpu.copy_stream();
    let mut found = Vec::new();
    let ran = run_jobs(&copy, jobs, ups, (spans.then_some(&mut found), check));
    // Also after an error: no copy may still be writing when the buffers are freed.
    let synced = copy.synchronize().map_err(GpuError::from);
    ran.and(synced).map(|()| found)
}

/// The loop of [`mover`]; `spans` gets an event pair around each copy (after a download's wait
/// for its chunk: the copy itself).
fn run_jobs(
    copy: &cudarc::driver::CudaStream,
    jobs: mpsc::Receiver<Job<'_>>,
    ups: mpsc::Sender<Uploaded>,
    (mut spans, check): (Option<&mut Vec<Span>>, Option<Check<'_>>),
) -> Result<(), GpuError> {
    let (mut downs, mut up_count) = (0, 0);
    for job in jobs {
        match job {
            Job::Down { src, dst, ready } => {
                copy.wait(&ready)?;
                let a = spans.as_ref().map(|_| timeline::event(copy)).transpose()?;
                // SAFETY: `src` is the device address of `dst.len()` decoded values inside the
                // batch's result buffer, which outlives this thread; the wait orders the copy
                // after the kernel that writes them; `Decoded` is `repr(transparent)` over `u32`.
                // A copy into pageable memory returns once the data has arrived.
                unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len() * 4, copy.cu_stream()) }
                    .result()?;
                if let (Some(s), Some(a)) = (spans.as_mut(), a) {
                    s.push((format!("down{downs}"), a, timeline::event(copy)?));
                }
                downs += 1;
            }
            Job::Up { src, dst } => {
                let a = spans.as_ref().map(|_| timeline::event(copy)).transpose()?;
                // SAFETY: `dst` is the spare probe buffer, at least `src.len()` long, whose last
                // reader (the previous chunk's decoding) the copy stream has waited for behind
                // that chunk's download; a pageable source is staged before the call returns.
                unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len() * 2, copy.cu_stream()) }
                    .result()?;
                up_count += 1;
                if let (Some(s), Some(a)) = (spans.as_mut(), a) {
                    s.push((format!("up{up_count}"), a, timeline::event(copy)?));
                }
                let ready = copy.record_event(None)?;
                // The chunk's probes checked here, on rayon's pool, while the chunk before it runs
                // (the caller checked only the first chunk); its launches wait for this answer.
                let e_max = check.map(|(g, shard, how)| scan_probes(g, src, &[shard], how).map(|s| s.e_max));
                if ups.send((ready, e_max)).is_err() {
                    break; // the schedule stopped (an error there): nothing waits for this
                }
            }
        }
    }
    Ok(())
}

/// The hooks of a pipelined run: the jobs for the helper thread, and each chunk's decoding.
struct Pipeline<'a, 'n, 'g> {
    net: &'n DeviceNetwork<'g>,
    /// The batch's chunks of probes.
    parts: Vec<&'a [u16]>,
    /// The caller's memory, chunk by chunk, in order.
    dsts: std::slice::ChunksMut<'a, MaybeUninit<Decoded>>,
    jobs: mpsc::Sender<Job<'a>>,
    ups: mpsc::Receiver<Uploaded>,
    out: &'a mut CudaSlice<u32>,
    /// `out`'s device address.
    base: u64,
    /// The last chunk's decoding event and first value, not yet sent for download.
    pending: Option<(CudaEvent, usize)>,
    at: usize,
    /// Chunk buffers taken before the probe check, the first chunk's probes queued into them:
    /// their symbols and the probe buffer's device address ([`DeviceNetwork::preload`]).
    pre: Option<Chunk>,
    preloaded: Option<(usize, u64)>,
    /// The most erased clusters of each later chunk, when the helper checks them (the caller
    /// checked only the first).
    e_max: Vec<u32>,
}

impl Pipeline<'_, '_, '_> {
    /// Sends the pending chunk's results for download.
    fn flush(&mut self) -> Result<(), GpuError> {
        if let Some((ready, at)) = self.pending.take() {
            let dst = self.dsts.next().ok_or_else(|| GpuError::Input("more chunks than result slots".into()))?;
            let src = self.base + (at * 4) as u64;
            self.jobs.send(Job::Down { src, dst, ready }).map_err(|_| stopped())?;
        }
        Ok(())
    }
}

fn stopped() -> GpuError {
    GpuError::Cuda("the copy thread stopped".into())
}

impl ChunkHooks for Pipeline<'_, '_, '_> {
    fn buffers(&mut self) -> Option<Chunk> {
        self.pre.take()
    }

    fn before(&mut self, i: usize, ch: &mut Chunk) -> Result<(), GpuError> {
        if i > 0 {
            let (ready, checked) = self.ups.recv().map_err(|_| stopped())?;
            ch.ready = Some(ready);
            if let Some(e) = checked {
                self.e_max.push(e?); // bad probes: the batch stops before this chunk's launches
            }
        } else if let Some((symbols, addr)) = self.preloaded.take() {
            // Only into the very buffer the probes went to (the one `buffers` handed over).
            let (at, _read) = ch.probes.device_ptr(&self.net.gpu().stream);
            ch.preloaded = if at == addr { symbols } else { 0 };
        }
        Ok(())
    }

    fn begun(&mut self, i: usize, ch: &mut Chunk) -> Result<(), GpuError> {
        self.flush()?;
        if let Some(next) = self.parts.get(i + 1).copied() {
            let gpu = self.net.gpu();
            if ch.spare.as_ref().is_none_or(|s| s.len() < ch.probes.len()) {
                // SAFETY: the kernels read only the probes each chunk uploads.
                ch.spare = Some(unsafe { gpu.stream.alloc::<u16>(ch.probes.len()) }?);
            }
            let spare = ch.spare.as_mut().expect("allocated just above");
            if next.len() > spare.len() {
                return Err(GpuError::Input("a chunk larger than its probe buffer".into()));
            }
            let (dst, _sync) = spare.device_ptr_mut(&gpu.stream);
            self.jobs.send(Job::Up { src: next, dst }).map_err(|_| stopped())?;
        }
        Ok(())
    }

    fn e_max(&self, i: usize) -> Option<u32> {
        // Chunk 0 was checked by the caller (its most erased clusters are the plan's).
        i.checked_sub(1).and_then(|j| self.e_max.get(j).copied())
    }

    fn finish(&mut self, i: usize, ch: &mut Chunk, t: u32, timer: &mut KernelTimer) -> Result<(), GpuError> {
        self.net.decode(ch, t, self.out, self.at, timer)?;
        self.pending = Some((self.net.gpu().stream.record_event(None)?, self.at));
        self.at += ch.k * self.net.geom.clusters();
        if i + 1 == self.parts.len() {
            // The last chunk: its download waits for nothing else, so it is queued now (behind its
            // decoding on the device) rather than after the run's final synchronisation.
            self.flush()?;
        }
        Ok(())
    }
}

impl DeviceNetwork<'_> {
    /// Takes the kept chunk buffers and queues the first chunk's probes into them before the
    /// batch's probe check, so that the upload runs while the host checks: when this batch will
    /// be pipelined like the last one (same size, rule and chunk cap: the kept plan, no memory
    /// query), its buffers are kept large enough, and the one-launch warp path cannot apply
    /// (it uploads its own chunks). Nothing reads the probes before the check has passed; the
    /// caller hands the buffers back (`keep_chunk`) if the batch then takes another path.
    /// Returns the buffers, the symbols queued and the plan they follow.
    pub(super) fn preload(&self, probes: &[u16], rule: Rule) -> Result<Option<(Chunk, usize, Plan)>, GpuError> {
        let c = self.geom.clusters();
        if !self.pipelined || self.warp_fits(rule, 0) || !probes.len().is_multiple_of(c) {
            return Ok(None);
        }
        let k = probes.len() / c;
        let Some(plan) = self.planned((k, super::chunk::bytes_per_probe(&self.geom, rule), rule))? else {
            return Ok(None);
        };
        let piece = piece(k, plan.cap);
        let n = piece * c;
        if piece >= k {
            return Ok(None);
        }
        let Some(mut ch) = self.take_kept_chunk(rule, |ch| ch.lists[0].len() >= piece && ch.probes.len() >= n)? else {
            return Ok(None);
        };
        self.gpu().stream.memcpy_htod(&probes[..n], &mut ch.probes.slice_mut(0..n))?;
        Ok(Some((ch, n, plan)))
    }

    /// Compact results of `probes` (checked, at most `e_max` erased clusters each; with
    /// `check_rest` only the first chunk is, the helper checks the others) in chunks of
    /// `piece` probes, decoded into `out` and downloaded into `dst` beside the kernels (`pre`:
    /// buffers from [`DeviceNetwork::preload`] for this `piece`), the statistics into `stats`;
    /// returns the kernel milliseconds.
    pub(super) fn run_decoded_pipelined(
        &self,
        probes: &[u16],
        (rule, mode, params): (Rule, Mode, &Params),
        (piece, e_max, pre, check_rest): (usize, u32, Option<(Chunk, usize)>, bool),
        out: &mut CudaSlice<u32>,
        (dst, stats): (&mut [MaybeUninit<Decoded>], &mut [MaybeUninit<Stats>]),
        tl: &mut Timeline,
    ) -> Result<f64, GpuError> {
        let (c, gpu) = (self.geom.clusters(), self.gpu());
        let t0 = Instant::now();
        let (base, _sync) = out.device_ptr(&gpu.stream);
        drop(_sync);
        let found = std::thread::scope(|s| {
            let (jobs, job_rx) = mpsc::channel();
            let (up_tx, ups) = mpsc::channel();
            let spans = tl.on();
            let check = check_rest.then_some((&self.geom, self.shard, (rule, mode)));
            let helper = s.spawn(move || mover(gpu, job_rx, up_tx, (spans, check)));
            tl.mark(format_args!("spawned"));
            let mut hooks = Pipeline {
                net: self,
                parts: probes.chunks(piece * c).collect(),
                dsts: dst.chunks_mut(piece * c),
                jobs,
                ups,
                out,
                base,
                pending: None,
                at: 0,
                preloaded: pre.as_ref().map(|(ch, n)| (*n, ch.probes.device_ptr(&gpu.stream).0)),
                pre: pre.map(|p| p.0),
                e_max: Vec::new(),
            };
            let run = self.run_chunks(probes, (rule, mode, params), (piece, e_max, true), &mut hooks, (stats, tl));
            let run = run.and_then(|r| hooks.flush().map(|()| r));
            tl.mark(format_args!("flushed"));
            drop(hooks); // closes the job channel: the helper empties it and stops
            let moved = helper.join().unwrap_or_else(|_| Err(GpuError::Cuda("the copy thread panicked".into())));
            tl.mark(format_args!("joined"));
            // The helper's own error explains a schedule that stopped for want of it.
            match (run, moved) {
                (Ok(r), Ok(spans)) => {
                    tl.spans(spans);
                    Ok(r)
                }
                (_, Err(e)) | (Err(e), Ok(_)) => Err(e),
            }
        });
        profile_note(|| format!("pipelined retrieval in chunks of {piece} probes: {:.1} ms", ms_since(t0)));
        found
    }
}
