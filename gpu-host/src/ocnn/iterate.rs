//! The iteration loop shared by the dense and sparse OCNN runs on the GPU.

use cudarc::driver::CudaSlice;
use neurobits_core::ocnn::{initial_state, EarlyStop, SyncMode};
use std::time::Instant;

use crate::launch::{ms_since, profile_note, KernelTimer};
use crate::{Gpu, GpuError};

use super::{GpuReal, OcnnRun};

type Run<T> = (u64, u32, u32, SyncMode<T>);

/// Blocks of 64 observed iterations whose phase words a dense run keeps before adding them to
/// the `n × n` hit matrix: each flush reads and writes every count (1 GB at 16 000 neurons), so
/// 16 flushes of one block took 14.7 ms of an H200's 66 ms of kernels at T = 1 000; one flush
/// of 16 blocks reads 16 words per neuron instead (2 MB at 16 000). An early stop flushes every
/// block (its checks read complete counts).
pub(super) const DENSE_BLOCKS: usize = 16;

/// The early stop's question at each of its check points (the core's `EarlyStop::is_check`):
/// the iterations observed so far and the hit counts downloaded (the `slots` counts; dense: the
/// full `n × n` matrix); `true` ends the run there.
pub type Check<'a> = &'a mut dyn FnMut(u32, &[u32]) -> bool;

/// The iteration loop shared by the dense and sparse runs: transfer, `step`, then per observed
/// iteration the phase bits (every 64 iterations `flush`) or `frag`; returns the final state and
/// the `slots` hit counts (on the device). With `check`, asks it at each early-stop check point.
/// With `from_states`, no transfer kernel runs: `step` gets the states and applies the transfer
/// itself (the core's `lane_sum_of_states`), else it gets the transfer values. Phase words are
/// kept for up to `blocks` blocks of 64 iterations (one without a `check`) before `flush` adds
/// them (`flush(t, (blocks held, valid bits of the last), words, hits)`).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn iterate<T: GpuReal>(
    g: &Gpu,
    n: u32,
    slots: usize,
    (seed, transient, iters, mode): Run<T>,
    (mut check, from_states, blocks): (Option<Check<'_>>, bool, usize),
    mut step: impl FnMut(&mut KernelTimer, &CudaSlice<T>, &mut CudaSlice<T>) -> Result<(), GpuError>,
    mut flush: impl FnMut(&mut KernelTimer, (u32, u32), &CudaSlice<u64>, &mut CudaSlice<u32>) -> Result<(), GpuError>,
    mut frag: impl FnMut(&mut KernelTimer, T, &CudaSlice<T>, &mut CudaSlice<u32>) -> Result<(), GpuError>,
) -> Result<Iterated<T>, GpuError> {
    let start = Instant::now();
    let st = &g.stream;
    let x0: Vec<T> = (0..n as u64).map(|i| initial_state(seed, i)).collect();
    let mut x = st.clone_htod(&x0)?;
    let mut next = st.alloc_zeros::<T>(n as usize)?;
    let mut f = st.alloc_zeros::<T>(n as usize)?;
    let blocks = if check.is_some() { 1 } else { blocks.max(1) };
    let mut words = st.alloc_zeros::<u64>(n as usize * blocks)?;
    let mut hits = st.alloc_zeros::<u32>(slots.max(1))?;
    let mut t = KernelTimer::default();
    let mut observed = iters;
    for it in 0..transient + iters {
        if from_states {
            step(&mut t, &x, &mut next)?;
        } else {
            // SAFETY: x and f hold n values.
            unsafe { T::transfer(g, &mut t, n, &x, &mut f)? };
            step(&mut t, &f, &mut next)?;
        }
        if it >= transient {
            let o = it - transient;
            match mode {
                SyncMode::Phase => {
                    let block = (o / 64) as usize % blocks;
                    // SAFETY: x and next hold n values, words n per block.
                    unsafe { T::phase_bits(g, &mut t, (n, o % 64, block), &x, &next, &mut words)? };
                    if (o % 64 == 63 && block + 1 == blocks) || o + 1 == iters {
                        flush(&mut t, (block as u32 + 1, o % 64 + 1), &words, &mut hits)?;
                    }
                }
                SyncMode::Fragmentary(eps) => frag(&mut t, eps, &next, &mut hits)?,
            }
        }
        std::mem::swap(&mut x, &mut next);
        if let (Some(c), Some(o)) = (check.as_mut(), (it + 1).checked_sub(transient)) {
            if EarlyStop::is_check(o, iters) {
                let mut now = st.clone_dtoh(&hits)?;
                now.truncate(slots);
                if c(o, &now) {
                    observed = o;
                    break;
                }
            }
        }
    }
    let state = st.clone_dtoh(&x)?;
    let kernel_ms = t.total_ms()?;
    profile_note(|| {
        format!("OCNN iterations until the state is back: {:.1} ms ({kernel_ms:.1} ms of kernels)", ms_since(start))
    });
    Ok(Iterated { state, hits, slots, kernel_ms, start, observed })
}

/// What [`iterate`] leaves: the final state, the hit counts still on the device.
pub(super) struct Iterated<T> {
    pub(super) state: Vec<T>,
    pub(super) hits: CudaSlice<u32>,
    pub(super) slots: usize,
    pub(super) kernel_ms: f64,
    pub(super) start: Instant,
    /// Iterations observed (fewer than asked at an early stop).
    pub(super) observed: u32,
}

impl<T> Iterated<T> {
    /// The hits downloaded: the run's outcome.
    pub(super) fn download(self, g: &Gpu) -> Result<OcnnRun<T>, GpuError> {
        let t = Instant::now();
        let mut hits = g.stream.clone_dtoh(&self.hits)?;
        hits.truncate(self.slots);
        profile_note(|| format!("OCNN hits download: {:.1} ms", ms_since(t)));
        let total_ms = self.start.elapsed().as_secs_f64() * 1e3;
        Ok(OcnnRun { state: self.state, hits, kernel_ms: self.kernel_ms, total_ms, observed: self.observed })
    }
}
