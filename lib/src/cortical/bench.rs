//! `neurobits cortical bench`: time per training step (learning on, steady state) of our
//! single-thread CPU (the paper's baseline), rayon on all cores (its Pthreads analogue) and each
//! GPU variant, side by side in one run, over the paper's network sizes (Fig. 7, Figs. 14–17).

use anyhow::{bail, Result};
use neurobits_core::cortical::rng::{key, rand_u32, FIRE, INIT};
use neurobits_core::cortical::Geometry;
use neurobits_gpu_host::cortical::{StepArgs, Variant};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use super::cpu::{self, Threads};
use super::Network;
use crate::device::BenchDevice;

/// Stream of the benchmark's random bottom inputs.
const INPUTS: u64 = 5;

/// What to time.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct BenchConfig {
    /// Minicolumns per hypercolumn, comma-separated (the paper's 32 and 128).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_value = "32,128"))]
    pub minicolumns: Vec<usize>,
    /// Levels, comma-separated (2^L - 1 hypercolumns; the paper's 31 … 65 535 are L = 5 … 16).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_value = "5,7,9,11,13,16"))]
    pub levels: Vec<u32>,
    /// Time the CPU only up to this many levels (the single thread takes seconds per step at 16).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 16))]
    pub cpu_max_levels: u32,
    /// Fraction of active bottom inputs (drawn from the counter generator).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0.25))]
    pub density: f64,
    /// Where to time.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = BenchDevice::All))]
    pub device: BenchDevice,
    /// Write the rows as JSON to this file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: Option<PathBuf>,
}

/// One (configuration, size) row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Minicolumns.
    pub minicolumns: usize,
    /// Levels.
    pub levels: u32,
    /// Hypercolumns.
    pub hypercolumns: usize,
    /// Seconds per step: single-thread CPU.
    pub cpu1: Option<f64>,
    /// Seconds per step: rayon on every core.
    pub cpu_all: Option<f64>,
    /// Seconds per step per GPU variant (per-level, pipelined, queue, graph).
    pub gpu: Vec<(String, f64)>,
    /// The GPU's variants gave the CPU's weights after the timed steps (synchronous ones).
    pub gpu_equals_cpu: Option<bool>,
}

/// Bottom inputs of `n` random images at `density`.
pub fn random_inputs(geo: &Geometry, n: usize, density: f64, seed: u64) -> Vec<u64> {
    let (k, thr) = (key(seed, INPUTS), (density.clamp(0.0, 1.0) * 4294967296.0).min(4294967295.0) as u64);
    let (nw, n_in) = (geo.input_words(), geo.inputs());
    let mut out = vec![0u64; n * geo.bottom_words()];
    for (b, x) in out.chunks_mut(nw).enumerate() {
        for i in 0..n_in {
            if (rand_u32(k, (b * n_in + i) as u64) as u64) < thr {
                x[i / 64] |= 1 << (i % 64);
            }
        }
    }
    out
}

/// Seconds per call of `f` after one warm-up call: at least `min_calls` calls and `min_secs`.
fn per_call(min_calls: u32, min_secs: f64, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let start = Instant::now();
    let mut n = 0u32;
    while n < min_calls || start.elapsed().as_secs_f64() < min_secs {
        f()?;
        n += 1;
    }
    Ok(start.elapsed().as_secs_f64() / n as f64)
}

const IMAGES: usize = 8;
const SEED: u64 = 1;

/// Runs the benchmark.
pub fn run(c: &BenchConfig) -> Result<()> {
    if !(0.0..=1.0).contains(&c.density) {
        bail!("--density must be in [0, 1]");
    }
    // Every size before any is timed: the random inputs and a network of each (the GPU's copy
    // is checked by the device); `--levels 30` once aborted on a 32 GiB allocation.
    for &m in &c.minicolumns {
        for &l in &c.levels {
            let geo = Geometry::new(l, m).map_err(|e| anyhow::anyhow!("{e}"))?;
            let per_m = geo.hypercolumns() as u128 * geo.minicolumns() as u128;
            crate::budget::check(
                format_args!("cortical bench --minicolumns {m} --levels {l}: the network and its inputs"),
                IMAGES as u128 * geo.bottom_words() as u128 * 8 + geo.weights() as u128 * 2 + per_m * 9,
            )?;
        }
    }
    let (time_cpu, gpu) = crate::device::bench_devices(c.device)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    outln!(
        "cortical bench: time per training step (learning on), bottom density {:.2}, CPU {} cores{}",
        c.density,
        cores,
        gpu.as_ref().map(|g| format!(", GPU {}", g.name())).unwrap_or_default()
    )?;
    outln!(
        "{:>4} {:>3} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "M",
        "L",
        "HCs",
        "cpu 1 thr",
        "cpu all",
        "gpu level",
        "gpu pipe",
        "gpu queue",
        "gpu graph",
        "x 1 thr",
        "x all"
    )?;
    let mut rows = vec![];
    let pb = crate::progress::stages((c.minicolumns.len() * c.levels.len()) as u64);
    for &m in &c.minicolumns {
        for &l in &c.levels {
            let geo = Geometry::new(l, m).map_err(|e| anyhow::anyhow!("{e}"))?;
            pb.set_message(format!("M = {m}, L = {l}"));
            let x = random_inputs(&geo, IMAGES, c.density, SEED);
            let cpu_too = time_cpu && l <= c.cpu_max_levels;
            let mut row = Row {
                minicolumns: m,
                levels: l,
                hypercolumns: geo.hypercolumns(),
                cpu1: None,
                cpu_all: None,
                gpu: vec![],
                gpu_equals_cpu: None,
            };
            if cpu_too {
                let mut net = Network::new(geo, SEED)?;
                let mut tr = cpu::CpuTrainer::new(
                    &mut net,
                    &x,
                    neurobits_core::cortical::Schedule::Synchronous,
                    Threads::Single,
                );
                let mut i = 0;
                use neurobits_core::cortical::Learner;
                row.cpu1 = Some(per_call(2, 0.5, || {
                    i += 1;
                    let Ok(()) = tr.learn(i % IMAGES);
                    Ok(())
                })?);
                tr.threads = Threads::Rayon;
                row.cpu_all = Some(per_call(3, 0.5, || {
                    i += 1;
                    let Ok(()) = tr.learn(i % IMAGES);
                    Ok(())
                })?);
            }
            if let Some(g) = &gpu {
                let mut equal = true;
                for variant in [Variant::PerLevel, Variant::Pipelined, Variant::Queue, Variant::Graph] {
                    let mut dev =
                        g.cortical_untrained(geo, neurobits_core::cortical::Part::whole(&geo), key(SEED, INIT), &x)?;
                    let (fire_key, mut t) = (key(SEED, FIRE), 0u64);
                    let step = |dev: &mut neurobits_gpu_host::cortical::CorticalGpu<'_>, t: &mut u64| -> Result<()> {
                        let a = StepArgs {
                            learn: true,
                            t: *t,
                            fire_key,
                            rule: neurobits_core::cortical::rules::Rule::spec(neurobits_core::cortical::rules::LTD),
                        };
                        dev.step(*t as usize % IMAGES, &a, variant)?;
                        *t += 1;
                        Ok(())
                    };
                    // Warm up, then time batches of steps with one synchronisation each.
                    step(&mut dev, &mut t)?;
                    dev.synchronize()?;
                    let batch = 20;
                    let s = per_call(1, 0.3, || {
                        for _ in 0..batch {
                            step(&mut dev, &mut t)?;
                        }
                        Ok(dev.synchronize()?)
                    })? / batch as f64;
                    row.gpu.push((format!("{variant:?}"), s));
                    // The same steps on the CPU give the same weights (synchronous variants).
                    if cpu_too && variant != Variant::Pipelined && l <= 11 {
                        let mut check = Network::new(geo, SEED)?;
                        let mut tr = cpu::CpuTrainer::new(
                            &mut check,
                            &x,
                            neurobits_core::cortical::Schedule::Synchronous,
                            Threads::Rayon,
                        );
                        use neurobits_core::cortical::Learner;
                        for k in 0..t {
                            let Ok(()) = tr.learn(k as usize % IMAGES);
                        }
                        equal &= dev.state()?.0 == check.w;
                    }
                }
                if cpu_too && l <= 11 {
                    row.gpu_equals_cpu = Some(equal);
                }
            }
            let best = row.gpu.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
            let fmt = |v: Option<f64>| v.map_or("-".into(), |s| format!("{:.3} ms", s * 1e3));
            let g = |name: &str| fmt(row.gpu.iter().find(|v| v.0 == name).map(|v| v.1));
            let ratio = |v: Option<f64>| match v {
                Some(s) if best.is_finite() => format!("{:.1}", s / best),
                _ => "-".into(),
            };
            outln!(
                "{:>4} {:>3} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9}{}",
                m,
                l,
                geo.hypercolumns(),
                fmt(row.cpu1),
                fmt(row.cpu_all),
                g("PerLevel"),
                g("Pipelined"),
                g("Queue"),
                g("Graph"),
                ratio(row.cpu1),
                ratio(row.cpu_all),
                match row.gpu_equals_cpu {
                    Some(true) => "  (GPU = CPU)",
                    Some(false) => "  (GPU != CPU!)",
                    None => "",
                }
            )?;
            rows.push(row);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    if let Some(path) = &c.out {
        crate::io::json::write(path, &rows)?;
    }
    Ok(())
}
