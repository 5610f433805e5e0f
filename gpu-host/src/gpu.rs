use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use std::sync::Arc;

use crate::error::GpuError;
use crate::ptx::{ENTRY_POINTS, PTX};

/// An opened CUDA device with the neurobits kernels loaded.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    functions: Vec<CudaFunction>,
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
        let functions = ENTRY_POINTS.iter().map(|n| module.load_function(n)).collect::<Result<Vec<_>, _>>()?;
        Ok(Gpu { ctx, stream, _module: module, functions })
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

    pub(crate) fn function(&self, name: &str) -> &CudaFunction {
        let i = ENTRY_POINTS.iter().position(|n| *n == name).expect("known kernel name");
        &self.functions[i]
    }
}
