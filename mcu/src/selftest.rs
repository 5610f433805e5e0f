//! The PRNG self-test (feature `selftest`, `mode=selftest`): the firmware builds its own network
//! in RAM from the core's portable PRNG, retrieves the same probes with every rule and logs each
//! rule's digest, so that the host recomputes all of it from the logged configuration; then,
//! where RAM allows, it trains the cortical network's configuration A and logs the spec's
//! SHA-256 digests.

use crate::{fail, platform, time_rules, Args};
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{weight_words, FixedNetwork, Mode, Rule};

/// The self-test's network: 8×50 where RAM holds its 25.6 KB, else 8×16 (8 KB).
#[cfg(any(board = "microbit", board = "sifive_e"))]
const CL: (usize, usize) = (8, 16);
#[cfg(not(any(board = "microbit", board = "sifive_e")))]
const CL: (usize, usize) = (8, 50);

/// Runs the self-test with the workload of `args` (defaults: 400 stored, 100 probes, 5 erased,
/// seed 1; 60 stored and 50 probes on the 8×16 network).
#[inline(never)]
pub fn run(args: &Args) {
    let (c, l) = CL;
    let stored = args.stored.unwrap_or(if l < 50 { 60 } else { 400 });
    let probes = args.probes.unwrap_or(if l < 50 { 50 } else { 100 });
    let mut net = match FixedNetwork::<{ weight_words(CL.0, CL.1) }>::new(c, l) {
        Ok(n) => n,
        Err(e) => fail(e),
    };
    let g = *net.geometry();
    let mut m = [0u16; CL.0];
    for k in 0..stored {
        message(&g, args.seed, k, &mut m);
        if let Err(e) = net.store(&m) {
            fail(e);
        }
    }
    defmt::println!(
        "config C={=usize} L={=usize} stored={=u64} probes={=u64} erased={=usize} message_seed={=u64} probe_seed={=u64} gamma={=u32} max_iter={=u32}",
        c, l, stored, probes, args.erased, args.seed, args.seed.wrapping_add(1), args.params.gamma, args.params.max_iter
    );
    let plan = match ProbePlan::new(g, args.seed, stored, args.seed.wrapping_add(1), probes, args.erased) {
        Ok(p) => p,
        Err(e) => fail(e),
    };
    let view = net.view();
    let mut next = |p: u64, out: &mut [u16]| {
        if p < probes {
            plan.probe(p, out);
            true
        } else {
            false
        }
    };
    time_rules(&view, &Rule::ALL, Mode::Erasure, args.params, &mut next, false);
    defmt::println!("memory weights={=usize} stack_peak={=u32}", core::mem::size_of_val(&net), platform::stack_peak());
    cortical_a();
}

/// The pixels of the cortical network's configuration A training list (build.rs).
#[cfg(not(any(board = "microbit", board = "sifive_e")))]
const DIGITS_A: [u8; 640] = include!(concat!(env!("OUT_DIR"), "/digits_a.rs"));

/// Configuration A of the cortical network (3 levels × 16 minicolumns, 10 digits, 60 epochs,
/// exposure 4, seed 1): the LGN, training and the evaluation pass by the core, then the spec's
/// two SHA-256 digests, which the host test compares with the spec's. Its weights need more
/// RAM than the 16 KiB boards have.
#[cfg(not(any(board = "microbit", board = "sifive_e")))]
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

#[cfg(any(board = "microbit", board = "sifive_e"))]
fn cortical_a() {}

/// Lowercase hex of a digest into `out`.
#[cfg(not(any(board = "microbit", board = "sifive_e")))]
fn hex<'a>(d: &[u8; 32], out: &'a mut [u8; 64]) -> &'a str {
    const H: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in d.iter().enumerate() {
        out[2 * i] = H[(b >> 4) as usize];
        out[2 * i + 1] = H[(b & 15) as usize];
    }
    core::str::from_utf8(out).unwrap_or("?")
}
