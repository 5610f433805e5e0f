//! What differs between the cores, behind one small interface: semihosting calls (the host's
//! files, command line, console and exit under QEMU), the defmt logger over them, a 64-bit
//! instruction-proportional counter, and stack painting.
//!
//! Semihosting is the one transport on every target: Arm's `bkpt 0xAB` and RISC-V's
//! `slli x0,x0,0x1f; ebreak; srai x0,x0,7` take the same operations and arguments (the RISC-V
//! semihosting spec reuses Arm's), and QEMU implements both, so the defmt stream, the probe
//! stream and the exit status travel the same way on all five boards. On a real board the
//! logger is `defmt-rtt` and the probes come over RTT or a UART (`board-example/`).

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

const SYS_OPEN: usize = 0x01;
const SYS_CLOSE: usize = 0x02;
const SYS_WRITE: usize = 0x05;
const SYS_READ: usize = 0x06;
const SYS_GET_CMDLINE: usize = 0x15;
const SYS_EXIT: usize = 0x18;
/// `ADP_Stopped_ApplicationExit` (exit status 0) and `ADP_Stopped_RunTimeErrorUnknown` (1).
const EXIT_OK: usize = 0x20026;
const EXIT_FAIL: usize = 0x20024;

/// One semihosting call: operation `op` with argument `arg` (a pointer to its parameter block).
///
/// # Safety
/// `arg` must be what operation `op` expects (a valid parameter block for the call).
#[inline(never)]
unsafe fn semihost(op: usize, arg: usize) -> usize {
    let ret: usize;
    #[cfg(target_arch = "arm")]
    core::arch::asm!("bkpt #0xab", inout("r0") op => ret, in("r1") arg, options(nostack));
    // The magic sequence must be uncompressed: QEMU reads the words around the ebreak.
    #[cfg(target_arch = "riscv32")]
    core::arch::asm!(
        ".option push",
        ".option norvc",
        "slli x0, x0, 0x1f",
        "ebreak",
        "srai x0, x0, 7",
        ".option pop",
        inout("a0") op => ret,
        in("a1") arg,
        options(nostack)
    );
    ret
}

/// Opens a host file (`mode`: 0 = "r", 4 = "w"); `path` ends in a NUL byte.
pub fn open(path: &[u8], mode: usize) -> Option<usize> {
    let block = [path.as_ptr() as usize, mode, path.len().saturating_sub(1)];
    // SAFETY: block is SYS_OPEN's parameter block; path outlives the call.
    let h = unsafe { semihost(SYS_OPEN, block.as_ptr() as usize) };
    (h != usize::MAX).then_some(h)
}

/// Closes a host file.
pub fn close(handle: usize) {
    let block = [handle];
    // SAFETY: block is SYS_CLOSE's parameter block.
    unsafe { semihost(SYS_CLOSE, block.as_ptr() as usize) };
}

/// Reads up to `buf.len()` bytes; returns how many came (0 at the end of the file).
pub fn read(handle: usize, buf: &mut [u8]) -> usize {
    let block = [handle, buf.as_mut_ptr() as usize, buf.len()];
    // SAFETY: the host writes at most buf.len() bytes into buf; it returns the bytes NOT read.
    let left = unsafe { semihost(SYS_READ, block.as_ptr() as usize) };
    buf.len().saturating_sub(left)
}

fn write(handle: usize, bytes: &[u8]) {
    let block = [handle, bytes.as_ptr() as usize, bytes.len()];
    // SAFETY: the host reads bytes.len() bytes from bytes.
    unsafe { semihost(SYS_WRITE, block.as_ptr() as usize) };
}

/// The command line QEMU was given (`-semihosting-config …,arg=…`), into `buf`.
pub fn cmdline(buf: &mut [u8]) -> &[u8] {
    let mut block = [buf.as_mut_ptr() as usize, buf.len()];
    // SAFETY: the host writes at most buf.len() bytes into buf and the length into block[1].
    let ok = unsafe { semihost(SYS_GET_CMDLINE, block.as_mut_ptr() as usize) } == 0;
    // SAFETY: block lives on; the host wrote it behind the compiler's back.
    let len = unsafe { core::ptr::read_volatile(&block[1]) }.min(buf.len());
    if ok {
        &buf[..len]
    } else {
        &[]
    }
}

/// Ends the emulation with exit status 0 (`ok`) or 1.
pub fn exit(ok: bool) -> ! {
    loop {
        // SAFETY: SYS_EXIT takes the reason code itself on 32-bit targets.
        unsafe { semihost(SYS_EXIT, if ok { EXIT_OK } else { EXIT_FAIL }) };
    }
}

/// The host console handle of the defmt stream (`:tt` opened for writing), 0 until opened.
static CONSOLE: AtomicU32 = AtomicU32::new(0);
static TAKEN: AtomicBool = AtomicBool::new(false);
static mut ENCODER: defmt::Encoder = defmt::Encoder::new();

fn console_write(bytes: &[u8]) {
    let mut h = CONSOLE.load(Ordering::Relaxed) as usize;
    if h == 0 {
        h = open(b":tt\0", 4).unwrap_or(1);
        CONSOLE.store(h as u32, Ordering::Relaxed);
    }
    write(h, bytes);
}

/// defmt frames to the host's standard output through semihosting. The firmware runs no
/// interrupt that logs, so a flag (load/store only: thumbv6m has no compare-and-swap) guards
/// against re-entry instead of a critical section.
#[defmt::global_logger]
struct Logger;

// SAFETY: acquire/release bracket every frame; TAKEN forbids nesting.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        if TAKEN.load(Ordering::Relaxed) {
            exit(false);
        }
        TAKEN.store(true, Ordering::Relaxed);
        // SAFETY: only between acquire and release, which TAKEN makes exclusive.
        unsafe { (*core::ptr::addr_of_mut!(ENCODER)).start_frame(console_write) }
    }
    unsafe fn flush() {}
    unsafe fn release() {
        (*core::ptr::addr_of_mut!(ENCODER)).end_frame(console_write);
        TAKEN.store(false, Ordering::Relaxed);
    }
    unsafe fn write(bytes: &[u8]) {
        (*core::ptr::addr_of_mut!(ENCODER)).write(bytes, console_write);
    }
}

/// A counter that advances in proportion to executed instructions under `-icount shift=0`
/// (Arm: SysTick on the core clock, its 24-bit wraps counted by its exception; RISC-V:
/// `minstret`). [`calibrate`] gives the ratio.
#[cfg(target_arch = "arm")]
mod counter {
    use core::sync::atomic::{AtomicU32, Ordering};
    use cortex_m::peripheral::{syst::SystClkSource, SYST};
    static WRAPS: AtomicU32 = AtomicU32::new(0);

    #[cortex_m_rt::exception]
    fn SysTick() {
        WRAPS.store(WRAPS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    pub fn start() {
        // SAFETY: the firmware's only user of SysTick, before any reading.
        let mut syst = unsafe { cortex_m::Peripherals::steal() }.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
    }

    /// Ticks since [`start`]: wraps · 2^24 + (2^24 − 1 − current); read again if the
    /// exception counted a wrap in between (it runs at the next instruction after the wrap).
    pub fn now() -> u64 {
        loop {
            let w = WRAPS.load(Ordering::Relaxed);
            let cur = SYST::get_current();
            if WRAPS.load(Ordering::Relaxed) == w {
                return ((w as u64) << 24) + (0x00FF_FFFF - cur) as u64;
            }
        }
    }

    /// A register-only countdown loop of `2·turns` instructions (`subs; bne`).
    pub fn spin(turns: u32) {
        // SAFETY: registers only.
        unsafe { core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) turns => _, options(nomem, nostack)) }
    }
}

#[cfg(target_arch = "riscv32")]
mod counter {
    pub fn start() {}

    /// `minstret` (64 bits, high half re-read until consistent).
    pub fn now() -> u64 {
        loop {
            let (hi, lo, hi2): (u32, u32, u32);
            // SAFETY: reads of the machine-mode instruction counter.
            unsafe {
                core::arch::asm!("csrr {0}, minstreth", "csrr {1}, minstret", "csrr {2}, minstreth",
                    out(reg) hi, out(reg) lo, out(reg) hi2, options(nomem, nostack));
            }
            if hi == hi2 {
                return ((hi as u64) << 32) | lo as u64;
            }
        }
    }

    /// A register-only countdown loop of `2·turns` instructions (`addi; bnez`).
    pub fn spin(turns: u32) {
        // SAFETY: registers only.
        unsafe {
            core::arch::asm!("1:", "addi {0}, {0}, -1", "bnez {0}, 1b", inout(reg) turns => _, options(nomem, nostack))
        }
    }
}

pub use counter::{now, start as start_counter};

/// Counter units of a loop of known length: `(instructions, units)`.
pub fn calibrate() -> (u64, u64) {
    const TURNS: u32 = 100_000;
    let t = now();
    counter::spin(TURNS);
    (2 * TURNS as u64, now() - t)
}

const PAINT: u32 = 0xDEAD_BEEF;

extern "C" {
    static mut __sheap: u32;
    static _stack_start: u32;
}

fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer.
    #[cfg(target_arch = "arm")]
    unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack))
    };
    // SAFETY: reads the stack pointer.
    #[cfg(target_arch = "riscv32")]
    unsafe {
        core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack))
    };
    sp
}

/// Paints the free RAM between the statics and the current stack pointer, so that the stack's
/// high-water mark can be measured later.
pub fn paint_stack() {
    // SAFETY: the words between the end of the statics and 64 bytes below the stack pointer are
    // unused at this point.
    unsafe {
        let mut p = core::ptr::addr_of_mut!(__sheap);
        let sp = stack_pointer();
        while (p as usize) < sp - 64 {
            p.write_volatile(PAINT);
            p = p.add(1);
        }
    }
}

/// Bytes of stack ever used: from the top of RAM down to the lowest overwritten painted word.
pub fn stack_peak() -> u32 {
    // SAFETY: reads of RAM between the statics and the top of the stack.
    unsafe {
        let mut p = core::ptr::addr_of!(__sheap);
        let top = core::ptr::addr_of!(_stack_start) as usize;
        while (p as usize) < top && p.read_volatile() == PAINT {
            p = p.add(1);
        }
        (top - p as usize) as u32
    }
}

/// Bytes of RAM the stack may grow into: from the end of the statics to the top.
pub fn stack_room() -> u32 {
    (core::ptr::addr_of!(_stack_start) as usize - core::ptr::addr_of!(__sheap) as usize) as u32
}

#[defmt::panic_handler]
fn defmt_panic() -> ! {
    exit(false)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    defmt::error!("panic");
    exit(false)
}
