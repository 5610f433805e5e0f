//! `NEUROBITS_GPU_TIMELINE=1`: where one call's time goes on one GPU, without changing the run.
//!
//! `NEUROBITS_GPU_PROFILE` synchronises the stream to time host phases, which moves the very
//! gaps it is meant to find. The timeline adds no synchronisation: the host side is a list of
//! `Instant`s taken at each step of the call (relative to its start), the device side the
//! kernel timer's events (recorded anyway) and, in the pipeline, events around each copy on the
//! copy stream, all read with `cuEventElapsedTime` after the call has finished, against an
//! origin event recorded on the main stream when the call starts (the GPU is idle then, so the
//! device times are close to the host's). Launches more than [`GAP_MS`] after the previous one
//! ended are flagged: the device waited for the host there. A finished call's timeline waits in
//! a list until the public entry point has taken its end time ([`flush`]), so reading the events
//! and printing (one block per call and GPU, each in one write) stay outside the times that
//! call reports.
//!
//! Unset (or `0`): nothing is recorded, nothing printed; every method is a branch on `None`.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent;
use neurobits_core::kernel::Kernel;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::launch::KernelTimer;
use crate::{Gpu, GpuError};

/// A launch that starts this long after the previous one ended is flagged as a gap.
pub(crate) const GAP_MS: f64 = 0.05;

/// Whether `NEUROBITS_GPU_TIMELINE` is set to something other than empty or `0`.
pub(crate) fn timeline_on() -> bool {
    enabled(std::env::var_os("NEUROBITS_GPU_TIMELINE").as_deref())
}

/// Whether a value of `NEUROBITS_GPU_TIMELINE` turns the timeline on.
fn enabled(v: Option<&std::ffi::OsStr>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

/// A labelled span of device work between two events (e.g. a copy on the copy stream).
pub(crate) type Span = (String, CudaEvent, CudaEvent);

/// Records a timing event on `stream` (for [`Span`]s).
pub(crate) fn event(stream: &cudarc::driver::CudaStream) -> Result<CudaEvent, GpuError> {
    Ok(stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?)
}

/// The process clock the blocks' start times are given on: blocks of several GPUs' parts of one
/// batch line up on it.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Milliseconds from the process clock's zero to `t`.
pub(crate) fn clock_ms(t: Instant) -> f64 {
    t.saturating_duration_since(epoch()).as_secs_f64() * 1e3
}

/// What waits to be printed: finished calls' timelines and notes, in order.
enum Entry {
    Call(Box<Inner>),
    Note(String),
}

static PENDING: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queues `note()` for [`flush`], prefixed like the blocks, when [`timeline_on`].
pub(crate) fn note(note: impl FnOnce() -> String) {
    if timeline_on() {
        pending().push(Entry::Note(note()));
    }
}

/// Prints what finished calls queued ([`Timeline::finish`], [`note`]) on stderr: called by the
/// public entry points after they have taken their end time.
pub(crate) fn flush() {
    let entries = std::mem::take(&mut *pending());
    for e in entries {
        match e {
            Entry::Call(t) => match t.render() {
                Ok(s) => eprint!("{s}"),
                Err(e) => eprintln!("[timeline] GPU {} call {}: events unreadable: {e}", t.ordinal, t.call),
            },
            Entry::Note(n) => eprintln!("[timeline] {n}"),
        }
    }
}

/// One call's timeline on one GPU (empty unless [`timeline_on`]).
#[derive(Default)]
pub(crate) struct Timeline(Option<Box<Inner>>);

struct Inner {
    start: Instant,
    call: u64,
    ordinal: usize,
    /// Whether cudarc inserts an event wait and record per buffer of each launch (once a
    /// second stream exists on the context): host time per launch the gaps may show.
    tracked: bool,
    what: String,
    host: Vec<(String, f64)>,
    /// Recorded on the main stream at the start: the device times' zero.
    origin: CudaEvent,
    kernels: Vec<(Kernel, CudaEvent, CudaEvent)>,
    copies: Vec<Span>,
}

impl Timeline {
    /// Starts a call's timeline on `gpu` when [`timeline_on`] (`what()` heads its block).
    pub(crate) fn start(gpu: &Gpu, what: impl FnOnce() -> String) -> Result<Self, GpuError> {
        if !timeline_on() {
            return Ok(Timeline(None));
        }
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let _ = epoch();
        let start = Instant::now();
        let origin = event(&gpu.stream)?;
        Ok(Timeline(Some(Box::new(Inner {
            start,
            call: CALLS.fetch_add(1, Ordering::Relaxed),
            ordinal: gpu.ctx.ordinal(),
            tracked: gpu.ctx.is_managing_stream_synchronization(),
            what: what(),
            host: Vec::with_capacity(64),
            origin,
            kernels: Vec::new(),
            copies: Vec::new(),
        }))))
    }

    /// Whether this call is recorded.
    pub(crate) fn on(&self) -> bool {
        self.0.is_some()
    }

    /// A host step, at the time of the call.
    pub(crate) fn mark(&mut self, what: std::fmt::Arguments) {
        if let Some(t) = &mut self.0 {
            let ms = t.start.elapsed().as_secs_f64() * 1e3;
            t.host.push((what.to_string(), ms));
        }
    }

    /// Takes the kernel timer's events (after its `total_ms`).
    pub(crate) fn kernels(&mut self, timer: &mut KernelTimer) {
        if let Some(t) = &mut self.0 {
            t.kernels.extend(timer.take_events());
        }
    }

    /// Adds device spans recorded elsewhere (the copy stream's).
    pub(crate) fn spans(&mut self, spans: Vec<Span>) {
        if let Some(t) = &mut self.0 {
            t.copies.extend(spans);
        }
    }

    /// Queues the block for [`flush`]: call it after the call's last synchronisation (every
    /// event has then passed, so reading them waits for nothing).
    pub(crate) fn finish(self) {
        if let Some(t) = self.0 {
            pending().push(Entry::Call(t));
        }
    }
}

/// Appends `items` to `out` as lines of at most about 110 characters after `indent`.
fn wrap(out: &mut String, indent: &str, items: impl IntoIterator<Item = String>) {
    let mut line = String::new();
    for it in items {
        if !line.is_empty() && line.len() + it.len() + 3 > 110 {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(" · ");
        }
        line.push_str(&it);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
}

impl Inner {
    /// Milliseconds from the origin to `e`.
    fn at(&self, e: &CudaEvent) -> Result<f64, GpuError> {
        Ok(self.origin.elapsed_ms(e)? as f64)
    }

    fn render(&self) -> Result<String, GpuError> {
        let mut s = String::new();
        let began = clock_ms(self.start);
        let total = self.host.last().map_or(0.0, |h| h.1);
        let _ = writeln!(
            s,
            "[timeline] GPU {} call {}: {}; cudarc event tracking {}; began at {began:.3} ms on the process clock, \
             host steps in ms from then:",
            self.ordinal,
            self.call,
            self.what,
            if self.tracked { "on" } else { "off" }
        );
        wrap(&mut s, "  host ", self.host.iter().map(|(w, ms)| format!("{w} {ms:.3}")));
        let mut spans = Vec::with_capacity(self.kernels.len());
        for (k, a, b) in &self.kernels {
            spans.push((k.name().trim_start_matches("gbnn_"), self.at(a)?, self.at(b)?));
        }
        let (mut busy, mut gaps, mut gap_ms, mut prev_end) = (0.0, 0, 0.0, None::<f64>);
        let mut items = Vec::with_capacity(spans.len());
        for &(name, a, b) in &spans {
            busy += b - a;
            if let Some(e) = prev_end {
                if a - e > GAP_MS {
                    gaps += 1;
                    gap_ms += a - e;
                    items.push(format!("[GAP {:.3}]", a - e));
                }
            }
            items.push(format!("{name} {a:.3}+{:.3}", b - a));
            prev_end = Some(b);
        }
        let _ = writeln!(s, "  gpu  launches as start+duration, ms from the origin event (host ≈ 0):");
        wrap(&mut s, "       ", items);
        if !self.copies.is_empty() {
            let mut items = Vec::with_capacity(self.copies.len());
            for (w, a, b) in &self.copies {
                let (a, b) = (self.at(a)?, self.at(b)?);
                items.push(format!("{w} {a:.3}+{:.3}", b - a));
            }
            let _ = writeln!(s, "  copy stream:");
            wrap(&mut s, "       ", items);
        }
        let first = spans.first().map_or(0.0, |f| f.1);
        let last = spans.last().map_or(0.0, |l| l.2);
        let _ = writeln!(
            s,
            "  sum: {} launches {busy:.3} ms from {first:.3} to {last:.3} ms; {gaps} gaps > {:.0} µs: {gap_ms:.3} ms; \
             host {total:.3} ms",
            spans.len(),
            GAP_MS * 1e3
        );
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_keep_every_item_in_order_and_stay_short() {
        let items: Vec<String> = (0..40).map(|i| format!("u{i}.1 {:.3}", i as f64 * 0.123)).collect();
        let mut out = String::new();
        wrap(&mut out, "  host ", items.clone());
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 3, "{out}");
        assert!(lines.iter().all(|l| l.starts_with("  host ") && l.chars().count() <= 7 + 110), "{out}");
        let back: Vec<String> =
            lines.iter().flat_map(|l| l["  host ".len()..].split(" · ").map(str::to_string)).collect();
        assert_eq!(back, items);
    }

    #[test]
    fn set_means_on_unless_empty_or_zero() {
        use std::ffi::OsStr;
        assert!(enabled(Some(OsStr::new("1"))) && enabled(Some(OsStr::new("yes"))));
        assert!(!enabled(Some(OsStr::new("0"))) && !enabled(Some(OsStr::new(""))) && !enabled(None));
    }
}
