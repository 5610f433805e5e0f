//! The block's dynamic shared memory (`.extern .shared`, sized at launch) through 32-bit
//! shared-window addresses and `ld.shared`/`st.shared`/`red.shared` (generic pointers into shared
//! memory work but cost an address-space check per access).

use core::arch::asm;

core::arch::global_asm!(".extern .shared .align 16 .b8 nb_dyn_smem[];");

/// Address of the first dynamic shared byte (16-byte aligned).
#[inline(always)]
pub(crate) fn base() -> u32 {
    let a: u32;
    // SAFETY: takes the address of the declared shared array; no memory is touched.
    unsafe { asm!("mov.u32 {a}, nb_dyn_smem;", a = out(reg32) a, options(nomem, nostack, pure)) };
    a
}

/// A generic pointer to shared address `a` (for the rare accesses through Rust references).
#[inline(always)]
pub(crate) fn generic<T>(a: u32) -> *mut T {
    let p: u64;
    // SAFETY: converts an address; no memory is touched.
    unsafe {
        asm!("cvta.shared.u64 {p}, {a};", p = out(reg64) p, a = in(reg64) a as u64, options(nomem, nostack, pure))
    };
    p as *mut T
}

/// # Safety
/// `a` is an 8-byte aligned address inside the launch's dynamic shared memory.
#[inline(always)]
pub(crate) unsafe fn ld_u64(a: u32) -> u64 {
    let v: u64;
    unsafe { asm!("ld.shared.u64 {v}, [{a}];", v = out(reg64) v, a = in(reg32) a, options(nostack, readonly)) };
    v
}

/// # Safety
/// As for [`ld_u64`].
#[inline(always)]
pub(crate) unsafe fn st_u64(a: u32, v: u64) {
    unsafe { asm!("st.shared.u64 [{a}], {v};", a = in(reg32) a, v = in(reg64) v, options(nostack)) };
}

/// # Safety
/// `a` is a 2-byte aligned address inside the launch's dynamic shared memory.
#[inline(always)]
pub(crate) unsafe fn ld_u16(a: u32) -> u16 {
    let v: u16;
    unsafe { asm!("ld.shared.u16 {v}, [{a}];", v = out(reg16) v, a = in(reg32) a, options(nostack, readonly)) };
    v
}

/// # Safety
/// As for [`ld_u16`].
#[inline(always)]
pub(crate) unsafe fn st_u16(a: u32, v: u16) {
    unsafe { asm!("st.shared.u16 [{a}], {v};", a = in(reg32) a, v = in(reg16) v, options(nostack)) };
}

/// # Safety
/// `a` is a 4-byte aligned address inside the launch's dynamic shared memory.
#[inline(always)]
pub(crate) unsafe fn ld_u32(a: u32) -> u32 {
    let v: u32;
    unsafe { asm!("ld.shared.u32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) a, options(nostack, readonly)) };
    v
}

/// # Safety
/// As for [`ld_u32`].
#[inline(always)]
pub(crate) unsafe fn st_u32(a: u32, v: u32) {
    unsafe { asm!("st.shared.u32 [{a}], {v};", a = in(reg32) a, v = in(reg32) v, options(nostack)) };
}

/// Adds `v` to the word at `a` (atomically, result unused).
///
/// # Safety
/// As for [`ld_u32`].
#[inline(always)]
pub(crate) unsafe fn red_add_u32(a: u32, v: u32) {
    unsafe { asm!("red.shared.add.u32 [{a}], {v};", a = in(reg32) a, v = in(reg32) v, options(nostack)) };
}

/// Sixteen bytes at `a`.
///
/// # Safety
/// `a` is a 16-byte aligned address inside the launch's dynamic shared memory.
#[inline(always)]
pub(crate) unsafe fn ld_v4(a: u32) -> [u32; 4] {
    let (x, y, z, w): (u32, u32, u32, u32);
    unsafe {
        asm!("ld.shared.v4.u32 {{{x}, {y}, {z}, {w}}}, [{a}];", x = out(reg32) x, y = out(reg32) y, z = out(reg32) z,
             w = out(reg32) w, a = in(reg32) a, options(nostack, readonly))
    };
    [x, y, z, w]
}

/// # Safety
/// As for [`ld_v4`].
#[inline(always)]
pub(crate) unsafe fn st_v4(a: u32, v: [u32; 4]) {
    unsafe {
        asm!("st.shared.v4.u32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) a, x = in(reg32) v[0], y = in(reg32) v[1],
             z = in(reg32) v[2], w = in(reg32) v[3], options(nostack))
    };
}

/// Waits for every thread of the block (`bar.sync 0`); shared writes before it are visible after.
#[inline(always)]
pub(crate) fn sync() {
    // SAFETY: every kernel calling it reaches it with all of its block's threads.
    unsafe { core::arch::nvptx::_syncthreads() };
}

/// Adds `v` to the word at `a` atomically and returns the word before.
///
/// # Safety
/// As for [`ld_u32`].
#[inline(always)]
pub(crate) unsafe fn atom_add_u32(a: u32, v: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!("atom.shared.add.u32 {o}, [{a}], {v};", o = out(reg32) old, a = in(reg32) a, v = in(reg32) v,
             options(nostack))
    };
    old
}

/// Waits for the warp's 32 lanes (`bar.warp.sync`); their shared writes before it are visible to
/// each other after.
#[inline(always)]
pub(crate) fn sync_warp() {
    // SAFETY: called by all 32 lanes of a converged warp.
    unsafe { asm!("bar.warp.sync 0xffffffff;", options(nostack)) };
}

/// ANDs `v` into the word at `a` (atomically, result unused).
///
/// # Safety
/// As for [`ld_u32`].
#[inline(always)]
pub(crate) unsafe fn red_and_u32(a: u32, v: u32) {
    unsafe { asm!("red.shared.and.b32 [{a}], {v};", a = in(reg32) a, v = in(reg32) v, options(nostack)) };
}
