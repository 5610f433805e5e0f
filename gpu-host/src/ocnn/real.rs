//! The working types the OCNN kernels exist for (`f32`, `f64`): one launch method per kernel
//! family, written once by a macro over the two types' argument structs.

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use neurobits_core::ocnn::kernels as k;
use neurobits_core::ocnn::Real;

use crate::launch::{launch, rd, wr, wr_at, KernelTimer};
use crate::{Gpu, GpuError};

use super::{Decomposition, RowLayout, RowsDev, RowsParts, SparseDev};

/// A working type the kernels exist for (`f32`, `f64`).
pub trait GpuReal: Real + DeviceRepr + ValidAsZeroBits + Default + Unpin + Send + Sync {
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
    /// Launches the phase bits of one iteration into block `block` of `words` (its `n` words
    /// from `block·n`).
    ///
    /// # Safety
    /// `before`, `now` hold `n` elements, `words` at least `(block + 1)·n`.
    unsafe fn phase_bits(
        gpu: &Gpu,
        t: &mut KernelTimer,
        at: (u32, u32, usize),
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
    /// One update over rows of weights (a warp per neuron; grouped rows a thread per neuron),
    /// laid out as `layout` says.
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
    /// Builds the lane rows of the dense `j` on the device (see [`super::OcnnGpu::with_lane_rows_built`]).
    ///
    /// # Safety
    /// `j` holds `n²` weights on `gpu`'s stream.
    unsafe fn build_lane_rows(gpu: &Gpu, n: u32, j: &CudaSlice<Self>) -> Result<RowsParts<Self>, GpuError>;
    /// The dense step over lane rows with `Quot16` columns `quot`, from the states `x` (the
    /// transfer applied term by term): `next = s / C`.
    ///
    /// # Safety
    /// `c`'s rows and `quot` (one quotient per entry) are consistent, `x` and `next` hold `c.n`
    /// values.
    unsafe fn step_lane_states(
        gpu: &Gpu,
        t: &mut KernelTimer,
        c: &RowsDev<Self>,
        quot: &CudaSlice<u16>,
        x: &CudaSlice<Self>,
        next: &mut CudaSlice<Self>,
    ) -> Result<(), GpuError>;
    /// Builds the lane rows of the dense coupling and the row norms from the points on the device
    /// (see [`Gpu::ocnn_lane_rows_from_points`]).
    ///
    /// # Safety
    /// `coords` holds `n · dim` coordinates on `gpu`'s stream.
    unsafe fn lane_rows_from_points(
        gpu: &Gpu,
        shape: (u32, u32),
        coords: &CudaSlice<f64>,
        coupling: (f64, f64),
    ) -> Result<(RowsParts<Self>, CudaSlice<Self>), GpuError>;
    /// The CSR rows `ptr`/`cols`/`vals` of `n` neurons grouped by lane (columns, weights), on
    /// the device, a thread per row.
    ///
    /// # Safety
    /// `ptr` holds `n + 1` offsets, `cols` and `vals` `ptr[n]` entries (columns ascending per
    /// row).
    unsafe fn group_rows(
        gpu: &Gpu,
        n: u32,
        ptr: &CudaSlice<u64>,
        csr: (&CudaSlice<u32>, &CudaSlice<Self>),
    ) -> Result<(CudaSlice<u32>, CudaSlice<Self>), GpuError>;
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
     $StepSparse:ident, $StepGrouped:ident, $GroupFill:ident, $FragSparse:ident, $StepLaneRows:ident, $Width:ident,
     $Fill:ident, $PWidth:ident, $PFill:ident, $States:ident) => {
        impl GpuReal for $t {
            unsafe fn step_lane_states(
                gpu: &Gpu,
                t: &mut KernelTimer,
                c: &RowsDev<Self>,
                quot: &CudaSlice<u16>,
                x: &CudaSlice<Self>,
                next: &mut CudaSlice<Self>,
            ) -> Result<(), GpuError> {
                let a = k::$States {
                    n: c.n,
                    ptr: rd(gpu, &c.ptr),
                    cols: rd(gpu, quot),
                    vals: rd(gpu, &c.vals),
                    norm: rd(gpu, &c.norm),
                    x: rd(gpu, x),
                    next: wr(gpu, next),
                };
                // SAFETY: as the caller promises; a warp per row.
                unsafe { launch(gpu, t, c.n as u64 * 32, a) }
            }
            unsafe fn lane_rows_from_points(
                gpu: &Gpu,
                (n, dim): (u32, u32),
                coords: &CudaSlice<f64>,
                (scale, r2): (f64, f64),
            ) -> Result<(RowsParts<Self>, CudaSlice<Self>), GpuError> {
                let mut t = KernelTimer::default();
                let threads = n as u64 * 32;
                let mut width = gpu.stream.alloc_zeros::<u32>(n as usize)?;
                let mut norm = gpu.stream.alloc_zeros::<Self>(n as usize)?;
                let c = rd(gpu, coords);
                let args =
                    k::$PWidth { n, dim, coords: c, scale, r2, width: wr(gpu, &mut width), norm: wr(gpu, &mut norm) };
                // SAFETY: `coords` holds n·dim coordinates, `width` and `norm` n; a warp per row.
                unsafe { launch(gpu, &mut t, threads, args) }?;
                let (ptr, mut cols, mut vals) = lay_out::<Self>(gpu, &width)?;
                let args = k::$PFill {
                    n,
                    dim,
                    coords: c,
                    scale,
                    r2,
                    ptr: rd(gpu, &ptr),
                    cols: wr(gpu, &mut cols),
                    vals: wr(gpu, &mut vals),
                };
                // SAFETY: the rows from the widths hold every lane's nonzero weights; a warp per row.
                unsafe { launch(gpu, &mut t, threads, args) }?;
                Ok(((ptr, cols, vals), norm))
            }
            unsafe fn group_rows(
                gpu: &Gpu,
                n: u32,
                ptr: &CudaSlice<u64>,
                (cols, vals): (&CudaSlice<u32>, &CudaSlice<Self>),
            ) -> Result<(CudaSlice<u32>, CudaSlice<Self>), GpuError> {
                // SAFETY: every entry is written by its row's thread before any kernel reads it.
                let (mut out_cols, mut out_vals) =
                    unsafe { (gpu.stream.alloc::<u32>(cols.len())?, gpu.stream.alloc::<Self>(vals.len())?) };
                let args = k::$GroupFill {
                    n,
                    ptr: rd(gpu, ptr),
                    cols: rd(gpu, cols),
                    vals: rd(gpu, vals),
                    out_cols: wr(gpu, &mut out_cols),
                    out_vals: wr(gpu, &mut out_vals),
                };
                // SAFETY: as the caller promises; a thread per row.
                unsafe { launch(gpu, &mut KernelTimer::default(), n as u64, args) }?;
                Ok((out_cols, out_vals))
            }
            unsafe fn build_lane_rows(gpu: &Gpu, n: u32, j: &CudaSlice<Self>) -> Result<RowsParts<Self>, GpuError> {
                let mut t = KernelTimer::default();
                let threads = n as u64 * 32;
                let mut width = gpu.stream.alloc_zeros::<u32>(n as usize)?;
                let args = k::$Width { n, j: rd(gpu, j), width: wr(gpu, &mut width) };
                // SAFETY: `j` holds n² weights, `width` n; a warp per row.
                unsafe { launch(gpu, &mut t, threads, args) }?;
                let (ptr, mut cols, mut vals) = lay_out::<Self>(gpu, &width)?;
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
                // The three kernels take the same arguments.
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
                    RowLayout::Grouped => unsafe { launch(gpu, t, c.n as u64, args!($StepGrouped)) },
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
                    cols: rd(gpu, c.cols()),
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
                (n, bit, block): (u32, u32, usize),
                before: &CudaSlice<Self>,
                now: &CudaSlice<Self>,
                words: &mut CudaSlice<u64>,
            ) -> Result<(), GpuError> {
                let words = wr_at(gpu, words, block * n as usize);
                let a = k::$Bits { n, bit, before: rd(gpu, before), now: rd(gpu, now), words };
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
    StepGroupedF32,
    GroupFillF32,
    SparseFragmentaryHitsF32,
    StepLaneRowsF32,
    LaneWidthF32,
    LaneFillF32,
    LanePointsWidthF32,
    LanePointsFillF32,
    StepLaneStatesF32
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
    StepGroupedF64,
    GroupFillF64,
    SparseFragmentaryHitsF64,
    StepLaneRowsF64,
    LaneWidthF64,
    LaneFillF64,
    LanePointsWidthF64,
    LanePointsFillF64,
    StepLaneStatesF64
);

/// Zeroed lane rows laid out from their widths (downloaded): `ptr[i + 1] = ptr[i] + 32·width[i]`,
/// uploaded, and columns and weights for `ptr[n]` entries (zero: the padding), checked against
/// free memory first. The fill kernels write the nonzero entries.
fn lay_out<T: GpuReal>(gpu: &Gpu, width: &CudaSlice<u32>) -> Result<RowsParts<T>, GpuError> {
    let widths = gpu.stream.clone_dtoh(width)?;
    let mut ptr = Vec::with_capacity(widths.len() + 1);
    ptr.push(0u64);
    for w in widths {
        ptr.push(ptr[ptr.len() - 1] + 32 * w as u64);
    }
    let total = ptr[ptr.len() - 1];
    gpu.ensure_fits(total * (4 + core::mem::size_of::<T>() as u64) + ptr.len() as u64 * 8)?;
    let ptr = gpu.stream.clone_htod(&ptr)?;
    Ok((ptr, gpu.stream.alloc_zeros::<u32>(total as usize)?, gpu.stream.alloc_zeros::<T>(total as usize)?))
}
