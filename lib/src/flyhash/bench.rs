//! `neurobits flyhash bench`: the flyhash.jl configurations, CPU and GPU side by side.

use anyhow::{bail, Result};
use neurobits_core::flyhash::FlyParams;
use neurobits_core::prng::{draw, stream_key};
use neurobits_core::Word;
use neurobits_gpu_host::Gpu;
use serde::Serialize;
use std::time::Instant;

pub use super::bench_config::{Config, FlyBenchConfig};
use super::cpu::{self, Wta};
use super::data::{self, Matrix};
use crate::device::bench_devices;
use crate::progress::stages;
use indicatif::ProgressBar;

#[derive(Serialize, Debug, Clone)]
/// One timed implementation.
pub struct Entry {
    /// What ran (device and variant).
    pub implementation: String,
    /// Inputs hashed.
    pub b: usize,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Seconds inside GPU kernels, where known.
    pub kernel_seconds: Option<f64>,
    /// Inputs hashed per second.
    pub inputs_per_second: f64,
    /// Fraction of codes whose number of ones differs from k.
    pub wrong_k_rate: f64,
    /// Whether the outputs equal the CPU's bit for bit (where compared).
    pub identical_to_cpu: Option<bool>,
}

fn wrong_k(codes: &[Word], words: usize, k: u32) -> f64 {
    let n = codes.len() / words;
    codes.chunks(words).filter(|c| c.iter().map(|w| w.count_ones()).sum::<u32>() != k).count() as f64 / n.max(1) as f64
}

fn uniform(b: usize, d: usize, seed: u64) -> Matrix {
    let key = stream_key(seed, 18);
    Matrix {
        rows: b,
        cols: d,
        data: (0..b * d).map(|i| (draw(key, i as u64) >> 40) as f32 / (1u64 << 24) as f32).collect(),
    }
}

fn print(e: &Entry) -> Result<()> {
    crate::outln!(
        "{:<34} b={:>6} {:>10.4} s{} {:>12.0} inputs/s  wrong-k {:>9.2e}{}",
        e.implementation,
        e.b,
        e.seconds,
        e.kernel_seconds.map_or(String::new(), |k| format!(" (kernels {:>9.3} ms)", k * 1e3)),
        e.inputs_per_second,
        e.wrong_k_rate,
        match e.identical_to_cpu {
            Some(true) => "  bit-identical to CPU",
            Some(false) => "  DIFFERS from CPU",
            None => "",
        }
    )?;
    Ok(())
}

/// Steps `run_one` takes (for the progress display): CPU, GPU upload, exact on the pixel path and
/// on the f32 path filtered and unfiltered, bisect64.
fn steps(cpu_on: bool, gpu: bool) -> u64 {
    cpu_on as u64 + 5 * gpu as u64
}

fn run_one(
    p: &FlyParams,
    x: &Matrix,
    cpu_on: bool,
    gpu: Option<&Gpu>,
    pb: &ProgressBar,
    entries: &mut Vec<Entry>,
) -> Result<()> {
    let words = p.code_words();
    let proj = cpu::projection(p);
    let b = x.rows;
    let mut cpu_codes = None;
    if cpu_on {
        pb.set_message(format!("CPU: hashing {b} inputs"));
        let t = Instant::now();
        let codes = cpu::hash(p, &proj, x, Wta::Exact);
        let secs = t.elapsed().as_secs_f64();
        entries.push(Entry {
            implementation: format!("cpu exact ({} threads)", rayon::current_num_threads()),
            b,
            seconds: secs,
            kernel_seconds: None,
            inputs_per_second: b as f64 / secs,
            wrong_k_rate: wrong_k(&codes, words, p.k),
            identical_to_cpu: None,
        });
        print(entries.last().expect("pushed"))?;
        pb.inc(1);
        cpu_codes = Some(codes);
    }
    if let Some(gpu) = gpu {
        pb.set_message(format!("GPU: projection and upload of {b} inputs"));
        let f = gpu.fly(*p)?;
        anyhow::ensure!(f.projection()? == proj, "the GPU drew a different projection");
        let inputs = f.upload(&x.data, b)?;
        // Inputs that are all 8-bit pixels take the integer path; the f32 path is timed too.
        let floats = if inputs.pixels() { Some(f.upload_float(&x.data, b)?) } else { None };
        pb.inc(1 + floats.is_none() as u64); // no pixel run to count
        let mut codes = Vec::new();
        // (WTA, inputs, whether the f32 path is filtered).
        let f32_inputs = floats.as_ref().unwrap_or(&inputs);
        let mut runs = Vec::new();
        if inputs.pixels() {
            runs.push((Wta::Exact, &inputs, true));
        }
        runs.extend([(Wta::Exact, f32_inputs, true), (Wta::Exact, f32_inputs, false), (Wta::Bisect64, &inputs, true)]);
        for (w, inputs, filtered) in runs {
            pb.set_message(format!("GPU: hashing {b} inputs ({w:?}, warm-up then timed)"));
            f.set_filtered(filtered);
            f.hash_into(inputs, super::gpu::wta(w), &mut codes)?; // warm-up: JIT, buffers, pages
            let (kernel_ms, total_ms) = f.hash_into(inputs, super::gpu::wta(w), &mut codes)?;
            f.set_filtered(true);
            let out = neurobits_gpu_host::flyhash::FlyBatch { codes: std::mem::take(&mut codes), kernel_ms, total_ms };
            let same = match (w, &cpu_codes) {
                (Wta::Exact, Some(c)) => Some(*c == out.codes),
                _ => None,
            };
            let name = match (w, inputs.pixels(), filtered) {
                (Wta::Exact, true, _) => "exact, pixel path",
                (Wta::Exact, false, true) => "exact, f32 filtered",
                (Wta::Exact, false, false) => "exact, f32 unfiltered",
                _ => "bisect64",
            };
            entries.push(Entry {
                implementation: format!("gpu {name} ({})", gpu.name()),
                b,
                seconds: out.total_ms / 1e3,
                kernel_seconds: Some(out.kernel_ms / 1e3),
                inputs_per_second: b as f64 / (out.total_ms / 1e3),
                wrong_k_rate: wrong_k(&out.codes, words, p.k),
                identical_to_cpu: same,
            });
            print(entries.last().expect("pushed"))?;
            pb.inc(1);
            if same == Some(false) {
                bail!("GPU exact codes differ from the CPU's");
            }
            codes = out.codes;
        }
    }
    Ok(())
}

/// Runs `flyhash bench`.
pub fn run(a: &FlyBenchConfig) -> Result<()> {
    if let Some(out) = &a.out {
        crate::io::atomic::check_writable(out)?;
    }
    let (cpu_on, gpu) = bench_devices(a.device)?;
    let entries = match a.config {
        Config::Search => {
            let entries = super::search_bench::run(a, cpu_on, gpu.as_ref())?;
            if let Some(out) = &a.out {
                crate::io::json::write(out, &entries)?;
            }
            return Ok(());
        }
        Config::Fmnist => fmnist(a, cpu_on, gpu.as_ref())?,
        Config::Batch => batch(a, cpu_on, gpu.as_ref())?,
    };
    if let Some(out) = &a.out {
        crate::io::json::write(out, &entries)?;
    }
    Ok(())
}

/// The Fashion-MNIST configuration of flyhash.jl on the training images.
fn fmnist(a: &FlyBenchConfig, cpu_on: bool, gpu: Option<&Gpu>) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let pb = stages(1 + steps(cpu_on, gpu.is_some()));
    pb.set_message("reading Fashion-MNIST");
    let x = data::read(&a.data.join("train-images-idx3-ubyte.gz"))?;
    let p = FlyParams::new(
        x.cols as u32,
        32 * x.cols as u32,
        (x.cols as f32 * 0.05) as u32,
        (32 * x.cols as u32) / 20,
        a.seed,
    )?;
    crate::outln!(
        "flyhash.jl Fashion-MNIST configuration: d={}, m={}, s={}, k={}, b={} (raw pixels 0..255)",
        p.d,
        p.m,
        p.s,
        p.k,
        x.rows
    )?;
    pb.inc(1);
    run_one(&p, &x, cpu_on, gpu, &pb, &mut entries)?;
    let c = entries.iter().find(|e| e.implementation.starts_with("cpu")).map(|e| e.seconds);
    let g = entries.iter().find(|e| e.implementation.starts_with("gpu exact")).map(|e| e.seconds);
    if let (Some(c), Some(g)) = (c, g) {
        crate::outln!("GPU exact end to end (resident inputs) is {:.1}x the all-cores CPU", c / g)?;
    }
    pb.finish_and_clear();
    Ok(entries)
}

/// The batch configuration of flyhash.jl, batches of 2^1 … 2^max_exp uniform inputs.
fn batch(a: &FlyBenchConfig, cpu_on: bool, gpu: Option<&Gpu>) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let pb = stages((1..=a.max_exp).map(|e| steps(cpu_on && (1usize << e) <= a.cpu_max_batch, gpu.is_some())).sum());
    let p = FlyParams::new(1024, 131_072, 51, 6_554, a.seed)?;
    crate::outln!("flyhash.jl batch configuration: d=1024, m=131072, s=51, k=6554, uniform [0,1) inputs")?;
    for e in 1..=a.max_exp {
        let b = 1usize << e;
        crate::io::memory::ensure_fits(&format!("a batch of {b} inputs"), b as u128 * (1024 * 4 + 131_072 / 8))?;
        let x = uniform(b, 1024, a.seed);
        run_one(&p, &x, cpu_on && b <= a.cpu_max_batch, gpu, &pb, &mut entries)?;
    }
    pb.finish_and_clear();
    Ok(entries)
}
