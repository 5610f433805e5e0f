//! GPU kernels of neurobits, compiled by rustc's own `nvptx64-nvidia-cuda` backend.
//!
//! One file per model ([`gbnn`], [`flyhash`], [`ocnn`]). Every entry point takes the fields of one
//! `#[repr(C)]` argument struct from `neurobits_core::<model>::kernels` as its parameters, maps
//! threads onto a core step function and does nothing else: no rule is written here. The
//! `kernel!` macro declares the entry point and checks at compile time that its name and its
//! parameters (names, types, order) are the ones its argument struct defines.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, link_llvm_intrinsics)]
// link_llvm_intrinsics: the warp shuffle (`llvm.nvvm.shfl.sync.bfly.i32`) of the OCNN update.
#![allow(internal_features)]

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x, trap};

pub mod flyhash;
pub mod gbnn;
pub mod ocnn;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { trap() }
}

/// Declares a kernel entry point `$name` whose parameters are the fields of the argument struct
/// `$ty`, and rebuilds the struct as `$a`. Fails to compile unless `$ty`'s `KernelArgs::KERNEL`
/// is named `$name`, and the listed parameters are exactly `$ty`'s fields (the struct literal),
/// with its types (idem), in declaration order (the offsets).
macro_rules! kernel {
    ($(#[$doc:meta])* fn $name:ident($a:ident: $ty:ident { $($field:ident: $fty:ty,)* }) $body:block) => {
        const _: () = assert!(
            neurobits_core::kernel::same_name(
                <$ty as neurobits_core::kernel::KernelArgs>::KERNEL.name(),
                stringify!($name)
            ),
            "kernel name does not match its argument struct"
        );
        const _: () = assert!(
            neurobits_core::kernel::ascending(&[$(core::mem::offset_of!($ty, $field)),*]),
            "kernel parameters are not in the argument struct's field order"
        );
        $(#[$doc])*
        ///
        /// # Safety
        /// Launched by `gpu-host` with every buffer of the argument struct sized as the
        /// struct's documentation says.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($field: $fty),*) {
            let $a = $ty { $($field),* };
            $body
        }
    };
}
pub(crate) use kernel;

/// This thread's global index along x.
#[inline(always)]
pub(crate) fn gid() -> usize {
    // SAFETY: reading special registers has no preconditions.
    unsafe { _block_idx_x() as usize * _block_dim_x() as usize + _thread_idx_x() as usize }
}

/// Aborts the kernel (an argument the host should never have sent).
#[inline(always)]
pub(crate) fn abort() -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { trap() }
}

/// `(i / d, i % d)`, in 32-bit arithmetic when it fits (64-bit division is a long software
/// sequence on the GPU).
#[inline(always)]
pub(crate) fn split(i: usize, d: usize) -> (usize, usize) {
    if (i | d) >> 32 == 0 {
        let (i, d) = (i as u32, d as u32);
        ((i / d) as usize, (i % d) as usize)
    } else {
        (i / d, i % d)
    }
}
