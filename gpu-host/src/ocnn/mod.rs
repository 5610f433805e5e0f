//! The OCNN on the GPU: the weights uploaded once ([`OcnnGpu`]), then any number of runs
//! (seeds), each iterating with a warp per neuron and counting synchronization on the device.

use cudarc::driver::CudaSlice;
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::{forest_pair, LaneColumn, Quot16, SyncMode, FOREST_MAX_HITS, FOREST_MAX_N};

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

mod iterate;
mod real;
mod sparse;

pub use iterate::Check;
use iterate::{iterate, Iterated};
pub use real::GpuReal;
pub use sparse::{OcnnSparseGpu, SparseDev, SparseRows};

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

/// Dense weights and row norms resident on a GPU (and, for [`Decomposition::LaneRows`], the
/// lane rows), or the lane rows alone ([`Gpu::ocnn_lane_rows`]).
pub struct OcnnGpu<'g, T> {
    gpu: &'g Gpu,
    n: u32,
    /// `None` when only the lane rows were uploaded.
    j: Option<CudaSlice<T>>,
    norm: CudaSlice<T>,
    lane_rows: Option<RowsDev<T>>,
    /// The lane rows' columns as quotients by 32 (`Quot16`), which the [`Decomposition::LaneRows`]
    /// step reads (two bytes an entry instead of four); `None` past `Quot16`'s 2 097 152 neurons.
    quot: Option<CudaSlice<u16>>,
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
    /// CSR rows, each grouped by lane in its place (`neurobits_core::ocnn::kernels::StepGroupedF32`):
    /// a thread per row (the core's `update_neuron_grouped_at`), stepped by `step_rows`.
    Grouped,
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
    /// Iterations observed (fewer than asked where an early stop ended the run).
    pub observed: u32,
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
        self.ensure_fits((n as u64 * n as u64) * (size + 4) + n as u64 * (4 * size + WORDS))?;
        let (j, norm) = (self.stream.clone_htod(j)?, self.stream.clone_htod(norm)?);
        Ok(OcnnGpu { gpu: self, n: n as u32, j: Some(j), norm, lane_rows: None, quot: None })
    }

    /// Uploads the dense coupling as its lane rows only (built on the host from the points, see
    /// [`OcnnGpu::with_lane_rows_built`] for the layout): `ptr` (`n + 1` offsets, multiples of
    /// 32), columns, weights, row norms. No `n × n` weights cross the bus or sit on the device;
    /// the runs take [`Decomposition::LaneRows`] only. Checked for consistency (every column
    /// below `n`) and against free memory.
    pub fn ocnn_lane_rows<T: GpuReal>(&self, rows: &HostLaneRows<'_, T>) -> Result<OcnnGpu<'_, T>, GpuError> {
        let HostLaneRows { ptr, cols, vals, norm } = *rows;
        let n = norm.len();
        let ok = ptr.len() == n + 1
            && ptr.first() == Some(&0)
            && ptr.windows(2).all(|w| w[0] <= w[1] && (w[1] - w[0]) % 32 == 0)
            && ptr.last().is_some_and(|&e| e as usize == cols.len())
            && vals.len() == cols.len()
            && n <= u32::MAX as usize
            && cols.iter().all(|&c| (c as usize) < n);
        if !ok {
            return Err(GpuError::Input("the lane rows' arrays are inconsistent".into()));
        }
        let size = core::mem::size_of::<T>() as u64;
        // The rows (and their quotient columns), the norms twice, three state vectors, the words
        // and the hit matrix.
        self.ensure_fits(
            cols.len() as u64 * (6 + size)
                + ptr.len() as u64 * 8
                + (n as u64 * n as u64) * 4
                + n as u64 * (5 * size + WORDS),
        )?;
        let st = &self.stream;
        let norm_dev = st.clone_htod(norm)?;
        let lane_rows = RowsDev {
            n: n as u32,
            ptr: st.clone_htod(ptr)?,
            cols: st.clone_htod(cols)?,
            vals: st.clone_htod(vals)?,
            norm: st.clone_dtod(&norm_dev)?,
        };
        let quot = quotients(self, &lane_rows)?;
        Ok(OcnnGpu { gpu: self, n: n as u32, j: None, norm: norm_dev, lane_rows: Some(lane_rows), quot })
    }
}

impl Gpu {
    /// Builds the dense coupling's lane rows on the device from the points (`coords`: `n · dim`
    /// coordinates, point by point) for scale `a` and, optionally, a cutoff `r2 = (R·a)²`
    /// (infinity for none): each pair's weight by the core's `coupling_weight` and `exp` (with
    /// `fma.rn.f64`), two passes, a warp per row, lane `l` over the columns `l, l + 32, …` — the
    /// host's `weights::lane_rows` and its norms entry for entry, without the host's pass
    /// (0.085 s on 16 cores at N = 16 000) or the upload of its rows (136 MB). Returns the
    /// network (for [`Decomposition::LaneRows`]) and the norms, downloaded, for the caller's check
    /// that every `C_i` is positive.
    pub fn ocnn_lane_rows_from_points<T: GpuReal>(
        &self,
        coords: &[f64],
        dim: usize,
        a: f64,
        r2: f64,
    ) -> Result<(OcnnGpu<'_, T>, Vec<T>), GpuError> {
        let n = coords.len().checked_div(dim).unwrap_or(0);
        if dim == 0 || coords.len() != n * dim || n == 0 || n > u32::MAX as usize / 32 || dim > u32::MAX as usize {
            return Err(GpuError::Input(format!("{} coordinates are not points of {dim} dimensions", coords.len())));
        }
        if !(a.is_finite() && a > 0.0) || r2.is_nan() {
            return Err(GpuError::Input(format!("scale {a} and cutoff² {r2}: not a coupling")));
        }
        let size = core::mem::size_of::<T>() as u64;
        // Before the rows (checked again once their size is known): the hit matrix, the norms
        // twice, three state vectors and the words.
        self.ensure_fits((n as u64 * n as u64) * 4 + n as u64 * (5 * size + WORDS))?;
        let dev = self.stream.clone_htod(coords)?;
        // SAFETY: `dev` holds n·dim coordinates.
        let ((ptr, cols, vals), norm) =
            unsafe { T::lane_rows_from_points(self, (n as u32, dim as u32), &dev, (a, r2)) }?;
        let host_norm = self.stream.clone_dtoh(&norm)?;
        let lane_rows = RowsDev { n: n as u32, ptr, cols, vals, norm: self.stream.clone_dtod(&norm)? };
        let quot = quotients(self, &lane_rows)?;
        Ok((OcnnGpu { gpu: self, n: n as u32, j: None, norm, lane_rows: Some(lane_rows), quot }, host_norm))
    }
}

/// Bytes of phase words per neuron a dense run keeps (`iterate::DENSE_BLOCKS` words).
const WORDS: u64 = 8 * iterate::DENSE_BLOCKS as u64;

/// The lane rows' columns as `Quot16` quotients, computed on the device (a thread per entry), or
/// `None` where they do not fit.
fn quotients<T>(gpu: &Gpu, rows: &RowsDev<T>) -> Result<Option<CudaSlice<u16>>, GpuError> {
    if !<Quot16 as LaneColumn>::fits(rows.n as usize) {
        return Ok(None);
    }
    let total = rows.cols.len();
    gpu.ensure_fits(total as u64 * 2)?;
    // SAFETY: every entry is written by its thread before any kernel reads it.
    let mut quot = unsafe { gpu.stream.alloc::<u16>(total.max(1)) }?;
    let a = k::LaneQuot16 { total: total as u64, cols: rd(gpu, &rows.cols), quot: wr(gpu, &mut quot) };
    // SAFETY: `cols` and `quot` hold `total` entries; a thread per entry.
    unsafe { launch(gpu, &mut KernelTimer::default(), total as u64, a) }?;
    Ok(Some(quot))
}

/// Lane rows on the host, as [`Gpu::ocnn_lane_rows`] takes them.
#[derive(Clone, Copy)]
pub struct HostLaneRows<'a, T> {
    /// Row offsets (`n + 1`, multiples of 32).
    pub ptr: &'a [u64],
    /// Column of each entry (padding: 0).
    pub cols: &'a [u32],
    /// Weight of each entry (padding: 0).
    pub vals: &'a [T],
    /// Row norms `C_i`.
    pub norm: &'a [T],
}

impl<T: GpuReal> OcnnGpu<'_, T> {
    /// Adds the lane rows of the dense `J` for [`Decomposition::LaneRows`], built on the device
    /// from the resident `J` (two passes over it, a warp per row): row `i`'s entries are
    /// `ptr[i]..ptr[i + 1]` (a multiple of 32), entry `k·32 + l` the `k`-th nonzero weight of
    /// lane `l` — columns `≡ l (mod 32)`, ascending — then zero weights (column 0) to the row's
    /// width: the host's `Dense::lane_rows`, entry for entry, without a pass over `n²` weights on
    /// the host.
    pub fn with_lane_rows_built(mut self) -> Result<Self, GpuError> {
        let Some(j) = &self.j else {
            return Ok(self); // uploaded as lane rows
        };
        // SAFETY: `j` holds n² weights (checked at upload).
        let (ptr, cols, vals) = unsafe { T::build_lane_rows(self.gpu, self.n, j) }?;
        let norm = self.gpu.stream.clone_dtod(&self.norm)?;
        let rows = RowsDev { n: self.n, ptr, cols, vals, norm };
        self.quot = quotients(self.gpu, &rows)?;
        self.lane_rows = Some(rows);
        Ok(self)
    }

    /// The row norms `C_i` on the device: what a test compares.
    pub fn norms(&self) -> Result<Vec<T>, GpuError> {
        Ok(self.gpu.stream.clone_dtoh(&self.norm)?)
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
        self.run_until(seed, transient, iters, mode, d, None)
    }

    /// [`OcnnGpu::run`] with an early stop: `check` is asked at each of its check points.
    pub fn run_until(
        &self,
        seed: u64,
        transient: u32,
        iters: u32,
        mode: SyncMode<T>,
        d: Decomposition,
        check: Option<Check<'_>>,
    ) -> Result<OcnnRun<T>, GpuError> {
        let mut run = self.iterate(seed, transient, iters, mode, d, check)?.download(self.gpu)?;
        if let SyncMode::Fragmentary(_) = mode {
            // |x − x| < ε on every iteration: the diagonal counts them all, as in phase mode.
            let n = self.n as usize;
            (0..n).for_each(|i| run.hits[i * n + i] = run.observed);
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
        self.run_forest_until(seed, transient, (iters, p), mode, d, None)
    }

    /// [`OcnnGpu::run_forest`] with an early stop: `check` is asked at each of its check points;
    /// the forest is of the hits at the stop, linked at `p` percent of the iterations observed.
    pub fn run_forest_until(
        &self,
        seed: u64,
        transient: u32,
        (iters, p): (u32, u32),
        mode: SyncMode<T>,
        d: Decomposition,
        check: Option<Check<'_>>,
    ) -> Result<Option<OcnnForest<T>>, GpuError> {
        if self.n >= FOREST_MAX_N || iters >= FOREST_MAX_HITS {
            return Ok(None);
        }
        let it = self.iterate(seed, transient, iters, mode, d, check)?;
        let iters = it.observed;
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
        let observed = it.observed;
        Ok(Some(OcnnForest {
            state: it.state,
            pairs,
            kernel_ms: it.kernel_ms + t.total_ms()?,
            hits: it.hits,
            observed,
        }))
    }

    /// The dynamics and synchronization of a run (hits on the device).
    fn iterate(
        &self,
        seed: u64,
        transient: u32,
        iters: u32,
        mode: SyncMode<T>,
        d: Decomposition,
        check: Option<Check<'_>>,
    ) -> Result<Iterated<T>, GpuError> {
        let (g, n) = (self.gpu, self.n);
        let mut partial = g.stream.alloc_zeros::<T>(if d == Decomposition::YThreads { 32 * n as usize } else { 1 })?;
        // Lane rows with quotient columns: one kernel per update, from the states (the transfer
        // term by term); otherwise the transfer kernel, then the step from its values.
        let states = match (d, &self.lane_rows, &self.quot) {
            (Decomposition::LaneRows, Some(c), Some(q)) => Some((c, q)),
            _ => None,
        };
        iterate(
            g,
            n,
            n as usize * n as usize,
            (seed, transient, iters, mode),
            (check, states.is_some(), iterate::DENSE_BLOCKS),
            // SAFETY (all three): every buffer is sized for n neurons (hits: n²); the lane rows
            // were built on the device from this n × n J (columns below n, rows from the widths).
            |t, input, next| match (states, d, &self.lane_rows, &self.j) {
                (Some((c, q)), ..) => unsafe { T::step_lane_states(g, t, c, q, input, next) },
                (None, Decomposition::LaneRows, Some(c), _) => unsafe {
                    T::step_rows(g, t, RowLayout::Lanes, c, input, next)
                },
                (None, _, _, Some(j)) => unsafe { T::step(g, t, d, n, j, &self.norm, input, &mut partial, next) },
                _ => Err(GpuError::Input(format!("{d:?} needs the dense weights; only lane rows were uploaded"))),
            },
            |t, (blocks, valid), words, hits| {
                let a = k::PhaseHits { n, blocks, valid, words: rd(g, words), hits: wr(g, hits) };
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
    /// Iterations observed (fewer than asked where an early stop ended the run).
    pub observed: u32,
}

impl<T> OcnnForest<T> {
    /// The full `n × n` hit matrix, downloaded (for the digest; the forest needs none of it).
    pub fn hits(&self, g: &Gpu) -> Result<Vec<u32>, GpuError> {
        Ok(g.stream.clone_dtoh(&self.hits)?)
    }
}
