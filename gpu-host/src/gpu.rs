use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, PinnedHostSlice};
use std::sync::{Arc, Mutex};

use crate::error::GpuError;
use crate::ptx::PTX;
use neurobits_core::kernel::Kernel;

/// An opened CUDA device with the neurobits kernels loaded.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    functions: Vec<CudaFunction>,
    /// Page-locked staging buffer for downloads, kept between calls (allocating it costs more
    /// than the copy).
    staging: Mutex<Option<PinnedHostSlice<u64>>>,
}

impl Gpu {
    /// Opens device `ordinal` and loads the PTX (JIT-compiled by the driver).
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        // cudarc's dynamic loader panics when the library is absent: ask first.
        if !std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false) {
            return Err(GpuError::NoDriver);
        }
        let count = CudaContext::device_count().map_err(|_| GpuError::NoDevice(ordinal))?;
        if ordinal as i32 >= count {
            return Err(GpuError::NoDevice(ordinal));
        }
        let ctx = CudaContext::new(ordinal)?;
        let stream = ctx.default_stream();
        let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(PTX))?;
        let functions = Kernel::ALL.iter().map(|k| module.load_function(k.name())).collect::<Result<Vec<_>, _>>()?;
        Ok(Gpu { ctx, stream, _module: module, functions, staging: Mutex::new(None) })
    }

    /// CUDA devices here (0 without a driver).
    pub fn count() -> usize {
        if !std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false) {
            return 0;
        }
        CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
    }

    /// Whether a CUDA device can be opened here.
    pub fn available() -> bool {
        Gpu::open(0).is_ok()
    }

    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> String {
        self.ctx.name().unwrap_or_else(|_| "CUDA device".into())
    }

    /// Free and total device memory in bytes.
    pub fn memory(&self) -> Result<(u64, u64), GpuError> {
        let (free, total) = self.ctx.mem_get_info()?;
        Ok((free as u64, total as u64))
    }

    /// Fails with [`GpuError::OutOfMemory`] unless `bytes` fit in free device memory.
    pub(crate) fn ensure_fits(&self, bytes: u64) -> Result<(), GpuError> {
        let (free, _) = self.memory()?;
        if bytes > free {
            return Err(GpuError::OutOfMemory(bytes, free));
        }
        Ok(())
    }

    /// Device → host through the reused page-locked staging buffer (pageable copies of the
    /// GiB-sized results run several times slower).
    pub(crate) fn download(&self, src: &CudaSlice<u64>) -> Result<Vec<u64>, GpuError> {
        let mut out = Vec::new();
        self.download_into(src, &mut out)?;
        Ok(out)
    }

    /// [`Gpu::download`] into a reused vector (no page faults on its second use).
    pub(crate) fn download_into(&self, src: &CudaSlice<u64>, out: &mut Vec<u64>) -> Result<(), GpuError> {
        const HALF: usize = 1 << 22; // 32 MiB of words per staging half
        out.clear();
        if src.len() <= 1 << 16 {
            out.extend(self.stream.clone_dtoh(src)?);
            return Ok(());
        }
        let mut guard = self.staging.lock().map_err(|_| GpuError::Cuda("staging buffer poisoned".into()))?;
        if guard.is_none() {
            // SAFETY: every element is written by a copy before it is read.
            *guard = Some(unsafe {
                self.ctx.alloc_pinned_with_flags::<u64>(2 * HALF, cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE)
            }?);
        }
        let (a, b) = guard.as_mut().expect("just set").as_mut_slice()?.split_at_mut(HALF);
        let chunks = src.len().div_ceil(HALF);
        let range = |i: usize| i * HALF..src.len().min((i + 1) * HALF);
        out.reserve(src.len());
        // Double buffering: chunk i+1 streams into one half while chunk i is copied out of the other.
        self.stream.memcpy_dtoh(&src.slice(range(0)), &mut a[..range(0).len()])?;
        for i in 0..chunks {
            self.stream.synchronize()?;
            let (next, done) = if i % 2 == 0 { (&mut *b, &*a) } else { (&mut *a, &*b) };
            if i + 1 < chunks {
                self.stream.memcpy_dtoh(&src.slice(range(i + 1)), &mut next[..range(i + 1).len()])?;
            }
            out.extend_from_slice(&done[..range(i).len()]);
        }
        self.stream.synchronize()?;
        Ok(())
    }

    /// The loaded entry point of kernel `k` (`Kernel::ALL` order is the discriminant order).
    pub(crate) fn function(&self, k: Kernel) -> &CudaFunction {
        &self.functions[k as usize]
    }
}
