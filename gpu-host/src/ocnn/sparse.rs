//! The OCNN with a sparse coupling (`--cutoff`) on the GPU: CSR rows uploaded once, then runs.

use cudarc::driver::CudaSlice;
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::SyncMode;

use crate::launch::{launch, rd, wr};
use crate::{Gpu, GpuError};

use super::{iterate::iterate, Check, GpuReal, OcnnRun, RowLayout, RowsDev};

/// A sparse coupling resident on the GPU (`--cutoff`): CSR rows, norms, and the hit-slot layout
/// of the coupled pairs (see `neurobits_core::ocnn::kernels`).
pub struct SparseDev<T> {
    pub(super) rows: RowsDev<T>,
    /// The same rows grouped by lane, for the thread-per-row step.
    pub(super) grouped: RowsDev<T>,
    pub(super) upper: CudaSlice<u64>,
    pub(super) hit_ptr: CudaSlice<u64>,
    pub(super) slots: usize,
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

/// Each row's entries grouped by lane (stable: columns ascending within a lane), as the core's
/// `lanes32_grouped` reads them.
fn group_by_lane<T: GpuReal>(r: &SparseRows<'_, T>) -> (Vec<u32>, Vec<T>) {
    use rayon::prelude::*;
    let n = r.norm.len();
    let rows: Vec<(Vec<u32>, Vec<T>)> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (s, e) = (r.ptr[i] as usize, r.ptr[i + 1] as usize);
            let mut order: Vec<usize> = (s..e).collect();
            order.sort_by_key(|&k| r.cols[k] % 32);
            order.iter().map(|&k| (r.cols[k], r.vals[k])).unzip()
        })
        .collect();
    let (mut cols, mut vals) = (Vec::with_capacity(r.cols.len()), Vec::with_capacity(r.cols.len()));
    for (c, v) in rows {
        cols.extend(c);
        vals.extend(v);
    }
    (cols, vals)
}

/// The sparse step's mapping: EXPERIMENT — `NEUROBITS_OCNN_SPARSE_STEP=thread` runs a thread
/// per row over the grouped rows, anything else a warp per row, until measured.
fn sparse_step() -> RowLayout {
    match std::env::var("NEUROBITS_OCNN_SPARSE_STEP").as_deref() {
        Ok("thread") => RowLayout::Grouped,
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
        // Twice the rows: as given (the hits' layout) and grouped by lane (the step's).
        self.ensure_fits(2 * nnz as u64 * (4 + size) + slots as u64 * 4 + n as u64 * (6 * size + 8 * 5))?;
        let (g_cols, g_vals) = group_by_lane(r);
        let st = &self.stream;
        let c = SparseDev {
            rows: RowsDev {
                n: n as u32,
                ptr: st.clone_htod(r.ptr)?,
                cols: st.clone_htod(r.cols)?,
                vals: st.clone_htod(r.vals)?,
                norm: st.clone_htod(r.norm)?,
            },
            grouped: RowsDev {
                n: n as u32,
                ptr: st.clone_htod(r.ptr)?,
                cols: st.clone_htod(&g_cols)?,
                vals: st.clone_htod(&g_vals)?,
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
            |t, f, next| unsafe {
                match sparse_step() {
                    RowLayout::Grouped => T::step_rows(g, t, RowLayout::Grouped, &c.grouped, f, next),
                    _ => T::step_rows(g, t, RowLayout::Columns, &c.rows, f, next),
                }
            },
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
