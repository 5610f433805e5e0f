//! The one launch path: a kernel is launched by its argument struct (`neurobits_core::kernel`),
//! never by a name and an argument list, so host and device cannot disagree on arguments: the
//! struct's fields, in order, are the kernel's parameters (`KernelArgs::param_ptrs`). Also
//! per-launch timing events and the device-pointer helpers that fill the structs.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DevicePtrMut};
use neurobits_core::kernel::{DevMut, DevPtr, Kernel, KernelArgs};

use crate::{Gpu, GpuError};

/// Threads per block of the one-dimensional launches (`launch`: a thread per item).
pub const BLOCK: u32 = 256;

/// Sums the GPU time of the kernels launched through it (CUDA events around each launch).
#[derive(Default)]
pub struct KernelTimer {
    events: Vec<(Kernel, CudaEvent, CudaEvent)>,
}

impl KernelTimer {
    /// Runs `work` (device work other than a kernel launch, e.g. a memset) between two events
    /// on `gpu`'s stream, counted as `kernel`'s time: kernel time is all the device's work.
    pub(crate) fn time(
        &mut self,
        gpu: &Gpu,
        kernel: Kernel,
        work: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let start = gpu.stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        work()?;
        let end = gpu.stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        self.events.push((kernel, start, end));
        Ok(())
    }

    /// The recorded launches' kernels and events, leaving the timer empty (for the timeline:
    /// [`crate::timeline`]).
    pub(crate) fn take_events(&mut self) -> Vec<(Kernel, CudaEvent, CudaEvent)> {
        std::mem::take(&mut self.events)
    }

    /// Milliseconds of each recorded launch, in order (waits for them).
    pub fn each_ms(&self) -> Result<Vec<f64>, GpuError> {
        // One wait per context for its last event, not two per launch: cudarc's `elapsed_ms`
        // binds the context and synchronises both events of every pair, which took 0.65 ms for
        // 16 launches and 1.6 ms for 40 on an H200 host, after the batch's last kernel.
        let mut waited: Vec<&std::sync::Arc<cudarc::driver::CudaContext>> = Vec::new();
        for (_, _, end) in self.events.iter().rev() {
            if !waited.contains(&end.context()) {
                end.synchronize()?;
                waited.push(end.context());
            }
        }
        let mut bound = None;
        self.events
            .iter()
            .map(|(_, a, b)| {
                if a.context() != b.context() {
                    return Err(GpuError::Cuda("a launch timed across two contexts".into()));
                }
                if bound != Some(a.context()) {
                    a.context().bind_to_thread()?;
                    bound = Some(a.context());
                }
                // SAFETY: both events belong to the bound context and live until the call returns.
                let elapsed = || unsafe { cudarc::driver::result::event::elapsed(a.cu_event(), b.cu_event()) };
                match elapsed() {
                    // Recorded on another stream than the one waited for: wait for this pair.
                    Err(cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY)) => {
                        b.synchronize()?;
                        Ok(elapsed()? as f64)
                    }
                    r => Ok(r? as f64),
                }
            })
            .collect()
    }

    /// Total milliseconds spent in the recorded kernels (waits for them). With
    /// `NEUROBITS_GPU_PROFILE` set, also prints the time per kernel on stderr.
    pub fn total_ms(&self) -> Result<f64, GpuError> {
        let mut per: Vec<(Kernel, f64, u32)> = Vec::new();
        let mut t = 0.0;
        for ((k, _, _), ms) in self.events.iter().zip(self.each_ms()?) {
            t += ms;
            match per.iter_mut().find(|p| p.0 == *k) {
                Some(p) => (p.1, p.2) = (p.1 + ms, p.2 + 1),
                None => per.push((*k, ms, 1)),
            }
        }
        if profiling() {
            for (k, ms, n) in per {
                eprintln!("  {:<18} {n:>3} launches {ms:>10.3} ms", k.name());
            }
        }
        Ok(t)
    }
}

/// Whether `NEUROBITS_GPU_PROFILE` is set: then kernel times and host-side phases go to stderr.
pub(crate) fn profiling() -> bool {
    std::env::var_os("NEUROBITS_GPU_PROFILE").is_some()
}

/// Prints `note()` on stderr when [`profiling`].
pub(crate) fn profile_note(note: impl FnOnce() -> String) {
    if profiling() {
        eprintln!("  {}", note());
    }
}

/// Milliseconds since `t`.
pub(crate) fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Blocks of [`BLOCK`] threads covering `threads`.
fn grid(threads: u64) -> Result<u32, GpuError> {
    let blocks = threads.div_ceil(BLOCK as u64);
    if blocks > i32::MAX as u64 {
        return Err(GpuError::Input(format!("{threads} GPU threads exceed one launch")));
    }
    Ok(blocks as u32)
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
    // SAFETY: as the caller promises.
    unsafe { launch_blocks(gpu, Some(timer), grid(threads)?, args) }
}

/// Launches `A::KERNEL` on `blocks` blocks of [`BLOCK`] threads, timed when `timer` is given
/// (two events per launch: the per-step loops of small networks go untimed).
///
/// # Safety
/// As for [`launch`], for the threads of `blocks` blocks.
pub(crate) unsafe fn launch_blocks<A: KernelArgs>(
    gpu: &Gpu,
    timer: Option<&mut KernelTimer>,
    blocks: u32,
    args: A,
) -> Result<(), GpuError> {
    // SAFETY: as the caller promises.
    unsafe { launch_shaped(gpu, timer, (blocks, BLOCK, 0), args) }
}

/// Launches `A::KERNEL` on `(blocks, threads per block, dynamic shared bytes)`, timed when
/// `timer` is given. Kernels with more than 48 KiB of dynamic shared memory get the function
/// attribute that allows it.
///
/// # Safety
/// As for [`launch`], for the threads of `blocks` blocks of `threads`, and the kernel uses at most
/// `shared` bytes of dynamic shared memory.
pub(crate) unsafe fn launch_shaped<A: KernelArgs>(
    gpu: &Gpu,
    timer: Option<&mut KernelTimer>,
    shape: (u32, u32, u32),
    args: A,
) -> Result<(), GpuError> {
    // SAFETY: as the caller promises.
    unsafe { launch_shaped_on(gpu, gpu.stream.cu_stream(), timer, shape, args) }
}

/// [`launch_blocks`] onto `stream` (a stream of `gpu`'s context: one being captured into a
/// CUDA graph).
///
/// # Safety
/// As for [`launch_blocks`]; `stream` belongs to `gpu`'s context.
pub(crate) unsafe fn launch_blocks_on<A: KernelArgs>(
    gpu: &Gpu,
    stream: cudarc::driver::sys::CUstream,
    blocks: u32,
    args: A,
) -> Result<(), GpuError> {
    // SAFETY: as the caller promises.
    unsafe { launch_shaped_on(gpu, stream, None, (blocks, BLOCK, 0), args) }
}

/// [`launch_shaped`] onto `stream`; events (when timed) go to `gpu`'s stream, so only launches
/// there may be timed.
///
/// # Safety
/// As for [`launch_shaped`]; `stream` belongs to `gpu`'s context.
unsafe fn launch_shaped_on<A: KernelArgs>(
    gpu: &Gpu,
    stream: cudarc::driver::sys::CUstream,
    timer: Option<&mut KernelTimer>,
    (blocks, threads, shared): (u32, u32, u32),
    args: A,
) -> Result<(), GpuError> {
    if blocks == 0 {
        return Ok(());
    }
    // The raw launch takes the thread's current context: with several GPUs it must be this one's.
    gpu.ctx.bind_to_thread()?;
    let f = gpu.function(A::KERNEL);
    if shared > 48 << 10 {
        use cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_SHARED;
        f.set_attribute(MAX_SHARED, shared as i32)?;
    }
    let mut params = args.param_ptrs();
    let start = match timer {
        Some(_) => Some(gpu.stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?),
        None => None,
    };
    // SAFETY: the parameter array holds the addresses of `args`' fields, which outlive this call
    // (the driver copies them at launch), in the order and of the types the entry declares
    // (checked when gpu-device compiles); the buffers are as the caller promises.
    unsafe {
        cudarc::driver::result::launch_kernel(
            f.cu_function(),
            (blocks, 1, 1),
            (threads, 1, 1),
            shared,
            stream,
            params.ptrs(),
        )
    }?;
    if let (Some(timer), Some(start)) = (timer, start) {
        let end = gpu.stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        timer.events.push((A::KERNEL, start, end));
    }
    Ok(())
}

/// Blocks of [`BLOCK`] threads of `A::KERNEL` that can be resident at once on the whole device
/// (the occupancy calculator × the SM count): the size of a persistent grid.
pub(crate) fn resident_blocks<A: KernelArgs>(gpu: &Gpu) -> Result<u32, GpuError> {
    resident_blocks_shaped::<A>(gpu, BLOCK, 0)
}

/// [`resident_blocks`] for blocks of `threads` with `shared` bytes of dynamic shared memory.
pub(crate) fn resident_blocks_shaped<A: KernelArgs>(gpu: &Gpu, threads: u32, shared: u32) -> Result<u32, GpuError> {
    gpu.ctx.bind_to_thread()?;
    let f = gpu.function(A::KERNEL);
    if shared > 48 << 10 {
        use cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_SHARED;
        f.set_attribute(MAX_SHARED, shared as i32)?;
    }
    // SAFETY: the function was loaded from the module the GPU keeps alive.
    let per_sm = unsafe {
        cudarc::driver::result::occupancy::max_active_block_per_multiprocessor(
            f.cu_function(),
            threads as i32,
            shared as usize,
        )
    }?;
    let sms = gpu.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    Ok((per_sm.max(1) * sms.max(1)) as u32)
}

/// Threads per block of every launch.
pub(crate) const fn block() -> u32 {
    BLOCK
}

/// The device address of a buffer the kernel reads. Every launch goes to the one stream of its
/// [`Gpu`], in order after the buffer's writes, so the event guard can end here.
pub(crate) fn rd<T>(gpu: &Gpu, s: &CudaSlice<T>) -> DevPtr<T> {
    let (p, _sync) = s.device_ptr(&gpu.stream);
    DevPtr::from_addr(p)
}

/// The device address of element `at` of a buffer the kernel writes (`at ≤ len`).
pub(crate) fn wr_at<T>(gpu: &Gpu, s: &mut CudaSlice<T>, at: usize) -> DevMut<T> {
    assert!(at <= s.len(), "offset {at} past a buffer of {}", s.len());
    let (p, _sync) = s.device_ptr_mut(&gpu.stream);
    DevMut::from_addr(p + (at * std::mem::size_of::<T>()) as u64)
}

/// The device address of a buffer the kernel writes (see [`rd`]).
pub(crate) fn wr<T>(gpu: &Gpu, s: &mut CudaSlice<T>) -> DevMut<T> {
    let (p, _sync) = s.device_ptr_mut(&gpu.stream);
    DevMut::from_addr(p)
}
