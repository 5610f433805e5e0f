//! GBNN firmware for QEMU's `lm3s6965evb` (Cortex-M3, 64 KiB RAM, no heap).
//!
//! Builds an 8×50 network from the core's portable PRNG, retrieves the same probes with every
//! rule, and logs through defmt over semihosting: the configuration, each rule's digest (FNV-1a
//! of all final bit-packed states) and instructions per retrieval, and the overall digest. A host
//! test recomputes the digest from the logged configuration and must find the same number.
//!
//! Instruction counts: QEMU runs with `-icount shift=0`, so virtual time advances a fixed step per
//! executed instruction and SysTick (core clock) counts in proportion to instructions. A
//! calibration loop of known length (`subs; bne`: 2 instructions per turn) gives instructions per
//! tick; each retrieval is timed by SysTick alone.
#![no_std]
#![no_main]

use cortex_m::peripheral::{syst::SystClkSource, SYST};
use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use defmt_semihosting as _;
use heapless::Vec;
use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{weight_words, FixedNetwork, Params, Rule};

const C: usize = 8;
const L: usize = 50;
/// Workload defaults; QEMU's `-semihosting-config …,arg=stored=N,arg=probes=K,arg=erased=E,arg=seed=S`
/// overrides them (read through semihosting's GET_CMDLINE).
const STORED: u64 = 400;
const PROBES: u64 = 100;
const ERASED: usize = 5;
const SEED: u64 = 1;
const CALIBRATION_TURNS: u32 = 100_000;

struct RuleReport {
    rule: Rule,
    digest: u64,
    ticks: u64,
    iterations: u32,
}

const PAINT: u32 = 0xDEAD_BEEF;

extern "C" {
    static mut __sheap: u32;
    static _stack_start: u32;
}

/// Paints the free RAM between the statics and the current stack pointer, so the stack's
/// high-water mark can be measured later.
fn paint_stack() {
    // SAFETY: the words between the end of the statics and 64 bytes below the stack pointer are
    // unused at this point.
    unsafe {
        let mut p = core::ptr::addr_of_mut!(__sheap);
        let sp = cortex_m::register::msp::read() as *mut u32;
        while (p as usize) < sp as usize - 64 {
            p.write_volatile(PAINT);
            p = p.add(1);
        }
    }
}

/// Bytes of stack ever used: from the top of RAM down to the lowest overwritten painted word.
fn stack_peak() -> u32 {
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

/// The workload: messages stored, probes, erased clusters, seed (probes use `seed + 1`).
struct Workload {
    stored: u64,
    probes: u64,
    erased: usize,
    seed: u64,
}

/// Defaults overridden by `key=value` words of the semihosting command line.
fn workload() -> Workload {
    let mut w = Workload { stored: STORED, probes: PROBES, erased: ERASED, seed: SEED };
    let mut buf = [0u8; 160];
    let mut block = [buf.as_mut_ptr() as usize, buf.len()];
    // SAFETY: GET_CMDLINE writes at most `buf.len()` bytes into `buf` and the length into block[1].
    let ok =
        unsafe { cortex_m_semihosting::syscall1(cortex_m_semihosting::nr::GET_CMDLINE, block.as_mut_ptr() as usize) }
            == 0;
    let len = unsafe { core::ptr::read_volatile(&block[1]) }.min(buf.len());
    if !ok {
        return w;
    }
    for word in buf[..len].split(|&b| b == b' ' || b == 0) {
        let Some(eq) = word.iter().position(|&b| b == b'=') else { continue };
        let Some(value) = parse(&word[eq + 1..]) else { fail_msg("a command-line value is not a number") };
        match &word[..eq] {
            b"stored" => w.stored = value,
            b"probes" => w.probes = value,
            b"erased" => w.erased = value as usize,
            b"seed" => w.seed = value,
            _ => fail_msg("unknown command-line key (stored, probes, erased, seed)"),
        }
    }
    w
}

fn parse(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        if d.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add((d - b'0') as u64)
        } else {
            None
        }
    })
}

/// SysTick ticks between two readings of the 24-bit down-counter.
fn elapsed(start: u32, end: u32) -> u64 {
    (start.wrapping_sub(end) & 0x00FF_FFFF) as u64
}

#[entry]
fn main() -> ! {
    paint_stack();
    let mut cp = cortex_m::Peripherals::take().unwrap();
    cp.SYST.set_clock_source(SystClkSource::Core);
    cp.SYST.set_reload(0x00FF_FFFF);
    cp.SYST.clear_current();
    cp.SYST.enable_counter();

    let t0 = SYST::get_current();
    // SAFETY: a register-only countdown loop.
    unsafe {
        core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) CALIBRATION_TURNS => _, options(nomem, nostack));
    }
    let cal_ticks = elapsed(t0, SYST::get_current());

    let mut net = match FixedNetwork::<{ weight_words(C, L) }>::new(C, L) {
        Ok(n) => n,
        Err(e) => fail(e),
    };
    let g = *net.geometry();
    let wl = workload();
    let mut m = [0u16; C];
    for k in 0..wl.stored {
        message(&g, wl.seed, k, &mut m);
        if let Err(e) = net.store(&m) {
            fail(e);
        }
    }
    defmt::println!(
        "config C={=usize} L={=usize} stored={=u64} probes={=u64} erased={=usize} message_seed={=u64} probe_seed={=u64} gamma={=u32} max_iter={=u32}",
        C, L, wl.stored, wl.probes, wl.erased, wl.seed, wl.seed.wrapping_add(1), 2u32, 20u32
    );
    let plan = match ProbePlan::new(g, wl.seed, wl.stored, wl.seed.wrapping_add(1), wl.probes, wl.erased) {
        Ok(p) => p,
        Err(e) => fail(e),
    };
    let params = Params { gamma: 2, max_iter: 20 };
    let (mut state, mut scratch) = ([0u64; C], [0u64; C]);
    let mut reports: Vec<RuleReport, 4> = Vec::new();
    let mut total = FNV_OFFSET;
    for rule in Rule::ALL {
        let mut r = RuleReport { rule, digest: FNV_OFFSET, ticks: 0, iterations: 0 };
        for p in 0..wl.probes {
            plan.probe(p, &mut m);
            let t = SYST::get_current();
            let stats = match net.retrieve(&m, rule, params, &mut state, &mut scratch) {
                Ok(s) => s,
                Err(e) => fail(e),
            };
            r.ticks += elapsed(t, SYST::get_current());
            r.iterations += stats.iterations;
            r.digest = fnv1a_words(r.digest, &state);
            total = fnv1a_words(total, &state);
        }
        let _ = reports.push(r);
    }
    defmt::println!(
        "calibration turns={=u32} instructions={=u32} ticks={=u64}",
        CALIBRATION_TURNS,
        2 * CALIBRATION_TURNS,
        cal_ticks
    );
    for r in &reports {
        let instructions = r.ticks * 2 * CALIBRATION_TURNS as u64 / cal_ticks.max(1) / wl.probes.max(1);
        defmt::println!(
            "rule {=str} digest={=u64} ticks={=u64} iterations={=u32} retrievals={=u64} instructions_per_retrieval={=u64}",
            r.rule.name(), r.digest, r.ticks, r.iterations, wl.probes, instructions
        );
    }
    defmt::println!("memory weights={=usize} stack_peak={=u32}", core::mem::size_of_val(&net), stack_peak());
    defmt::println!("digest {=u64}", total);
    cortical_a();
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

/// The pixels of the cortical network's configuration A training list (build.rs).
const DIGITS_A: [u8; 640] = include!(concat!(env!("OUT_DIR"), "/digits_a.rs"));

/// Configuration A of the cortical network (3 levels × 16 minicolumns, 10 digits, 60 epochs,
/// exposure 4, seed 1): the LGN, training and the evaluation pass by the core, then the spec's
/// two SHA-256 digests, which the host test compares with the spec's.
#[inline(never)]
fn cortical_a() {
    use neurobits_core::cortical::{
        digest, evaluate, lgn,
        rules::{Rule, LTD},
        train, CpuLearner, FixedNetwork, Protocol, Schedule,
    };
    let mut fixed = match FixedNetwork::<7, 16, 32>::new(3) {
        Ok(n) => n,
        Err(e) => fail(e),
    };
    let mut net = fixed.net();
    let geo = net.geo;
    net.init(1);
    let mut images = [0u64; 40];
    for (k, x) in images.chunks_mut(4).enumerate() {
        let img = lgn::Image { pixels: &DIGITS_A[k * 64..(k + 1) * 64], height: 8, width: 8, upsample: 1 };
        if let Err(e) = lgn::bottom_inputs(&geo, img, lgn::THETA, x) {
            fail(e);
        }
    }
    let (mut winners, mut prev) = ([-1i32; 7], [-1i32; 7]);
    let mut cpu = CpuLearner {
        net,
        images: &images,
        winners: &mut winners,
        prev: &mut prev,
        schedule: Schedule::Synchronous,
        t: 0,
        seed: 1,
        rule: Rule::spec(LTD),
    };
    let Ok(()) = train(&mut cpu, &mut [0u32; 10], &Protocol::default(), |_| {});
    let steps = cpu.t;
    let mut eval = [0i32; 70];
    evaluate(&mut cpu.net, &images, &mut eval, Rule::spec(LTD));
    let (w, e) = (digest::weights_sha256(&geo, cpu.net.w), digest::winners_sha256(&geo, &eval));
    let (mut wh, mut eh) = ([0u8; 64], [0u8; 64]);
    defmt::println!(
        "cortical steps={=u64} weights_bytes={=usize} weights_sha256={=str} winners_sha256={=str}",
        steps,
        core::mem::size_of_val(cpu.net.w),
        hex(&w, &mut wh),
        hex(&e, &mut eh)
    );
}

/// Lowercase hex of a digest into `out`.
fn hex<'a>(d: &[u8; 32], out: &'a mut [u8; 64]) -> &'a str {
    const H: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in d.iter().enumerate() {
        out[2 * i] = H[(b >> 4) as usize];
        out[2 * i + 1] = H[(b & 15) as usize];
    }
    core::str::from_utf8(out).unwrap_or("?")
}

fn fail_msg(msg: &str) -> ! {
    defmt::error!("{=str}", msg);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}

fn fail(e: neurobits_core::Error) -> ! {
    defmt::error!("core error: {}", e);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}

#[defmt::panic_handler]
fn defmt_panic() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    defmt::error!("panic");
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
