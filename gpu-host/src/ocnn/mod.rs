//! The OCNN on the GPU: the weights uploaded once ([`OcnnGpu`]), then any number of runs
//! (seeds), each iterating with a warp per neuron and counting synchronization on the device.

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::{initial_state, Real, SyncMode};
use std::time::Instant;

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// How the update is spread over GPU threads (the paper's three decompositions). All three add
/// the same terms in the same lanes32 order, so they give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Decomposition {
    /// X-threads: a warp per neuron, lane `l` of the warp is lane `l` of the sum (the default:
    /// coalesced row reads, the butterfly by warp shuffles).
    #[default]
    XThreads,
    /// Thread-per-neuron: one thread runs all 32 lanes over column `i` of the symmetric `J`.
    ThreadPerNeuron,
    /// Y-threads: 8 threads per neuron, 4 lanes each, combined in a second, ordered pass.
    YThreads,
}

/// A working type the kernels exist for (`f32`, `f64`).
pub trait GpuReal: Real + DeviceRepr + ValidAsZeroBits + Default + Unpin {
    /// Launches `f = transfer(x)`.
    ///
    /// # Safety
    /// `x` and `f` hold `n` values on `gpu`'s stream.
    unsafe fn transfer(
        gpu: &Gpu,
        t: &mut KernelTimer,
        n: u32,
        x: &CudaSlice<Self>,
        f: &mut CudaSlice<Self>,
    ) -> Result<(), GpuError>;
    /// Launches one update with decomposition `d` (`partial`: `32·n` scratch for Y-threads).
    ///
    /// # Safety
    /// `j` holds `n²` weights, `partial` `32·n` values, the others `n` values, on `gpu`'s stream.
    #[allow(clippy::too_many_arguments)]
    unsafe fn step(
        gpu: &Gpu,
        t: &mut KernelTimer,
        d: Decomposition,
        n: u32,
        j: &CudaSlice<Self>,
        norm: &CudaSlice<Self>,
        f: &CudaSlice<Self>,
        partial: &mut CudaSlice<Self>,
        next: &mut CudaSlice<Self>,
    ) -> Result<(), GpuError>;
    /// Launches the phase bits of one iteration.
    ///
    /// # Safety
    /// `before`, `now`, `words` hold `n` elements.
    #[allow(clippy::too_many_arguments)]
    unsafe fn phase_bits(
        gpu: &Gpu,
        t: &mut KernelTimer,
        n: u32,
        bit: u32,
        before: &CudaSlice<Self>,
        now: &CudaSlice<Self>,
        words: &mut CudaSlice<u64>,
    ) -> Result<(), GpuError>;
    /// Launches one iteration of fragmentary counts.
    ///
    /// # Safety
    /// `x` holds `n` values, `hits` `n²` counts.
    unsafe fn fragmentary(
        gpu: &Gpu,
        t: &mut KernelTimer,
        n: u32,
        eps: Self,
        x: &CudaSlice<Self>,
        hits: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError>;
}

macro_rules! gpu_real {
    ($t:ty, $Transfer:ident, $Step:ident, $Per:ident, $Lanes:ident, $Combine:ident, $Bits:ident, $Frag:ident) => {
        impl GpuReal for $t {
            unsafe fn transfer(
                gpu: &Gpu,
                t: &mut KernelTimer,
                n: u32,
                x: &CudaSlice<Self>,
                f: &mut CudaSlice<Self>,
            ) -> Result<(), GpuError> {
                unsafe { launch(gpu, t, n as u64, k::$Transfer { n, x: rd(gpu, x), f: wr(gpu, f) }) }
            }
            unsafe fn step(
                gpu: &Gpu,
                t: &mut KernelTimer,
                d: Decomposition,
                n: u32,
                j: &CudaSlice<Self>,
                norm: &CudaSlice<Self>,
                f: &CudaSlice<Self>,
                partial: &mut CudaSlice<Self>,
                next: &mut CudaSlice<Self>,
            ) -> Result<(), GpuError> {
                let (jp, normp, fp) = (rd(gpu, j), rd(gpu, norm), rd(gpu, f));
                match d {
                    Decomposition::XThreads => {
                        let a = k::$Step { n, j: jp, norm: normp, f: fp, next: wr(gpu, next) };
                        unsafe { launch(gpu, t, n as u64 * 32, a) }
                    }
                    Decomposition::ThreadPerNeuron => {
                        let a = k::$Per { n, j: jp, norm: normp, f: fp, next: wr(gpu, next) };
                        unsafe { launch(gpu, t, n as u64, a) }
                    }
                    Decomposition::YThreads => {
                        let a = k::$Lanes { n, j: jp, f: fp, partial: wr(gpu, partial) };
                        unsafe { launch(gpu, t, n as u64 * 8, a)? };
                        let a = k::$Combine { n, partial: rd(gpu, partial), norm: normp, next: wr(gpu, next) };
                        unsafe { launch(gpu, t, n as u64, a) }
                    }
                }
            }
            unsafe fn phase_bits(
                gpu: &Gpu,
                t: &mut KernelTimer,
                n: u32,
                bit: u32,
                before: &CudaSlice<Self>,
                now: &CudaSlice<Self>,
                words: &mut CudaSlice<u64>,
            ) -> Result<(), GpuError> {
                let a = k::$Bits { n, bit, before: rd(gpu, before), now: rd(gpu, now), words: wr(gpu, words) };
                unsafe { launch(gpu, t, n as u64, a) }
            }
            unsafe fn fragmentary(
                gpu: &Gpu,
                t: &mut KernelTimer,
                n: u32,
                eps: Self,
                x: &CudaSlice<Self>,
                hits: &mut CudaSlice<u32>,
            ) -> Result<(), GpuError> {
                let a = k::$Frag { n, eps, x: rd(gpu, x), hits: wr(gpu, hits) };
                unsafe { launch(gpu, t, n as u64 * n as u64, a) }
            }
        }
    };
}
gpu_real!(f32, TransferF32, StepF32, StepPerNeuronF32, LanesYF32, CombineYF32, PhaseBitsF32, FragmentaryHitsF32);
gpu_real!(f64, TransferF64, StepF64, StepPerNeuronF64, LanesYF64, CombineYF64, PhaseBitsF64, FragmentaryHitsF64);

/// Dense weights and row norms resident on a GPU.
pub struct OcnnGpu<'g, T> {
    gpu: &'g Gpu,
    n: u32,
    j: CudaSlice<T>,
    norm: CudaSlice<T>,
}

/// The outcome of a GPU run.
pub struct OcnnRun<T> {
    /// `x(T)`.
    pub state: Vec<T>,
    /// The full `n × n` hit matrix, row-major (diagonal = observed iterations).
    pub hits: Vec<u32>,
    /// GPU time inside the kernels.
    pub kernel_ms: f64,
    /// Wall time of the run (initial state upload to results in host memory).
    pub total_ms: f64,
}

impl Gpu {
    /// Uploads the dense weights (`n × n`, row-major) and the row norms once.
    pub fn ocnn<T: GpuReal>(&self, n: usize, j: &[T], norm: &[T]) -> Result<OcnnGpu<'_, T>, GpuError> {
        if j.len() != n * n || norm.len() != n || n > u32::MAX as usize {
            return Err(GpuError::Input(format!(
                "weights of {} values and {} norms are not a {n}-neuron network",
                j.len(),
                norm.len()
            )));
        }
        let size = core::mem::size_of::<T>() as u64;
        // Weights, norms, three state vectors, the words and the hit matrix.
        self.ensure_fits((n as u64 * n as u64) * (size + 4) + n as u64 * (4 * size + 8))?;
        Ok(OcnnGpu { gpu: self, n: n as u32, j: self.stream.clone_htod(j)?, norm: self.stream.clone_htod(norm)? })
    }
}

impl<T: GpuReal> OcnnGpu<'_, T> {
    /// Iterates `transient + iters` times from the seed's initial state (the core's
    /// `initial_state`) and counts synchronization over the observed iterations.
    pub fn run(
        &self,
        seed: u64,
        transient: u32,
        iters: u32,
        mode: SyncMode<T>,
        d: Decomposition,
    ) -> Result<OcnnRun<T>, GpuError> {
        let start = Instant::now();
        let (g, n) = (self.gpu, self.n);
        let st = &g.stream;
        let x0: Vec<T> = (0..n as u64).map(|i| initial_state(seed, i)).collect();
        let mut x = st.clone_htod(&x0)?;
        let mut next = st.alloc_zeros::<T>(n as usize)?;
        let mut f = st.alloc_zeros::<T>(n as usize)?;
        let mut words = st.alloc_zeros::<u64>(n as usize)?;
        let mut hits = st.alloc_zeros::<u32>(n as usize * n as usize)?;
        let mut partial = st.alloc_zeros::<T>(if d == Decomposition::YThreads { 32 * n as usize } else { 1 })?;
        let mut t = KernelTimer::default();
        // SAFETY (all launches): every buffer was sized above for n neurons (hits: n²).
        for it in 0..transient + iters {
            unsafe {
                T::transfer(g, &mut t, n, &x, &mut f)?;
                T::step(g, &mut t, d, n, &self.j, &self.norm, &f, &mut partial, &mut next)?;
            }
            if it >= transient {
                let o = it - transient;
                match mode {
                    SyncMode::Phase => {
                        unsafe { T::phase_bits(g, &mut t, n, o % 64, &x, &next, &mut words)? };
                        if o % 64 == 63 || o + 1 == iters {
                            let a = k::PhaseHits { n, valid: o % 64 + 1, words: rd(g, &words), hits: wr(g, &mut hits) };
                            unsafe { launch(g, &mut t, n as u64 * n as u64, a)? };
                        }
                    }
                    SyncMode::Fragmentary(eps) => unsafe { T::fragmentary(g, &mut t, n, eps, &next, &mut hits)? },
                }
            }
            std::mem::swap(&mut x, &mut next);
        }
        let state = st.clone_dtoh(&x)?;
        let mut hits = st.clone_dtoh(&hits)?;
        if let SyncMode::Fragmentary(_) = mode {
            // |x − x| < ε on every iteration: the diagonal counts them all, as in phase mode.
            (0..n as usize).for_each(|i| hits[i * n as usize + i] = iters);
        }
        let kernel_ms = t.total_ms()?;
        Ok(OcnnRun { state, hits, kernel_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }
}
