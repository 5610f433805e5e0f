//! The OCNN with a sparse coupling (`--cutoff`) on the GPU: CSR rows uploaded once, then runs.

use cudarc::driver::CudaSlice;
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::SyncMode;

use crate::launch::{launch, profile_note, rd, wr};
use crate::{Gpu, GpuError};

use super::{iterate::iterate, Check, GpuReal, OcnnRun, RowLayout, RowsDev};

/// A sparse coupling resident on the GPU (`--cutoff`): the step's rows, norms, and the hit-slot
/// layout of the coupled pairs (see `neurobits_core::ocnn::kernels`).
pub struct SparseDev<T> {
    /// The rows the step reads: CSR ([`RowLayout::Columns`], a warp per row) or grouped by lane
    /// ([`RowLayout::Grouped`], a thread per row); `ptr` and `norm` are the same either way.
    pub(super) rows: RowsDev<T>,
    pub(super) layout: RowLayout,
    /// The CSR columns, which the hit slots follow, when `rows` are grouped.
    pub(super) csr_cols: Option<CudaSlice<u32>>,
    pub(super) upper: CudaSlice<u64>,
    pub(super) hit_ptr: CudaSlice<u64>,
    pub(super) slots: usize,
}

impl<T> SparseDev<T> {
    /// The CSR columns (ascending per row): what the hit kernels walk.
    pub(super) fn cols(&self) -> &CudaSlice<u32> {
        self.csr_cols.as_ref().unwrap_or(&self.rows.cols)
    }
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

/// Rows per task of [`group_by_lane`] (a few hundred tasks at 10⁶ rows).
const GROUP_BLOCK: usize = 4096;

/// Each row's entries grouped by lane (stable: columns ascending within a lane), as the core's
/// `lanes32_grouped` reads them; in parallel, by blocks of rows.
fn group_by_lane<T: GpuReal>(r: &SparseRows<'_, T>) -> (Vec<u32>, Vec<T>) {
    use rayon::prelude::*;
    let n = r.norm.len();
    let blocks: Vec<(Vec<u32>, Vec<T>)> = (0..n.div_ceil(GROUP_BLOCK))
        .into_par_iter()
        .map(|b| {
            let (i0, i1) = (b * GROUP_BLOCK, n.min(b * GROUP_BLOCK + GROUP_BLOCK));
            let (s0, s1) = (r.ptr[i0] as usize, r.ptr[i1] as usize);
            let (mut cols, mut vals) = (Vec::with_capacity(s1 - s0), Vec::with_capacity(s1 - s0));
            let mut order = Vec::new();
            for i in i0..i1 {
                order.clear();
                order.extend(r.ptr[i] as usize..r.ptr[i + 1] as usize);
                order.sort_by_key(|&k| r.cols[k] % 32);
                cols.extend(order.iter().map(|&k| r.cols[k]));
                vals.extend(order.iter().map(|&k| r.vals[k]));
            }
            (cols, vals)
        })
        .collect();
    let (mut cols, mut vals) = (Vec::with_capacity(r.cols.len()), Vec::with_capacity(r.cols.len()));
    for (c, v) in blocks {
        cols.extend_from_slice(&c);
        vals.extend_from_slice(&v);
    }
    (cols, vals)
}

/// Longest mean row (entries per neuron) stepped a thread per row; longer rows a warp per row.
/// Measured on an H200 (see the manual's sparse coupling section).
pub const THREAD_ROWS_MAX: usize = 256;

/// The sparse step's mapping for rows of `mean` entries: a thread per row over rows grouped by
/// lane up to [`THREAD_ROWS_MAX`], else a warp per row; `NEUROBITS_OCNN_SPARSE_STEP=thread` or
/// `warp` overrides it (to time one against the other; the bits are the same).
fn sparse_step(mean: usize) -> RowLayout {
    match std::env::var("NEUROBITS_OCNN_SPARSE_STEP").as_deref() {
        Ok("thread") => RowLayout::Grouped,
        Ok("warp") => RowLayout::Columns,
        _ if mean <= THREAD_ROWS_MAX => RowLayout::Grouped,
        _ => RowLayout::Columns,
    }
}

/// A sparse OCNN resident on the GPU.
pub struct OcnnSparseGpu<'g, T> {
    gpu: &'g Gpu,
    c: SparseDev<T>,
}

impl Gpu {
    /// Uploads a sparse coupling once (checked for consistency and against free memory).
    pub fn ocnn_sparse<T: GpuReal>(&self, r: &SparseRows<'_, T>) -> Result<OcnnSparseGpu<'_, T>, GpuError> {
        use rayon::prelude::*;
        let t0 = std::time::Instant::now();
        let n = r.norm.len();
        let nnz = r.cols.len();
        let ok = r.ptr.len() == n + 1
            && r.upper.len() == n
            && r.hit_ptr.len() == n + 1
            && r.vals.len() == nnz
            && r.ptr.last().is_some_and(|&e| e as usize == nnz)
            && n <= u32::MAX as usize
            && r.ptr.par_windows(2).all(|w| w[0] <= w[1])
            && (0..n).into_par_iter().all(|i| r.ptr[i] <= r.upper[i] && r.upper[i] <= r.ptr[i + 1])
            && (0..n).into_par_iter().all(|i| r.hit_ptr[i + 1] - r.hit_ptr[i] == r.ptr[i + 1] - r.upper[i])
            && r.cols.par_iter().all(|&c| (c as usize) < n);
        if !ok {
            return Err(GpuError::Input("the sparse coupling's arrays are inconsistent".into()));
        }
        let size = core::mem::size_of::<T>() as u64;
        let slots = r.hit_ptr[n] as usize;
        let layout = sparse_step(nnz / n.max(1));
        // Grouped rows keep the CSR columns beside them, for the hits.
        let cols_twice = if layout == RowLayout::Grouped { 4 } else { 0 };
        self.ensure_fits(nnz as u64 * (4 + size + cols_twice) + slots as u64 * 4 + n as u64 * (5 * size + 8 * 4))?;
        let t1 = std::time::Instant::now();
        let grouped = (layout == RowLayout::Grouped).then(|| group_by_lane(r));
        let t2 = std::time::Instant::now();
        let st = &self.stream;
        let (cols, vals, csr_cols) = match &grouped {
            Some((gc, gv)) => (st.clone_htod(gc)?, st.clone_htod(gv)?, Some(st.clone_htod(r.cols)?)),
            None => (st.clone_htod(r.cols)?, st.clone_htod(r.vals)?, None),
        };
        let c = SparseDev {
            rows: RowsDev { n: n as u32, ptr: st.clone_htod(r.ptr)?, cols, vals, norm: st.clone_htod(r.norm)? },
            layout,
            csr_cols,
            upper: st.clone_htod(r.upper)?,
            hit_ptr: st.clone_htod(r.hit_ptr)?,
            slots,
        };
        st.synchronize()?;
        profile_note(|| {
            format!(
                "sparse upload ({layout:?}, {:.1} per row): checks {:.1} ms, grouping {:.1} ms, copies {:.1} ms",
                nnz as f64 / n.max(1) as f64,
                (t1 - t0).as_secs_f64() * 1e3,
                (t2 - t1).as_secs_f64() * 1e3,
                t2.elapsed().as_secs_f64() * 1e3
            )
        });
        Ok(OcnnSparseGpu { gpu: self, c })
    }
}

impl<T: GpuReal> OcnnSparseGpu<'_, T> {
    /// As [`super::OcnnGpu::run`] on the sparse coupling: `hits` has one count per coupled pair, in
    /// slot order.
    pub fn run(&self, seed: u64, transient: u32, iters: u32, mode: SyncMode<T>) -> Result<OcnnRun<T>, GpuError> {
        self.run_until(seed, transient, iters, mode, None)
    }

    /// [`OcnnSparseGpu::run`] with an early stop: `check` is asked at each of its check points.
    pub fn run_until(
        &self,
        seed: u64,
        transient: u32,
        iters: u32,
        mode: SyncMode<T>,
        check: Option<Check<'_>>,
    ) -> Result<OcnnRun<T>, GpuError> {
        let (g, c) = (self.gpu, &self.c);
        let n = c.rows.n;
        iterate(
            g,
            n,
            c.slots,
            (seed, transient, iters, mode),
            check,
            // SAFETY (all three): buffers sized by `iterate` for n neurons and c.slots pairs.
            |t, f, next| unsafe { T::step_rows(g, t, c.layout, &c.rows, f, next) },
            |t, valid, words, hits| {
                let a = k::SparsePhaseHits {
                    n,
                    valid,
                    ptr: rd(g, &c.rows.ptr),
                    upper: rd(g, &c.upper),
                    hit_ptr: rd(g, &c.hit_ptr),
                    cols: rd(g, c.cols()),
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
