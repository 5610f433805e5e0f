//! The CPU driver: the core's update over all neurons (rayon), phase bits packed 64 iterations
//! per word, hit counts over all pairs every 64 iterations (the paper's 64-iteration buffer).

use neurobits_core::ocnn::{
    initial_state, phase_bit, phase_hits, transfer, update_neuron, update_neuron_lanes, update_neuron_sparse,
    EarlyStop, LaneColumn, Quot16, Quot8, Real, SyncMode,
};
use rayon::prelude::*;

use crate::device::Simd;

use super::points::Points;
use super::weights::{self, Dense, LaneRows, Sparse};

/// What a run leaves: the final state and the hit counts of the upper triangle.
pub struct Trajectory<T> {
    /// `x(T)` (at an early stop, `x` after the last observed iteration).
    pub state: Vec<T>,
    /// Hits of pair `(i, j)`, `i < j`, at [`tri`]`(n, i, j)`.
    pub hits: Vec<u32>,
    /// Iterations observed: `T`, or fewer where an early stop ended the run.
    pub observed: u32,
}

/// Called at each early-stop check (every [`EarlyStop::EVERY`] observed iterations before the
/// last) with the iterations observed so far and their hit counts; `true` ends the run there.
pub type Check<'a> = &'a mut dyn FnMut(u32, &[u32]) -> bool;

/// Index of pair `(i, j)`, `i < j`, in the packed upper triangle of an `n × n` matrix.
///
/// ```
/// use neurobits::ocnn::cpu::tri;
/// assert_eq!((tri(4, 0, 1), tri(4, 0, 3), tri(4, 1, 2), tri(4, 2, 3)), (0, 2, 3, 5));
/// ```
#[inline(always)]
pub fn tri(n: usize, i: usize, j: usize) -> usize {
    i * (2 * n - i - 1) / 2 + (j - i - 1)
}

/// Iterates `transient + iters` times from the seed's initial state and counts, for every pair,
/// the observed iterations on which it is synchronized.
pub fn run<T: Real + Send + Sync>(
    w: &impl Coupling<T>,
    seed: u64,
    transient: u32,
    iters: u32,
    mode: SyncMode<T>,
) -> Trajectory<T> {
    run_until(w, seed, transient, iters, mode, None)
}

/// [`run`] that asks `check` at every check point of [`EarlyStop`] (after whole 64-iteration
/// blocks, so the phase words are flushed and the hits complete) whether to stop there.
pub fn run_until<T: Real + Send + Sync>(
    w: &impl Coupling<T>,
    seed: u64,
    transient: u32,
    iters: u32,
    mode: SyncMode<T>,
    mut check: Option<Check<'_>>,
) -> Trajectory<T> {
    let n = w.n();
    let mut x: Vec<T> = (0..n as u64).map(|i| initial_state(seed, i)).collect();
    let mut next = vec![T::ZERO; n];
    let mut f = vec![T::ZERO; n];
    let mut hits = vec![0u32; w.hit_slots()];
    let mut words = vec![0u64; n];
    let mut filled = 0u32;
    // Decided once per run, not per neuron update.
    let simd = crate::device::simd_level();
    let step = |x: &[T], f: &mut [T], next: &mut [T]| {
        f.par_iter_mut().zip(x).for_each(|(f, &x)| *f = transfer(x));
        next.par_iter_mut().enumerate().for_each(|(i, y)| *y = w.update(simd, i, f));
    };
    // A cancelled call (crate::cancel: Ctrl-C in Python) stops between iterations; its caller
    // then returns the error, so the cut trajectory is never used.
    for _ in 0..transient {
        if crate::cancel::check().is_err() {
            break;
        }
        step(&x, &mut f, &mut next);
        std::mem::swap(&mut x, &mut next);
    }
    let mut observed = 0;
    while observed < iters {
        if crate::cancel::check().is_err() {
            break;
        }
        step(&x, &mut f, &mut next);
        match mode {
            SyncMode::Phase => {
                for ((w, &now), &before) in words.iter_mut().zip(&next).zip(&x) {
                    *w |= (phase_bit(now, before) as u64) << filled;
                }
                filled += 1;
                if filled == 64 {
                    flush(w, &mut hits, &words, 64);
                    words.iter_mut().for_each(|w| *w = 0);
                    filled = 0;
                }
            }
            SyncMode::Fragmentary(_) => count_close(w, &mut hits, &next, mode),
        }
        std::mem::swap(&mut x, &mut next);
        observed += 1;
        if EarlyStop::is_check(observed, iters) && check.as_mut().is_some_and(|c| c(observed, &hits)) {
            break;
        }
    }
    if filled > 0 {
        flush(w, &mut hits, &words, filled);
    }
    Trajectory { state: x, hits, observed }
}

/// [`run`] over the lane rows of a dense `J` with the narrowest columns that fit `n`
/// ([`LaneColumn`]): the dense rows' bits from their nonzero weights, streaming the fewest bytes.
pub fn run_lane_rows<T: Real + Send + Sync>(
    w: &Dense<T>,
    seed: u64,
    transient: u32,
    iters: u32,
    mode: SyncMode<T>,
) -> Trajectory<T> {
    if Quot8::fits(w.n) {
        run(&w.lane_rows_as::<Quot8>(), seed, transient, iters, mode)
    } else if Quot16::fits(w.n) {
        run(&w.lane_rows_as::<Quot16>(), seed, transient, iters, mode)
    } else {
        run(&w.lane_rows(), seed, transient, iters, mode)
    }
}

/// [`run_until`] over the lane rows of the dense coupling of `p` with scale `a`, built from the
/// points ([`weights::lane_rows`]: no `n × n` matrix) with the narrowest columns that fit `n`:
/// the same bits as [`run_lane_rows`] over [`weights::dense`]. Also returns the seconds spent
/// building the rows.
pub fn run_points<T: Real + Send + Sync>(
    p: &Points,
    a: f64,
    (seed, transient, iters, mode): (u64, u32, u32, SyncMode<T>),
    check: Option<Check<'_>>,
) -> anyhow::Result<(Trajectory<T>, f64)> {
    let t = std::time::Instant::now();
    if Quot8::fits(p.n) {
        let w = weights::lane_rows::<T, Quot8>(p, a, None)?;
        let built = t.elapsed().as_secs_f64();
        Ok((run_until(&w, seed, transient, iters, mode, check), built))
    } else if Quot16::fits(p.n) {
        let w = weights::lane_rows::<T, Quot16>(p, a, None)?;
        let built = t.elapsed().as_secs_f64();
        Ok((run_until(&w, seed, transient, iters, mode, check), built))
    } else {
        let w = weights::lane_rows::<T, u32>(p, a, None)?;
        let built = t.elapsed().as_secs_f64();
        Ok((run_until(&w, seed, transient, iters, mode, check), built))
    }
}

/// The coupling a run iterates over: dense (every pair) or sparse (`--cutoff`, the coupled pairs
/// only). It says how neuron `i` updates and which pairs have hit slots.
pub trait Coupling<T: Real>: Sync {
    /// Neurons.
    fn n(&self) -> usize;
    /// Neuron `i`'s next state from the transfer values `f` (the core's update of its row).
    fn update(&self, simd: Simd, i: usize, f: &[T]) -> T;
    /// Hit slots: pairs counted for synchronization (by default every pair, `i < j`, in
    /// [`tri`] order).
    fn hit_slots(&self) -> usize {
        self.n() * (self.n() - 1) / 2
    }
    /// Row `i`'s counted pairs: `(i, partner(i, k))` for its `k`-th slot.
    fn partner(&self, i: usize, k: usize) -> usize {
        i + 1 + k
    }
    /// Slots of row `i`, in order (the hit vector is these rows one after the other).
    fn row_slots(&self, i: usize) -> usize {
        self.n() - 1 - i
    }
}

impl<T: Real + Send + Sync> Coupling<T> for Dense<T> {
    fn n(&self) -> usize {
        self.n
    }
    fn update(&self, simd: Simd, i: usize, f: &[T]) -> T {
        let row = &self.j[i * self.n..(i + 1) * self.n];
        #[cfg(target_arch = "x86_64")]
        if simd >= Simd::Avx2 {
            // SAFETY: the level is AVX2 or more only where the CPU has AVX2 (crate::device::simd_level).
            return unsafe { dense_avx2(row, self.norm[i], f) };
        }
        let _ = simd;
        update_neuron(row, self.norm[i], f)
    }
}

impl<T: Real + Send + Sync, C: LaneColumn> Coupling<T> for LaneRows<T, C> {
    fn n(&self) -> usize {
        self.n
    }
    fn update(&self, simd: Simd, i: usize, f: &[T]) -> T {
        let (s, e) = (self.ptr[i] as usize, self.ptr[i + 1] as usize);
        let (cols, vals) = (&self.cols[s..e], &self.vals[s..e]);
        #[cfg(target_arch = "x86_64")]
        if simd >= Simd::Avx512 {
            // SAFETY: the level is AVX-512 only where the CPU has it (crate::device::simd_level).
            return unsafe { lanes_avx512(cols, vals, self.norm[i], f) };
        } else if simd >= Simd::Avx2 {
            // SAFETY: as above, for AVX2.
            return unsafe { lanes_avx2(cols, vals, self.norm[i], f) };
        }
        let _ = simd;
        update_neuron_lanes(cols, vals, self.norm[i], f)
    }
    // Every pair is counted (the default), as for the dense coupling the rows come from.
}

impl<T: Real + Send + Sync> Coupling<T> for Sparse<T> {
    fn n(&self) -> usize {
        self.n
    }
    fn update(&self, simd: Simd, i: usize, f: &[T]) -> T {
        let (cols, vals) = (&self.cols[self.ptr[i]..self.ptr[i + 1]], &self.vals[self.ptr[i]..self.ptr[i + 1]]);
        #[cfg(target_arch = "x86_64")]
        if simd >= Simd::Avx2 {
            // SAFETY: the level is AVX2 or more only where the CPU has AVX2 (crate::device::simd_level).
            return unsafe { sparse_avx2(cols, vals, self.norm[i], f) };
        }
        let _ = simd;
        update_neuron_sparse(cols, vals, self.norm[i], f)
    }
    fn hit_slots(&self) -> usize {
        self.hit_ptr[self.n]
    }
    fn partner(&self, i: usize, k: usize) -> usize {
        self.cols[self.upper[i] + k] as usize
    }
    fn row_slots(&self, i: usize) -> usize {
        self.hit_ptr[i + 1] - self.hit_ptr[i]
    }
}

/// The core's dense update compiled for AVX2 (chosen when [`crate::device::simd`]): the release
/// binary targets baseline x86-64. Same IEEE operations in the same order, so the same bits; AVX2
/// only widens the 32 lanes' adds from 4 to 8 per instruction. No FMA is enabled.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dense_avx2<T: Real>(row: &[T], norm: T, f: &[T]) -> T {
    update_neuron(row, norm, f)
}

/// The core's lane-row update compiled for AVX2 (as [`dense_avx2`]).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2<T: Real, C: LaneColumn>(cols: &[C], vals: &[T], norm: T, f: &[T]) -> T {
    update_neuron_lanes(cols, vals, norm, f)
}

/// The core's lane-row update compiled for AVX-512 (gathers of sixteen transfer values).
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn lanes_avx512<T: Real, C: LaneColumn>(cols: &[C], vals: &[T], norm: T, f: &[T]) -> T {
    update_neuron_lanes(cols, vals, norm, f)
}

/// The core's sparse update compiled for AVX2 (as [`dense_avx2`]).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sparse_avx2<T: Real>(cols: &[u32], vals: &[T], norm: T, f: &[T]) -> T {
    update_neuron_sparse(cols, vals, norm, f)
}

/// Adds the agreements of `valid` packed phase bits to every counted pair.
fn flush<T: Real>(w: &impl Coupling<T>, hits: &mut [u32], words: &[u64], valid: u32) {
    row_chunks(w, hits).for_each(|(i, row)| {
        for (k, h) in row.iter_mut().enumerate() {
            *h += phase_hits(words[i], words[w.partner(i, k)], valid);
        }
    });
}

/// Adds one iteration of fragmentary synchronization to every counted pair.
fn count_close<T: Real + Send + Sync>(w: &impl Coupling<T>, hits: &mut [u32], x: &[T], mode: SyncMode<T>) {
    row_chunks(w, hits).for_each(|(i, row)| {
        for (k, h) in row.iter_mut().enumerate() {
            *h += mode.close(x[i], x[w.partner(i, k)]) as u32;
        }
    });
}

/// The hit vector's rows `(i, hits of row i's pairs)`, in parallel.
fn row_chunks<'h, T: Real>(
    w: &impl Coupling<T>,
    hits: &'h mut [u32],
) -> impl ParallelIterator<Item = (usize, &'h mut [u32])> {
    let n = w.n();
    let mut rows = Vec::with_capacity(n);
    let mut rest = hits;
    for i in 0..n {
        let (row, tail) = rest.split_at_mut(w.row_slots(i));
        if !row.is_empty() {
            rows.push((i, row));
        }
        rest = tail;
    }
    rows.into_par_iter()
}

/// The upper triangle (`i < j`, [`tri`] order) of a full row-major `n × n` matrix.
///
/// ```
/// let full = [9, 1, 2, 1, 9, 3, 2, 3, 9];
/// assert_eq!(neurobits::ocnn::cpu::upper_triangle(3, &full), [1, 2, 3]);
/// ```
pub fn upper_triangle(n: usize, full: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        out.extend_from_slice(&full[i * n + i + 1..(i + 1) * n]);
    }
    out
}
