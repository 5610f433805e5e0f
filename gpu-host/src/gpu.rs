use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PinnedHostSlice,
};
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
    /// A second (non-blocking) stream for downloads that overlap the kernels, made on first use.
    copy: std::sync::OnceLock<Arc<CudaStream>>,
}

/// Appends `src` to `out` on up to four threads: one core's copy out of pinned memory is slower
/// than the transfer it follows.
fn extend_parallel<T: Copy + Send + Sync>(out: &mut Vec<T>, src: &[T]) {
    out.reserve(src.len());
    let at = out.len();
    copy_parallel(&mut out.spare_capacity_mut()[..src.len()], src);
    // SAFETY: `copy_parallel` wrote all `src.len()` elements after `at`.
    unsafe { out.set_len(at + src.len()) };
}

/// Writes `src` into `dst` (same length) on up to four threads.
fn copy_parallel<T: Copy + Send + Sync>(dst: &mut [std::mem::MaybeUninit<T>], src: &[T]) {
    const PIECE: usize = 1 << 19;
    let per = if src.len() <= PIECE { src.len().max(1) } else { src.len().div_ceil(4) };
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(per).zip(src.chunks(per)) {
            let mut copy = move || {
                for (d, &c) in d.iter_mut().zip(c) {
                    d.write(c);
                }
            };
            if per == src.len() {
                copy();
            } else {
                s.spawn(copy);
            }
        }
    });
}

/// Every GPU this process opened, by ordinal and name: what result files record as their device.
static OPENED: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

/// The GPUs this process has opened so far (ordinal, name), in the order they were first opened.
pub fn opened() -> Vec<(usize, String)> {
    OPENED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Words in one half of the pinned staging buffer (32 MiB).
pub(crate) const STAGING_HALF: usize = 1 << 22;

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
        let name = ctx.name().unwrap_or_else(|_| "CUDA device".into());
        let mut seen = OPENED.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.iter().any(|(i, _)| *i == ordinal) {
            seen.push((ordinal, name));
        }
        drop(seen);
        Ok(Gpu { ctx, stream, _module: module, functions, staging: Mutex::new(None), copy: Default::default() })
    }

    /// Waits for everything queued on this GPU's stream.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        Ok(self.stream.synchronize()?)
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
    /// GiB-sized results run several times slower), into a reused vector (no page faults on its
    /// second use).
    pub(crate) fn download_into(&self, src: &CudaSlice<u64>, out: &mut Vec<u64>) -> Result<(), GpuError> {
        out.clear();
        self.download_prefix(src, src.len(), out)
    }

    /// Appends the first `len` words of `src` to `out` (through the staging buffer when large).
    pub(crate) fn download_prefix<T: cudarc::driver::DeviceRepr + Copy + Send + Sync + Default>(
        &self,
        src: &CudaSlice<T>,
        len: usize,
        out: &mut Vec<T>,
    ) -> Result<(), GpuError> {
        if len <= 1 << 16 {
            let mut tmp = vec![T::default(); len];
            self.stream.memcpy_dtoh(&src.slice(0..len), &mut tmp)?;
            out.extend_from_slice(&tmp);
            return Ok(());
        }
        let half_len = STAGING_HALF * 8 / std::mem::size_of::<T>();
        let parts: Vec<_> = (0..len).step_by(half_len).map(|a| (a..len.min(a + half_len), None)).collect();
        self.download_parts(src, parts, out)
    }

    /// Downloads `src` part by part, appending to `out`, in order, through the two halves
    /// of the pinned staging buffer: part i+1 streams into one half while part i is copied out of
    /// the other. A part with an event is copied on the second stream once the event has passed,
    /// so that it overlaps the kernels still running for the later parts. Parts hold at most
    /// [`STAGING_HALF`] words' worth of `T` and cover `src` in order.
    pub(crate) fn download_parts<T: cudarc::driver::DeviceRepr + Copy + Send + Sync>(
        &self,
        src: &CudaSlice<T>,
        parts: Vec<(std::ops::Range<usize>, Option<cudarc::driver::CudaEvent>)>,
        out: &mut Vec<T>,
    ) -> Result<(), GpuError> {
        out.reserve(parts.iter().map(|p| p.0.len()).sum());
        // The staging halves hold STAGING_HALF words; parts count `T`s.
        let half_len = STAGING_HALF * 8 / std::mem::size_of::<T>();
        let copy = self.copy_stream();
        let mut guard = self.staging()?;
        let staging = guard.as_mut().expect("made by staging()").as_mut_slice()?;
        // SAFETY: the pinned words are plain memory; `T` (u32 or u64) has no invalid bit
        // patterns and an alignment that divides 8.
        let staging = unsafe { std::slice::from_raw_parts_mut(staging.as_mut_ptr().cast::<T>(), 2 * half_len) };
        let (a, b) = staging.split_at_mut(half_len);
        let issue = |(range, ready): &(std::ops::Range<usize>, Option<cudarc::driver::CudaEvent>),
                     half: &mut [T]|
         -> Result<(), GpuError> {
            if range.len() > half_len {
                return Err(GpuError::Input("download part larger than the staging buffer".into()));
            }
            match ready {
                Some(ev) => {
                    copy.wait(ev)?;
                    // The raw copy: cudarc's own tracking would make it wait for the buffer's
                    // last write, i.e. for the last part's kernels, not for this part's event.
                    let (base, _sync) = src.device_ptr(&self.stream);
                    let at = base + (range.start * std::mem::size_of::<T>()) as u64;
                    // SAFETY: `range` lies inside `src`, `half` is page-locked and outlives the
                    // copy (the loop synchronizes the copy stream before reading or reusing it),
                    // and the event orders the copy after the kernels that write the range.
                    unsafe {
                        cudarc::driver::result::memcpy_dtoh_async(&mut half[..range.len()], at, copy.cu_stream())
                    }?;
                }
                None => self.stream.memcpy_dtoh(&src.slice(range.clone()), &mut half[..range.len()])?,
            }
            Ok(())
        };
        let done_of = |p: &(std::ops::Range<usize>, Option<cudarc::driver::CudaEvent>)| -> Result<(), GpuError> {
            match p.1 {
                Some(_) => copy.synchronize()?,
                None => self.stream.synchronize()?,
            }
            Ok(())
        };
        if let Some(first) = parts.first() {
            issue(first, a)?;
        }
        for (i, p) in parts.iter().enumerate() {
            done_of(p)?;
            let (next, done) = if i % 2 == 0 { (&mut *b, &*a) } else { (&mut *a, &*b) };
            if let Some(q) = parts.get(i + 1) {
                issue(q, next)?;
            }
            extend_parallel(out, &done[..p.0.len()]);
        }
        self.stream.synchronize()?;
        copy.synchronize()?;
        Ok(())
    }

    /// The second stream, for copies beside the kernels (the main stream where the driver
    /// refuses another).
    pub(crate) fn copy_stream(&self) -> Arc<CudaStream> {
        self.copy.get_or_init(|| self.ctx.new_stream().unwrap_or_else(|_| self.stream.clone())).clone()
    }

    /// The page-locked staging buffer (two halves of [`STAGING_HALF`] words), made on first use.
    fn staging(&self) -> Result<std::sync::MutexGuard<'_, Option<PinnedHostSlice<u64>>>, GpuError> {
        let mut guard = self.staging.lock().map_err(|_| GpuError::Cuda("staging buffer poisoned".into()))?;
        if guard.is_none() {
            // SAFETY: every element is written (by a copy or the host) before it is read.
            *guard = Some(unsafe {
                self.ctx.alloc_pinned_with_flags::<u64>(2 * STAGING_HALF, cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE)
            }?);
        }
        Ok(guard)
    }

    /// Host → device in parts of at most [`STAGING_HALF`] words through the two pinned halves:
    /// part `i` is copied into one half on the host (several threads) while the DMA engine
    /// still reads part `i − 1` out of the other, then into `tmp[i % 2]` on the stream, and
    /// `then(i, range, &tmp[i % 2])` queues the work that consumes it (stream order keeps the
    /// next copy into that buffer behind it). Pageable copies of GiB-sized data run at about
    /// 1 GB/s; this runs at the pinned rate.
    pub(crate) fn upload_staged(
        &self,
        src: &[u64],
        part: usize,
        tmp: &mut [CudaSlice<u64>; 2],
        mut then: impl FnMut(usize, std::ops::Range<usize>, &CudaSlice<u64>) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        if part == 0 || part > STAGING_HALF || tmp.iter().any(|t| t.len() < part) {
            return Err(GpuError::Input(format!("upload parts of {part} words")));
        }
        let mut guard = self.staging()?;
        let staging = guard.as_mut().expect("made by staging()").as_mut_slice()?;
        let (a, b) = staging.split_at_mut(STAGING_HALF);
        let halves = [a, b];
        let mut copied: [Option<cudarc::driver::CudaEvent>; 2] = [None, None];
        for (i, start) in (0..src.len()).step_by(part).enumerate() {
            let range = start..src.len().min(start + part);
            let h = i % 2;
            if let Some(ev) = copied[h].take() {
                ev.synchronize()?; // the DMA engine is done reading this half
            }
            let half = &mut halves[h][..range.len()];
            // SAFETY: u64 has no invalid bit patterns; the view is written whole just below.
            let uninit = unsafe { &mut *(half as *mut [u64] as *mut [std::mem::MaybeUninit<u64>]) };
            copy_parallel(uninit, &src[range.clone()]);
            let (at, _sync) = tmp[h].device_ptr_mut(&self.stream);
            // SAFETY: `half` is page-locked and not touched again until the event recorded after
            // the copy has passed; `tmp[h]` holds at least `range.len()` words.
            unsafe { cudarc::driver::result::memcpy_htod_async(at, &*half, self.stream.cu_stream()) }?;
            drop(_sync);
            copied[h] = Some(self.stream.record_event(None)?);
            then(i, range, &tmp[h])?;
        }
        self.stream.synchronize()?;
        Ok(())
    }

    /// The loaded entry point of kernel `k` (`Kernel::ALL` order is the discriminant order).
    pub(crate) fn function(&self, k: Kernel) -> &CudaFunction {
        &self.functions[k as usize]
    }
}
