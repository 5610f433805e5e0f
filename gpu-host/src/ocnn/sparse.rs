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

/// Longest mean row (entries per neuron) stepped a thread per row; longer rows a warp per row.
/// A thread per grouped row was 2.7×, 2.9× and 3.2× faster than the warp at 34, 135 and 529
/// entries per row (10⁵ points, `--cutoff` 3, 6, 12, one H200); longer rows were not measured,
/// so they keep the warp.
pub const THREAD_ROWS_MAX: usize = 1024;

/// The sparse step's mapping for rows of `mean` entries: a thread per row over grouped rows up to
/// [`THREAD_ROWS_MAX`], else a warp per row over the CSR rows; `NEUROBITS_OCNN_SPARSE_STEP=thread`
/// or `warp` overrides it (to time one against the other; the bits are the same).
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
            && (0..n)
                .into_par_iter()
                .all(|i| r.hit_ptr[i + 1].checked_sub(r.hit_ptr[i]) == Some(r.ptr[i + 1] - r.upper[i]))
            && r.cols.par_iter().all(|&c| (c as usize) < n);
        if !ok {
            return Err(GpuError::Input("the sparse coupling's arrays are inconsistent".into()));
        }
        let size = core::mem::size_of::<T>() as u64;
        let slots = r.hit_ptr[n] as usize;
        let layout = sparse_step(nnz / n.max(1));
        // Grouped rows keep the CSR rows beside them while they are grouped, and then the CSR
        // columns for the hits.
        let twice = if layout == RowLayout::Grouped { 4 + size } else { 0 };
        self.ensure_fits(nnz as u64 * (4 + size + twice) + slots as u64 * 4 + n as u64 * (5 * size + 8 * 4))?;
        let t1 = std::time::Instant::now();
        let st = &self.stream;
        let (ptr, cols, vals) = (st.clone_htod(r.ptr)?, st.clone_htod(r.cols)?, st.clone_htod(r.vals)?);
        let (cols, vals, csr_cols) = if layout == RowLayout::Grouped {
            // SAFETY: `ptr`, `cols`, `vals` are the checked CSR rows of n neurons.
            let (gc, gv) = unsafe { T::group_rows(self, n as u32, &ptr, (&cols, &vals)) }?;
            (gc, gv, Some(cols))
        } else {
            (cols, vals, None)
        };
        let c = SparseDev {
            rows: RowsDev { n: n as u32, ptr, cols, vals, norm: st.clone_htod(r.norm)? },
            layout,
            csr_cols,
            upper: st.clone_htod(r.upper)?,
            hit_ptr: st.clone_htod(r.hit_ptr)?,
            slots,
        };
        st.synchronize()?;
        profile_note(|| {
            format!(
                "sparse upload ({layout:?}, {:.1} per row): checks {:.1} ms, copies and grouping {:.1} ms",
                nnz as f64 / n.max(1) as f64,
                (t1 - t0).as_secs_f64() * 1e3,
                t1.elapsed().as_secs_f64() * 1e3
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
            (check, false, 1),
            // SAFETY (all three): buffers sized by `iterate` for n neurons and c.slots pairs.
            |t, f, next| unsafe { T::step_rows(g, t, c.layout, &c.rows, f, next) },
            |t, (_one_block, valid), words, hits| {
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
