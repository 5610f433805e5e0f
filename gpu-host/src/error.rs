use std::fmt;

/// Why a GPU operation failed; `Display` is one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuError {
    /// No CUDA driver library (libcuda) could be loaded.
    NoDriver,
    /// The driver reports no usable device `ordinal`.
    NoDevice(usize),
    /// Not enough free device memory: `(needed, free)` bytes.
    OutOfMemory(u64, u64),
    /// cuBLAS could not be loaded.
    NoCublas,
    /// Bad input (sizes, symbols) — the core's message.
    Input(String),
    /// Any other driver error.
    Cuda(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        match self {
            GpuError::NoDriver => write!(f, "no CUDA driver found (libcuda could not be loaded)"),
            GpuError::NoDevice(i) => write!(f, "no CUDA GPU with index {i}"),
            GpuError::OutOfMemory(need, free) => {
                write!(f, "GPU out of memory: needs {:.2} GiB, {:.2} GiB free", gib(*need), gib(*free))
            }
            GpuError::NoCublas => write!(f, "cuBLAS could not be loaded (libcublas not found)"),
            GpuError::Input(s) => write!(f, "{s}"),
            GpuError::Cuda(s) => write!(f, "CUDA error: {s}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<cudarc::driver::DriverError> for GpuError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        use cudarc::driver::sys::cudaError_enum as E;
        match e.0 {
            E::CUDA_ERROR_OUT_OF_MEMORY => GpuError::OutOfMemory(0, 0),
            _ => GpuError::Cuda(format!("{e:?}")),
        }
    }
}
