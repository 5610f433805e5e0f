//! Page-locked host memory a caller keeps between calls: [`Pinned`].
//!
//! A copy between the GPU and ordinary (pageable) memory goes through the driver's own staging
//! buffer, one host copy per transfer, and blocks the thread that issues it; from page-locked
//! memory the GPU's copy engine reads and writes directly, at the link's speed, and the call
//! returns at once. Four GPUs of one host copying their probes up and results down through
//! pageable memory at the same time were what kept the replicated GBNN from scaling (issue 37,
//! manual `gpu.md`). The allocation is *portable* (`CU_MEMHOSTALLOC_PORTABLE`): page-locked for
//! every GPU of the process, not only the one whose context made it, so one buffer serves the
//! parts of a batch split over several GPUs. Allocating it costs milliseconds per hundred MB, so
//! it is made once and reused, as PyTorch's `pin_memory` tensors are.

use cudarc::driver::{sys, CudaContext};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::{Gpu, GpuError};

/// Plain values whose every bit pattern is valid (zeroed memory is a valid slice of them).
///
/// # Safety
/// Implement only for types with no padding, no invalid bit patterns and no drop glue.
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

// SAFETY: integers: every bit pattern is a value.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: `Decoded` is `repr(transparent)` over `u32`, and any `u32` is a `Decoded` value.
unsafe impl Plain for neurobits_core::gbnn::decode::Decoded {}

/// `len` values in page-locked, portable host memory, zeroed at allocation; derefs to a slice.
pub struct Pinned<T: Plain> {
    ptr: *mut T,
    len: usize,
    /// The context that allocated it: current while it is freed.
    ctx: Arc<CudaContext>,
}

// SAFETY: the memory is owned by this value alone (like a `Box<[T]>`), `T` is `Send + Sync`.
unsafe impl<T: Plain> Send for Pinned<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: Plain> Sync for Pinned<T> {}

impl<T: Plain> Pinned<T> {
    /// `len` zeroed values, page-locked for every GPU of the process.
    pub fn zeroed(gpu: &Gpu, len: usize) -> Result<Self, GpuError> {
        let bytes = len
            .checked_mul(size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| GpuError::Input(format!("{len} values do not fit in host memory")))?;
        gpu.ctx.bind_to_thread()?;
        let mut p = std::ptr::null_mut();
        // SAFETY: `p` receives the allocation; a zero-byte request is made one byte so that the
        // pointer is real (and freed the same way).
        unsafe { sys::cuMemHostAlloc(&mut p, bytes.max(1), sys::CU_MEMHOSTALLOC_PORTABLE) }.result()?;
        // SAFETY: `p` is `bytes` writable bytes, just allocated.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
        Ok(Pinned { ptr: p.cast(), len, ctx: gpu.ctx.clone() })
    }

    /// A page-locked copy of `src`.
    pub fn from_slice(gpu: &Gpu, src: &[T]) -> Result<Self, GpuError> {
        let mut p = Self::zeroed(gpu, src.len())?;
        p.copy_from_slice(src);
        Ok(p)
    }
}

impl<T: Plain> Pinned<T> {
    /// Values held (without making a slice of them, unlike the slice's `len` through `Deref`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Values `r` alone, as a slice that covers no other value: while a copy is writing another
    /// part of the buffer, no reference may span it (`Deref` makes one of the whole buffer).
    /// Panics if `r` is not inside the buffer.
    pub(crate) fn range(&self, r: std::ops::Range<usize>) -> &[T] {
        assert!(r.start <= r.end && r.end <= self.len, "values {r:?} of {}", self.len);
        // SAFETY: `r` lies inside the `len` initialised values `ptr` holds (checked).
        unsafe { std::slice::from_raw_parts(self.ptr.add(r.start), r.len()) }
    }

    /// [`Pinned::range`], writable.
    pub(crate) fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [T] {
        assert!(r.start <= r.end && r.end <= self.len, "values {r:?} of {}", self.len);
        // SAFETY: as in `range`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.len()) }
    }
}

impl<T: Plain> Deref for Pinned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised values (zeroed, valid for `Plain`) owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Plain> DerefMut for Pinned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Plain> Drop for Pinned<T> {
    fn drop(&mut self) {
        // Nothing can be reported from a drop; the memory is freed with the process otherwise.
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from `cuMemHostAlloc` and no borrow of it outlives `self`;
            // every call that copies into or out of it synchronises before it returns.
            let _ = unsafe { sys::cuMemFreeHost(self.ptr.cast()) };
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for Pinned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pinned({} values)", self.len)
    }
}
