//! The OCNN on the GPU: the weights uploaded once ([`OcnnGpu`]), then any number of runs
//! (seeds), each iterating with a warp per neuron and counting synchronization on the device.

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::{forest_pair, initial_state, Real, SyncMode, FOREST_MAX_HITS, FOREST_MAX_N};
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
    /// X-threads over each lane's nonzero weights only ("lane rows", see
    /// [`OcnnGpu::with_lane_rows_built`]): a zero term leaves a lane unchanged (a lane that starts at
    /// `+0.0` never holds `−0.0`), so the same bits, reading only the weights that did not round
    /// to zero — most of them on a large set. Synchronization still counts every pair.
    LaneRows,
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
    /// One update over rows of weights (a warp per neuron), laid out as `layout` says.
    ///
    /// # Safety
    /// `c` holds `c.n` rows of that layout (checked where it was uploaded); `f` and `next` hold
    /// `c.n` values.
    unsafe fn step_rows(
        gpu: &Gpu,
        t: &mut KernelTimer,
        layout: RowLayout,
        c: &RowsDev<Self>,
        f: &CudaSlice<Self>,
        next: &mut CudaSlice<Self>,
    ) -> Result<(), GpuError>;
    /// Builds the lane rows of the dense `j` on the device (see [`OcnnGpu::with_lane_rows_built`]).
    ///
    /// # Safety
    /// `j` holds `n²` weights on `gpu`'s stream.
    unsafe fn build_lane_rows(gpu: &Gpu, n: u32, j: &CudaSlice<Self>) -> Result<RowsParts<Self>, GpuError>;
    /// One iteration of fragmentary synchronization on the coupled pairs.
    ///
    /// # Safety
    /// `x` holds `c.n` values and `hits` `c`'s slots.
    unsafe fn fragmentary_sparse(
        gpu: &Gpu,
        t: &mut KernelTimer,
        c: &SparseDev<Self>,
        eps: Self,
        x: &CudaSlice<Self>,
        hits: &mut CudaSlice<u32>,
    ) -> Result<(), GpuError>;
}

macro_rules! gpu_real {
    ($t:ty, $Transfer:ident, $Step:ident, $Per:ident, $Lanes:ident, $Combine:ident, $Bits:ident, $Frag:ident,
     $StepSparse:ident, $FragSparse:ident, $StepLaneRows:ident, $Width:ident, $Fill:ident) => {
        impl GpuReal for $t {
            unsafe fn build_lane_rows(gpu: &Gpu, n: u32, j: &CudaSlice<Self>) -> Result<RowsParts<Self>, GpuError> {
                let mut t = KernelTimer::default();
                let threads = n as u64 * 32;
                let mut width = gpu.stream.alloc_zeros::<u32>(n as usize)?;
                let args = k::$Width { n, j: rd(gpu, j), width: wr(gpu, &mut width) };
                // SAFETY: `j` holds n² weights, `width` n; a warp per row.
                unsafe { launch(gpu, &mut t, threads, args) }?;
                let mut ptr = Vec::with_capacity(n as usize + 1);
                ptr.push(0u64);
                for w in gpu.stream.clone_dtoh(&width)? {
                    ptr.push(ptr[ptr.len() - 1] + 32 * w as u64);
                }
                let total = ptr[n as usize];
                gpu.ensure_fits(total * (4 + core::mem::size_of::<Self>() as u64) + ptr.len() as u64 * 8)?;
                let ptr = gpu.stream.clone_htod(&ptr)?;
                let (mut cols, mut vals) =
                    (gpu.stream.alloc_zeros::<u32>(total as usize)?, gpu.stream.alloc_zeros::<Self>(total as usize)?);
                let args = k::$Fill {
                    n,
                    j: rd(gpu, j),
                    ptr: rd(gpu, &ptr),
                    cols: wr(gpu, &mut cols),
                    vals: wr(gpu, &mut vals),
                };
                // SAFETY: the rows from the widths hold every lane's nonzero weights; a warp per row.
                unsafe { launch(gpu, &mut t, threads, args) }?;
                Ok((ptr, cols, vals))
            }
            unsafe fn step_rows(
                gpu: &Gpu,
                t: &mut KernelTimer,
                layout: RowLayout,
                c: &RowsDev<Self>,
                f: &CudaSlice<Self>,
                next: &mut CudaSlice<Self>,
            ) -> Result<(), GpuError> {
                // The two kernels take the same arguments.
                macro_rules! args {
                    ($S:ident) => {
                        k::$S {
                            n: c.n,
                            ptr: rd(gpu, &c.ptr),
                            cols: rd(gpu, &c.cols),
                            vals: rd(gpu, &c.vals),
                            norm: rd(gpu, &c.norm),
                            f: rd(gpu, f),
                            next: wr(gpu, next),
                        }
                    };
                }
                let threads = c.n as u64 * 32;
                match layout {
                    RowLayout::Columns => unsafe { launch(gpu, t, threads, args!($StepSparse)) },
                    RowLayout::Lanes => unsafe { launch(gpu, t, threads, args!($StepLaneRows)) },
                }
            }
            unsafe fn fragmentary_sparse(
                gpu: &Gpu,
                t: &mut KernelTimer,
                c: &SparseDev<Self>,
                eps: Self,
                x: &CudaSlice<Self>,
                hits: &mut CudaSlice<u32>,
            ) -> Result<(), GpuError> {
                let a = k::$FragSparse {
                    n: c.rows.n,
                    eps,
                    ptr: rd(gpu, &c.rows.ptr),
                    upper: rd(gpu, &c.upper),
                    hit_ptr: rd(gpu, &c.hit_ptr),
                    cols: rd(gpu, &c.rows.cols),
                    x: rd(gpu, x),
                    hits: wr(gpu, hits),
                };
                unsafe { launch(gpu, t, c.rows.n as u64, a) }
            }
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
                    Decomposition::LaneRows => Err(GpuError::Input("lane rows need with_lane_rows_built".into())),
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
gpu_real!(
    f32,
    TransferF32,
    StepF32,
    StepPerNeuronF32,
    LanesYF32,
    CombineYF32,
    PhaseBitsF32,
    FragmentaryHitsF32,
    StepSparseF32,
    SparseFragmentaryHitsF32,
    StepLaneRowsF32,
    LaneWidthF32,
    LaneFillF32
);
gpu_real!(
    f64,
    TransferF64,
    StepF64,
    StepPerNeuronF64,
    LanesYF64,
    CombineYF64,
    PhaseBitsF64,
    FragmentaryHitsF64,
    StepSparseF64,
    SparseFragmentaryHitsF64,
    StepLaneRowsF64,
    LaneWidthF64,
    LaneFillF64
);

/// Dense weights and row norms resident on a GPU (and, for [`Decomposition::LaneRows`], the
/// lane rows).
pub struct OcnnGpu<'g, T> {
    gpu: &'g Gpu,
    n: u32,
    j: CudaSlice<T>,
    norm: CudaSlice<T>,
    lane_rows: Option<RowsDev<T>>,
}

/// How the entries of a row of weights are laid out (see [`RowsDev`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLayout {
    /// CSR: the row's weights with their columns, ascending (the `--cutoff` coupling); lane `l`
    /// takes the columns `≡ l (mod 32)` (the core's `lane_sum_sparse`).
    Columns,
    /// Lane rows: entry `k·32 + l` is lane `l`'s `k`-th nonzero weight (see
    /// [`OcnnGpu::with_lane_rows_built`]); lane `l` takes entries `l, l + 32, …` (the core's
    /// `lane_sum`).
    Lanes,
}

/// Rows of weights downloaded: `ptr`, columns, weights.
pub type HostRows<T> = (Vec<u64>, Vec<u32>, Vec<T>);

/// Rows of weights on the device without their norms: `ptr`, columns, weights.
pub type RowsParts<T> = (CudaSlice<u64>, CudaSlice<u32>, CudaSlice<T>);

/// Rows of weights on the device: `ptr` (`n + 1` offsets), columns, weights, and the row norms.
pub struct RowsDev<T> {
    n: u32,
    ptr: CudaSlice<u64>,
    cols: CudaSlice<u32>,
    vals: CudaSlice<T>,
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
        let (j, norm) = (self.stream.clone_htod(j)?, self.stream.clone_htod(norm)?);
        Ok(OcnnGpu { gpu: self, n: n as u32, j, norm, lane_rows: None })
    }
}

impl<T: GpuReal> OcnnGpu<'_, T> {
    /// Adds the lane rows of the dense `J` for [`Decomposition::LaneRows`], built on the device
    /// from the resident `J` (two passes over it, a warp per row): row `i`'s entries are
    /// `ptr[i]..ptr[i + 1]` (a multiple of 32), entry `k·32 + l` the `k`-th nonzero weight of
    /// lane `l` — columns `≡ l (mod 32)`, ascending — then zero weights (column 0) to the row's
    /// width: the host's `Dense::lane_rows`, entry for entry, without a pass over `n²` weights on
    /// the host.
    pub fn with_lane_rows_built(mut self) -> Result<Self, GpuError> {
        // SAFETY: `j` holds n² weights (checked at upload).
        let (ptr, cols, vals) = unsafe { T::build_lane_rows(self.gpu, self.n, &self.j) }?;
        let norm = self.gpu.stream.clone_dtod(&self.norm)?;
        self.lane_rows = Some(RowsDev { n: self.n, ptr, cols, vals, norm });
        Ok(self)
    }

    /// The lane rows on the device (`ptr`, columns, weights), if any: what a test compares.
    pub fn lane_rows(&self) -> Result<Option<HostRows<T>>, GpuError> {
        let Some(r) = &self.lane_rows else { return Ok(None) };
        let st = &self.gpu.stream;
        Ok(Some((st.clone_dtoh(&r.ptr)?, st.clone_dtoh(&r.cols)?, st.clone_dtoh(&r.vals)?)))
    }

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
        let mut run = self.iterate(seed, transient, iters, mode, d)?.download(self.gpu)?;
        if let SyncMode::Fragmentary(_) = mode {
            // |x − x| < ε on every iteration: the diagonal counts them all, as in phase mode.
            let n = self.n as usize;
            (0..n).for_each(|i| run.hits[i * n + i] = iters);
        }
        Ok(run)
    }

    /// [`OcnnGpu::run`] that leaves the hit matrix on the device and brings back only its
    /// maximum spanning forest over the pairs linked at `p` percent (the grid's lowest; see the
    /// core's `forest_key`): Borůvka rounds on the GPU, at most `n − 1` pairs to download
    /// instead of `n²` counts. The forest gives the same `k(p)` curve and labels as all pairs.
    /// `None` when `n` or `iters` are past the key's range.
    pub fn run_forest(
        &self,
        seed: u64,
        transient: u32,
        (iters, p): (u32, u32),
        mode: SyncMode<T>,
        d: Decomposition,
    ) -> Result<Option<OcnnForest<T>>, GpuError> {
        if self.n >= FOREST_MAX_N || iters >= FOREST_MAX_HITS {
            return Ok(None);
        }
        let it = self.iterate(seed, transient, iters, mode, d)?;
        let (g, n) = (self.gpu, self.n);
        let st = &g.stream;
        let mut comp = st.clone_htod(&(0..n).collect::<Vec<u32>>())?;
        let mut parent = st.alloc_zeros::<u32>(n as usize)?;
        let mut best = st.alloc_zeros::<u64>(n as usize)?;
        let mut edges = st.alloc_zeros::<u64>(n as usize)?;
        let mut count = st.alloc_zeros::<u32>(1)?;
        let mut t = KernelTimer::default();
        let mut found = 0;
        loop {
            st.memset_zeros(&mut best)?;
            let a = k::ForestBest { n, t: iters, p, comp: rd(g, &comp), hits: rd(g, &it.hits), best: wr(g, &mut best) };
            // SAFETY, here and below: comp, parent, best hold n entries, hits n², edges n − 1
            // pairs at most (a forest), count one word.
            unsafe { launch(g, &mut t, n as u64 * 32, a)? };
            let a = k::ForestHook {
                n,
                comp: rd(g, &comp),
                best: rd(g, &best),
                parent: wr(g, &mut parent),
                edges: wr(g, &mut edges),
                count: wr(g, &mut count),
            };
            unsafe { launch(g, &mut t, n as u64, a)? };
            let a = k::ForestJump { n, parent: rd(g, &parent), comp: wr(g, &mut comp) };
            unsafe { launch(g, &mut t, n as u64, a)? };
            let now = st.clone_dtoh(&count)?[0];
            if now == found {
                break;
            }
            found = now;
        }
        let keys = if found == 0 { Vec::new() } else { st.clone_dtoh(&edges.slice(0..found as usize))? };
        let pairs = keys.iter().map(|&key| forest_pair(key)).collect();
        Ok(Some(OcnnForest { state: it.state, pairs, kernel_ms: it.kernel_ms + t.total_ms()?, hits: it.hits }))
    }

    /// The dynamics and synchronization of a run (hits on the device).
    fn iterate(
        &self,
        seed: u64,
        transient: u32,
        iters: u32,
        mode: SyncMode<T>,
        d: Decomposition,
    ) -> Result<Iterated<T>, GpuError> {
        let (g, n) = (self.gpu, self.n);
        let mut partial = g.stream.alloc_zeros::<T>(if d == Decomposition::YThreads { 32 * n as usize } else { 1 })?;
        iterate(
            g,
            n,
            n as usize * n as usize,
            (seed, transient, iters, mode),
            // SAFETY (all three): every buffer is sized for n neurons (hits: n²); the lane rows
            // were built on the device from this n × n J (columns below n, rows from the widths).
            |t, f, next| match (d, &self.lane_rows) {
                (Decomposition::LaneRows, Some(c)) => unsafe { T::step_rows(g, t, RowLayout::Lanes, c, f, next) },
                _ => unsafe { T::step(g, t, d, n, &self.j, &self.norm, f, &mut partial, next) },
            },
            |t, valid, words, hits| {
                let a = k::PhaseHits { n, valid, words: rd(g, words), hits: wr(g, hits) };
                unsafe { launch(g, t, n as u64 * n as u64, a) }
            },
            |t, eps, x, hits| unsafe { T::fragmentary(g, t, n, eps, x, hits) },
        )
    }
}

/// A dense run whose hit matrix stayed on the device, with its maximum spanning forest.
pub struct OcnnForest<T> {
    /// `x(T)`.
    pub state: Vec<T>,
    /// The forest's pairs `(hits, i, j)`, `i < j`, in the order the rounds found them.
    pub pairs: Vec<(u32, u32, u32)>,
    /// GPU time inside the kernels (dynamics, synchronization and the forest).
    pub kernel_ms: f64,
    hits: CudaSlice<u32>,
}

impl<T> OcnnForest<T> {
    /// The full `n × n` hit matrix, downloaded (for the digest; the forest needs none of it).
    pub fn hits(&self, g: &Gpu) -> Result<Vec<u32>, GpuError> {
        Ok(g.stream.clone_dtoh(&self.hits)?)
    }
}

/// A sparse coupling resident on the GPU (`--cutoff`): CSR rows, norms, and the hit-slot layout
/// of the coupled pairs (see `neurobits_core::ocnn::kernels`).
pub struct SparseDev<T> {
    rows: RowsDev<T>,
    upper: CudaSlice<u64>,
    hit_ptr: CudaSlice<u64>,
    slots: usize,
}

/// The host-side arrays of a sparse coupling, as `Gpu::ocnn_sparse` takes them.
pub struct SparseRows<'a, T> {
    /// Row offsets (`n + 1`).
    pub ptr: &'a [u64],
    /// Columns, ascending per row.
    pub cols: &'a [u32],
    /// Weights.
    pub vals: &'a [T],
    /// Row norms.
    pub norm: &'a [T],
    /// First entry of each row with a column above the row.
    pub upper: &'a [u64],
    /// First hit slot of each row (`n + 1`).
    pub hit_ptr: &'a [u64],
}

/// A sparse OCNN resident on the GPU.
pub struct OcnnSparseGpu<'g, T> {
    gpu: &'g Gpu,
    c: SparseDev<T>,
}

impl Gpu {
    /// Uploads a sparse coupling once (checked for consistency and against free memory).
    pub fn ocnn_sparse<T: GpuReal>(&self, r: &SparseRows<'_, T>) -> Result<OcnnSparseGpu<'_, T>, GpuError> {
        let n = r.norm.len();
        let nnz = r.cols.len();
        let ok = r.ptr.len() == n + 1
            && r.upper.len() == n
            && r.hit_ptr.len() == n + 1
            && r.vals.len() == nnz
            && r.ptr.last().is_some_and(|&e| e as usize == nnz)
            && n <= u32::MAX as usize
            && r.ptr.windows(2).all(|w| w[0] <= w[1])
            && (0..n).all(|i| r.ptr[i] <= r.upper[i] && r.upper[i] <= r.ptr[i + 1])
            && (0..n).all(|i| r.hit_ptr[i + 1] - r.hit_ptr[i] == r.ptr[i + 1] - r.upper[i])
            && r.cols.iter().all(|&c| (c as usize) < n);
        if !ok {
            return Err(GpuError::Input("the sparse coupling's arrays are inconsistent".into()));
        }
        let size = core::mem::size_of::<T>() as u64;
        let slots = r.hit_ptr[n] as usize;
        self.ensure_fits(nnz as u64 * (4 + size) + slots as u64 * 4 + n as u64 * (5 * size + 8 * 4))?;
        let st = &self.stream;
        let c = SparseDev {
            rows: RowsDev {
                n: n as u32,
                ptr: st.clone_htod(r.ptr)?,
                cols: st.clone_htod(r.cols)?,
                vals: st.clone_htod(r.vals)?,
                norm: st.clone_htod(r.norm)?,
            },
            upper: st.clone_htod(r.upper)?,
            hit_ptr: st.clone_htod(r.hit_ptr)?,
            slots,
        };
        Ok(OcnnSparseGpu { gpu: self, c })
    }
}

impl<T: GpuReal> OcnnSparseGpu<'_, T> {
    /// As [`OcnnGpu::run`] on the sparse coupling: `hits` has one count per coupled pair, in
    /// slot order.
    pub fn run(&self, seed: u64, transient: u32, iters: u32, mode: SyncMode<T>) -> Result<OcnnRun<T>, GpuError> {
        let (g, c) = (self.gpu, &self.c);
        let n = c.rows.n;
        iterate(
            g,
            n,
            c.slots,
            (seed, transient, iters, mode),
            // SAFETY (all three): buffers sized by `iterate` for n neurons and c.slots pairs.
            |t, f, next| unsafe { T::step_rows(g, t, RowLayout::Columns, &c.rows, f, next) },
            |t, valid, words, hits| {
                let a = k::SparsePhaseHits {
                    n,
                    valid,
                    ptr: rd(g, &c.rows.ptr),
                    upper: rd(g, &c.upper),
                    hit_ptr: rd(g, &c.hit_ptr),
                    cols: rd(g, &c.rows.cols),
                    words: rd(g, words),
                    hits: wr(g, hits),
                };
                unsafe { launch(g, t, n as u64, a) }
            },
            |t, eps, x, hits| unsafe { T::fragmentary_sparse(g, t, c, eps, x, hits) },
        )?
        .download(g)
    }
}

type Run<T> = (u64, u32, u32, SyncMode<T>);

/// The iteration loop shared by the dense and sparse runs: transfer, `step`, then per observed
/// iteration the phase bits (every 64 iterations `flush`) or `frag`; returns the final state and
/// the `slots` hit counts (on the device).
#[allow(clippy::type_complexity)]
fn iterate<T: GpuReal>(
    g: &Gpu,
    n: u32,
    slots: usize,
    (seed, transient, iters, mode): Run<T>,
    mut step: impl FnMut(&mut KernelTimer, &CudaSlice<T>, &mut CudaSlice<T>) -> Result<(), GpuError>,
    mut flush: impl FnMut(&mut KernelTimer, u32, &CudaSlice<u64>, &mut CudaSlice<u32>) -> Result<(), GpuError>,
    mut frag: impl FnMut(&mut KernelTimer, T, &CudaSlice<T>, &mut CudaSlice<u32>) -> Result<(), GpuError>,
) -> Result<Iterated<T>, GpuError> {
    let start = Instant::now();
    let st = &g.stream;
    let x0: Vec<T> = (0..n as u64).map(|i| initial_state(seed, i)).collect();
    let mut x = st.clone_htod(&x0)?;
    let mut next = st.alloc_zeros::<T>(n as usize)?;
    let mut f = st.alloc_zeros::<T>(n as usize)?;
    let mut words = st.alloc_zeros::<u64>(n as usize)?;
    let mut hits = st.alloc_zeros::<u32>(slots.max(1))?;
    let mut t = KernelTimer::default();
    for it in 0..transient + iters {
        // SAFETY: x and f hold n values.
        unsafe { T::transfer(g, &mut t, n, &x, &mut f)? };
        step(&mut t, &f, &mut next)?;
        if it >= transient {
            let o = it - transient;
            match mode {
                SyncMode::Phase => {
                    // SAFETY: x, next and words hold n values.
                    unsafe { T::phase_bits(g, &mut t, n, o % 64, &x, &next, &mut words)? };
                    if o % 64 == 63 || o + 1 == iters {
                        flush(&mut t, o % 64 + 1, &words, &mut hits)?;
                    }
                }
                SyncMode::Fragmentary(eps) => frag(&mut t, eps, &next, &mut hits)?,
            }
        }
        std::mem::swap(&mut x, &mut next);
    }
    let state = st.clone_dtoh(&x)?;
    let kernel_ms = t.total_ms()?;
    Ok(Iterated { state, hits, slots, kernel_ms, start })
}

/// What [`iterate`] leaves: the final state, the hit counts still on the device.
struct Iterated<T> {
    state: Vec<T>,
    hits: CudaSlice<u32>,
    slots: usize,
    kernel_ms: f64,
    start: Instant,
}

impl<T> Iterated<T> {
    /// The hits downloaded: the run's outcome.
    fn download(self, g: &Gpu) -> Result<OcnnRun<T>, GpuError> {
        let mut hits = g.stream.clone_dtoh(&self.hits)?;
        hits.truncate(self.slots);
        let total_ms = self.start.elapsed().as_secs_f64() * 1e3;
        Ok(OcnnRun { state: self.state, hits, kernel_ms: self.kernel_ms, total_ms })
    }
}
