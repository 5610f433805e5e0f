//! GPU kernels of neurobits, compiled by rustc's own `nvptx64-nvidia-cuda` backend.
//!
//! One file per model ([`gbnn`], [`flyhash`], [`ocnn`]). Every entry point takes the fields of one
//! `#[repr(C)]` argument struct from `neurobits_core::<model>::kernels` as its parameters, maps
//! threads onto a core step function and does nothing else: no rule is written here. The
//! `kernel!` macro declares the entry point and checks at compile time that its name and its
//! parameters (names, types, order) are the ones its argument struct defines.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, link_llvm_intrinsics, asm_experimental_arch)]
// link_llvm_intrinsics: the warp shuffles (`llvm.nvvm.shfl.sync.*`); asm_experimental_arch:
// `fence.acq_rel.gpu` of the cortical work queue.
#![allow(internal_features)]

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _thread_idx_x, trap};

pub mod cortical;
pub mod flyhash;
pub mod gbnn;
pub mod ocnn;
mod smem;

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

/// Threads in the whole grid along x (a grid-stride loop's step).
#[inline(always)]
pub(crate) fn grid_threads() -> usize {
    // SAFETY: reading special registers has no preconditions.
    unsafe { _grid_dim_x() as usize * _block_dim_x() as usize }
}

/// Aborts the kernel (an argument the host should never have sent).
#[inline(always)]
pub(crate) fn abort() -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { trap() }
}

/// `(i / d, i % d)`, by a shift when `d` is a power of two, else in 32-bit arithmetic when it
/// fits (64-bit division is a long software sequence on the GPU).
#[inline(always)]
pub(crate) fn split(i: usize, d: usize) -> (usize, usize) {
    // A power of two (a cluster's words, most erased counts): a shift and a mask.
    if d.is_power_of_two() {
        (i >> d.trailing_zeros(), i & (d - 1))
    } else if (i | d) >> 32 == 0 {
        let (i, d) = (i as u32, d as u32);
        ((i / d) as usize, (i % d) as usize)
    } else {
        (i / d, i % d)
    }
}

extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly(mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.or"]
    fn redux_or_sync(value: u32, mask: u32) -> u32;
}

/// Bit `l` set iff `pred` holds on lane `l` (all 32 lanes take part).
#[inline(always)]
pub(crate) fn ballot(pred: bool) -> u32 {
    // SAFETY: called by all 32 lanes of a converged warp.
    unsafe { vote_ballot_sync(u32::MAX, pred) }
}

/// The OR of `v` over the warp, on every lane (all 32 lanes take part; one `redux.sync`).
#[inline(always)]
pub(crate) fn or_lanes(v: u32) -> u32 {
    // SAFETY: called by all 32 lanes of a converged warp (sm_80 and later).
    unsafe { redux_or_sync(v, u32::MAX) }
}

/// Whether `pred` holds on any lane of the warp (all 32 lanes take part).
#[inline(always)]
pub(crate) fn any_lane(pred: bool) -> bool {
    // SAFETY: called by all 32 lanes of a converged warp.
    unsafe { vote_any_sync(u32::MAX, pred) }
}

/// This thread's index in its block, and its block's index.
#[inline(always)]
pub(crate) fn thread_block() -> (usize, usize) {
    // SAFETY: reading special registers has no preconditions.
    unsafe { (_thread_idx_x() as usize, _block_idx_x() as usize) }
}

/// Lane `l ^ d`'s value of a warp-wide 32-bit word (all 32 lanes take part).
#[inline(always)]
pub(crate) fn xor_lane(v: u32, d: u32) -> u32 {
    // SAFETY: called by all 32 lanes of a converged warp (the kernels return per warp).
    unsafe { shfl_bfly(u32::MAX, v, d, 0x1f) }
}

/// Lane `l ^ d`'s value of a warp-wide 64-bit word: two 32-bit shuffles (all 32 lanes take part).
#[inline(always)]
pub(crate) fn xor_lane64(v: u64, d: u32) -> u64 {
    (xor_lane((v >> 32) as u32, d) as u64) << 32 | xor_lane(v as u32, d) as u64
}

/// `v` combined over the warp by the xor-butterfly `d = 16, 8, 4, 2, 1`: each step a lane takes
/// `op(its value, lane l ^ d's)` through `exchange`; every lane ends with the same value (all
/// 32 lanes take part).
#[inline(always)]
pub(crate) fn warp_reduce<T: Copy>(mut v: T, exchange: impl Fn(T, u32) -> T, op: impl Fn(T, T) -> T) -> T {
    let mut d = 16;
    while d > 0 {
        v = op(v, exchange(v, d));
        d /= 2;
    }
    v
}

/// Lane 0's value of a warp-wide 32-bit word (all 32 lanes take part).
#[inline(always)]
pub(crate) fn from_lane0(v: u32) -> u32 {
    // SAFETY: as for `xor_lane`.
    unsafe { shfl_idx(u32::MAX, v, 0, 0x1f) }
}

/// Lane `src`'s value of a warp-wide 32-bit word (all 32 lanes take part).
#[inline(always)]
pub(crate) fn from_lane(v: u32, src: u32) -> u32 {
    // SAFETY: as for `xor_lane`.
    unsafe { shfl_idx(u32::MAX, v, src, 0x1f) }
}

/// This thread's lane in its warp.
#[inline(always)]
pub(crate) fn lane() -> usize {
    // SAFETY: reading a special register has no preconditions.
    (unsafe { _thread_idx_x() } & 31) as usize
}
