//! One thin wrapper per kernel: grid sizing, argument order, and per-launch timing events.
//! Thread-to-work mappings are documented on the kernels in `gpu-device/src/lib.rs`.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, LaunchConfig, PushKernelArg};

use crate::{Gpu, GpuError};

const BLOCK: u32 = 256;

/// Sums the GPU time of the kernels launched through it (CUDA events around each launch).
#[derive(Default)]
pub struct KernelTimer {
    events: Vec<(&'static str, CudaEvent, CudaEvent)>,
}

impl KernelTimer {
    /// Total milliseconds spent in the recorded kernels (waits for them). With
    /// `NEUROBITS_GPU_PROFILE` set, also prints the time per kernel on stderr.
    pub fn total_ms(&self) -> Result<f64, GpuError> {
        let mut per: Vec<(&str, f64, u32)> = Vec::new();
        let mut t = 0.0;
        for (name, a, b) in &self.events {
            let ms = a.elapsed_ms(b)? as f64;
            t += ms;
            match per.iter_mut().find(|p| p.0 == *name) {
                Some(p) => (p.1, p.2) = (p.1 + ms, p.2 + 1),
                None => per.push((name, ms, 1)),
            }
        }
        if std::env::var_os("NEUROBITS_GPU_PROFILE").is_some() {
            for (name, ms, n) in per {
                eprintln!("  {name:<16} {n:>3} launches {ms:>10.3} ms");
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

macro_rules! launch {
    ($gpu:expr, $timer:expr, $name:literal, $threads:expr, [$($arg:expr),* $(,)?]) => {{
        let threads: u64 = $threads;
        if threads > 0 {
            let f = $gpu.function($name);
            let mut b = $gpu.stream.launch_builder(f);
            $( b.arg($arg); )*
            b.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
            // SAFETY: argument types and order match the kernel's signature in gpu-device, and
            // every buffer holds what the mapping of `threads` reads or writes.
            let ev = unsafe { b.launch(config(threads)?) }?;
            if let Some(ev) = ev {
                $timer.events.push(($name, ev.0, ev.1));
            }
        }
        Ok::<(), GpuError>(())
    }};
}

/// Geometry scalars as the kernels take them.
#[derive(Clone, Copy)]
pub struct Shape {
    pub c: u32,
    pub l: u32,
    pub rw: u64,
    pub wpc: u64,
}

pub fn store(g: &Gpu, t: &mut KernelTimer, s: Shape, w: &mut CudaSlice<u64>, msgs: &CudaSlice<u16>, m: u32) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_store", m as u64 * s.c as u64, [w, msgs, &m, &s.c, &s.l])
}

#[allow(clippy::too_many_arguments)]
pub fn init(
    g: &Gpu, t: &mut KernelTimer, s: Shape, probes: &CudaSlice<u16>, k: u32, erased_on: u32,
    buf0: &mut CudaSlice<u64>, buf1: &mut CudaSlice<u64>, list: &mut CudaSlice<u32>,
    changed: &mut CudaSlice<u32>, iters: &mut CudaSlice<u32>, converged: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_init", k as u64 * s.rw, [&s.c, &s.l, probes, &k, &erased_on, buf0, buf1, list, changed, iters, converged])
}

#[allow(clippy::too_many_arguments)]
pub fn step_word(
    g: &Gpu, t: &mut KernelTimer, s: Shape, rule: u32, w: &CudaSlice<u64>, probes: &CudaSlice<u16>,
    cur: &CudaSlice<u64>, next: &mut CudaSlice<u64>, list: &CudaSlice<u32>, n: u32, changed: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_step_word", n as u64 * s.rw, [&rule, &s.c, &s.l, w, probes, cur, next, list, &n, changed])
}

/// Per-probe index buffers of the joint rule.
pub struct JointIndex {
    pub rows: CudaSlice<u32>,
    pub known: CudaSlice<u32>,
    pub erased_list: CudaSlice<u8>,
    pub erased_mask: CudaSlice<u64>,
}

pub fn probe_index(g: &Gpu, t: &mut KernelTimer, s: Shape, probes: &CudaSlice<u16>, k: u32, ix: &mut JointIndex) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_probe_index", k as u64, [&s.c, &s.l, probes, &k, &mut ix.rows, &mut ix.known, &mut ix.erased_list, &mut ix.erased_mask])
}

#[allow(clippy::too_many_arguments)]
pub fn joint_first(
    g: &Gpu, t: &mut KernelTimer, s: Shape, e_max: u32, w: &CudaSlice<u64>, ix: &JointIndex,
    cur: &CudaSlice<u64>, next: &mut CudaSlice<u64>, k: u32, changed: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_joint_first", k as u64 * e_max as u64 * s.wpc, [&s.c, &s.l, &e_max, w, &ix.rows, &ix.known, &ix.erased_list, cur, next, &k, changed])
}

#[allow(clippy::too_many_arguments)]
pub fn occupancy(
    g: &Gpu, t: &mut KernelTimer, s: Shape, e_max: u32, ix: &JointIndex, cur: &CudaSlice<u64>,
    list: &CudaSlice<u32>, n: u32, occ: &mut CudaSlice<u64>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_occupancy", n as u64 * e_max as u64, [&s.c, &s.l, &e_max, &ix.known, &ix.erased_list, cur, list, &n, occ])
}

#[allow(clippy::too_many_arguments)]
pub fn step_joint(
    g: &Gpu, t: &mut KernelTimer, s: Shape, e_max: u32, w: &CudaSlice<u64>, ix: &JointIndex, occ: &CudaSlice<u64>,
    occ_prev: &CudaSlice<u64>, cur: &CudaSlice<u64>, next: &mut CudaSlice<u64>, list: &CudaSlice<u32>, n: u32,
    changed: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_step_joint", n as u64 * e_max as u64, [&s.c, &s.l, &e_max, w, &ix.known, &ix.erased_list, &ix.erased_mask, occ, occ_prev, cur, next, list, &n, changed])
}

#[allow(clippy::too_many_arguments)]
pub fn step_sos(
    g: &Gpu, t: &mut KernelTimer, s: Shape, gamma: u32, w: &CudaSlice<u64>,
    cur: &CudaSlice<u64>, next: &mut CudaSlice<u64>, list: &CudaSlice<u32>, n: u32, changed: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_step_sos", n as u64 * s.c as u64, [&s.c, &s.l, &gamma, w, cur, next, list, &n, changed])
}

#[allow(clippy::too_many_arguments)]
pub fn compact(
    g: &Gpu, t: &mut KernelTimer, list_in: &CudaSlice<u32>, n: u32, changed: &mut CudaSlice<u32>,
    iters: &mut CudaSlice<u32>, converged: &mut CudaSlice<u32>, list_out: &mut CudaSlice<u32>, count: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "gbnn_compact", n as u64, [list_in, &n, changed, iters, converged, list_out, count])
}

#[allow(clippy::too_many_arguments)]
pub fn dense_select(
    g: &Gpu, t: &mut KernelTimer, s: Shape, k: u32, scores: &CudaSlice<f32>, v: &mut CudaSlice<f32>,
    states: &mut CudaSlice<u64>, changed: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    launch!(g, t, "dense_select", k as u64 * s.c as u64, [&s.c, &s.l, &k, scores, v, states, changed])
}

pub fn fly_projection(g: &Gpu, t: &mut KernelTimer, p: &neurobits_core::flyhash::FlyParams, proj: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    launch!(g, t, "fly_projection", p.m as u64, [&p.d, &p.m, &p.s, &p.k, &p.seed, proj])
}

#[allow(clippy::too_many_arguments)]
pub fn fly_activation(g: &Gpu, t: &mut KernelTimer, m: u32, s: u32, b: u32, proj: &CudaSlice<u32>, xt: &CudaSlice<f32>, act: &mut CudaSlice<f32>) -> Result<(), GpuError> {
    launch!(g, t, "fly_activation", (b as u64).div_ceil(32) * 32 * m as u64, [&m, &s, &b, proj, xt, act])
}

/// Outputs per thread in the parallel exact WTA (a multiple of 64: one writer per code word).
pub const FLY_CHUNK: u32 = 256;

/// Scratch of the parallel exact WTA.
pub struct FlyWtaScratch {
    pub states: CudaSlice<u32>,
    pub hist: CudaSlice<u32>,
    pub counts: CudaSlice<u32>,
}

/// The exact WTA as a radix select spread over (chunk, input) threads: init, four histogram
/// and pick rounds, tie counts, selection.
#[allow(clippy::too_many_arguments)]
pub fn fly_wta_exact(g: &Gpu, t: &mut KernelTimer, m: u32, k: u32, b: u32, act: &CudaSlice<f32>, sc: &mut FlyWtaScratch, codes: &mut CudaSlice<u64>) -> Result<(), GpuError> {
    let chunks = m.div_ceil(FLY_CHUNK) as u64;
    let chunk = FLY_CHUNK;
    launch!(g, t, "fly_radix_init", b as u64, [&b, &k, &mut sc.states])?;
    for _ in 0..4 {
        launch!(g, t, "fly_radix_hist", chunks * b as u64, [&m, &b, &chunk, act, &sc.states, &mut sc.hist])?;
        launch!(g, t, "fly_radix_pick", b as u64, [&b, &mut sc.states, &mut sc.hist])?;
    }
    launch!(g, t, "fly_tie_count", chunks * b as u64, [&m, &b, &chunk, act, &sc.states, &mut sc.counts])?;
    launch!(g, t, "fly_select", chunks * b as u64, [&m, &b, &chunk, act, &sc.states, &sc.counts, codes])
}

#[allow(clippy::too_many_arguments)]
pub fn fly_wta_bisect64(g: &Gpu, t: &mut KernelTimer, m: u32, k: u32, b: u32, eps: f32, act: &CudaSlice<f32>, codes: &mut CudaSlice<u64>) -> Result<(), GpuError> {
    launch!(g, t, "fly_wta_bisect64", b as u64, [&m, &k, &b, &eps, act, codes])
}

#[allow(clippy::too_many_arguments)]
pub fn fly_hamming(g: &Gpu, t: &mut KernelTimer, words: u32, n: u32, nq: u32, db: &CudaSlice<u64>, q: &CudaSlice<u64>, dist: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    launch!(g, t, "fly_hamming", n as u64 * nq as u64, [&words, &n, &nq, db, q, dist])
}

pub fn fly_top_r(g: &Gpu, t: &mut KernelTimer, n: u32, nq: u32, r: u32, dist: &CudaSlice<u32>, out: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    launch!(g, t, "fly_top_r", nq as u64, [&n, &nq, &r, dist, out])
}
