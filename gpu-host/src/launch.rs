//! The one launch path: a kernel is launched by its argument struct (`neurobits_core::kernel`),
//! never by a name and an argument list, so host and device cannot disagree on arguments. Also
//! per-launch timing events and the device-pointer helpers that fill the structs.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg};
use neurobits_core::kernel::{DevMut, DevPtr, Kernel, KernelArgs};

use crate::{Gpu, GpuError};

const BLOCK: u32 = 256;

/// A kernel argument struct as cudarc passes it: its bytes, copied into the launch.
#[repr(transparent)]
struct Args<A>(A);

// SAFETY: `KernelArgs` structs are `#[repr(C)]` plain data (integers, floats, device pointers),
// the exact layout of the entry point's single `.param` (checked at compile time in gpu-device).
unsafe impl<A: KernelArgs> DeviceRepr for Args<A> {}

/// Sums the GPU time of the kernels launched through it (CUDA events around each launch).
#[derive(Default)]
pub struct KernelTimer {
    events: Vec<(Kernel, CudaEvent, CudaEvent)>,
}

impl KernelTimer {
    /// Total milliseconds spent in the recorded kernels (waits for them). With
    /// `NEUROBITS_GPU_PROFILE` set, also prints the time per kernel on stderr.
    pub fn total_ms(&self) -> Result<f64, GpuError> {
        let mut per: Vec<(Kernel, f64, u32)> = Vec::new();
        let mut t = 0.0;
        for (k, a, b) in &self.events {
            let ms = a.elapsed_ms(b)? as f64;
            t += ms;
            match per.iter_mut().find(|p| p.0 == *k) {
                Some(p) => (p.1, p.2) = (p.1 + ms, p.2 + 1),
                None => per.push((*k, ms, 1)),
            }
        }
        if std::env::var_os("NEUROBITS_GPU_PROFILE").is_some() {
            for (k, ms, n) in per {
                eprintln!("  {:<18} {n:>3} launches {ms:>10.3} ms", k.name());
            }
        }
        Ok(t)
    }
}

fn config(threads: u64) -> Result<LaunchConfig, GpuError> {
    let blocks = threads.div_ceil(BLOCK as u64);
    if blocks > i32::MAX as u64 {
        return Err(GpuError::Input(format!("{threads} GPU threads exceed one launch")));
    }
    Ok(LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 })
}

/// Launches `A::KERNEL` on `threads` threads (none: nothing is launched) with `args`, timed.
///
/// # Safety
/// Every device pointer in `args` points into a live allocation of the GPU's stream holding what
/// the kernel's mapping of `threads` reads or writes (see the argument struct's documentation).
pub(crate) unsafe fn launch<A: KernelArgs>(
    gpu: &Gpu,
    timer: &mut KernelTimer,
    threads: u64,
    args: A,
) -> Result<(), GpuError> {
    if threads == 0 {
        return Ok(());
    }
    let args = Args(args);
    let mut b = gpu.stream.launch_builder(gpu.function(A::KERNEL));
    b.arg(&args);
    b.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
    // SAFETY: the argument is the entry's one parameter (KernelArgs); buffers per the caller.
    if let Some((start, end)) = unsafe { b.launch(config(threads)?) }? {
        timer.events.push((A::KERNEL, start, end));
    }
    Ok(())
}

/// The device address of a buffer the kernel reads. Every launch goes to the one stream of its
/// [`Gpu`], in order after the buffer's writes, so the event guard can end here.
pub(crate) fn rd<T>(gpu: &Gpu, s: &CudaSlice<T>) -> DevPtr<T> {
    let (p, _sync) = s.device_ptr(&gpu.stream);
    DevPtr::from_addr(p)
}

/// The device address of a buffer the kernel writes (see [`rd`]).
pub(crate) fn wr<T>(gpu: &Gpu, s: &mut CudaSlice<T>) -> DevMut<T> {
    let (p, _sync) = s.device_ptr_mut(&gpu.stream);
    DevMut::from_addr(p)
}
