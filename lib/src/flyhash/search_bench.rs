//! `neurobits flyhash bench --config search`: exact Hamming top-r over a large database of
//! FlyHash-like codes (exactly `k` of `m` bits set, drawn from the portable PRNG), the all-cores
//! CPU and the GPU side by side, with the GPU's database reads against the copy bandwidth
//! measured in the same run.

use anyhow::{bail, Result};
use neurobits_core::prng::{floyd, stream_key};
use neurobits_core::Word;
use neurobits_gpu_host::flyhash::KeyKernel;
use neurobits_gpu_host::Gpu;
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

use super::bench_config::FlyBenchConfig;
use crate::progress::stages;

/// Code length and ones per code: the Fashion-MNIST configuration's codes.
const M: usize = 25_088;
const K: usize = 1_254;

#[derive(Serialize, Debug, Clone)]
/// One timed search.
pub struct SearchEntry {
    /// What ran.
    pub implementation: String,
    /// Database codes, queries, neighbours per query, words per code.
    pub n: usize,
    pub queries: usize,
    pub r: usize,
    pub words: usize,
    /// Wall seconds (GPU: queries uploaded, kernels, hits back on the host; database resident).
    pub seconds: f64,
    /// GPU: seconds in the kernels, and in the key kernel alone.
    pub kernel_seconds: Option<f64>,
    pub key_kernel_seconds: Option<f64>,
    /// GPU: bytes of the database the key kernel reads, and the copy bandwidth of this device
    /// (bytes read and written per second), measured in the same run.
    pub database_bytes_read: Option<f64>,
    pub copy_bandwidth: Option<f64>,
    /// Whether the hits equal the CPU's (where compared).
    pub identical_to_cpu: Option<bool>,
}

/// `n` codes of `M` bits with exactly `K` ones each (Floyd's sampling), from stream `stream`.
fn codes(n: usize, seed: u64, stream: u64) -> Vec<Word> {
    let words = M.div_ceil(64);
    let key = stream_key(seed, stream);
    let mut out = vec![0 as Word; n * words];
    out.par_chunks_mut(words).enumerate().for_each(|(i, code)| {
        floyd(key, (i * K) as u64, M as u64, K as u64, |x| {
            let (w, bit) = (x as usize / 64, 1 << (x % 64));
            let new = code[w] & bit == 0;
            code[w] |= bit;
            new
        });
    });
    out
}

/// Runs the search benchmark.
pub fn run(a: &FlyBenchConfig, cpu_on: bool, gpu: Option<&Gpu>) -> Result<Vec<SearchEntry>> {
    let (n, nq, r, words) = (a.db_codes, a.queries, a.r, M.div_ceil(64));
    crate::io::memory::ensure_fits("the search database", (n + nq) as u128 * words as u128 * 8)?;
    let pb = stages(2 + cpu_on as u64 + 2 * gpu.is_some() as u64);
    pb.set_message(format!("drawing {n} database codes and {nq} queries"));
    let (db, q) = (codes(n, a.seed, 19), codes(nq, a.seed, 20));
    pb.inc(2);
    crate::outln!("Hamming top-{r}: {n} codes of {M} bits ({K} ones each), {nq} queries")?;
    let mut entries = Vec::new();
    let mut cpu_hits = None;
    if cpu_on {
        pb.set_message("CPU search");
        let t = Instant::now();
        let hits = super::search::top_r(&db, &q, words, r);
        entries.push(SearchEntry {
            implementation: format!("cpu ({} threads)", rayon::current_num_threads()),
            n,
            queries: nq,
            r,
            words,
            seconds: t.elapsed().as_secs_f64(),
            kernel_seconds: None,
            key_kernel_seconds: None,
            database_bytes_read: None,
            copy_bandwidth: None,
            identical_to_cpu: None,
        });
        print(entries.last().expect("pushed"))?;
        cpu_hits = Some(hits);
        pb.inc(1);
    }
    if let Some(g) = gpu {
        pb.set_message("GPU: uploading the database");
        let t = Instant::now();
        let index = g.hamming_index(&db, words)?;
        crate::outln!(
            "gpu: database of {:.2} GB uploaded in {:.3} s",
            (db.len() * 8) as f64 / 1e9,
            t.elapsed().as_secs_f64()
        )?;
        let bw = g.copy_bandwidth(1 << 30)?;
        pb.inc(1);
        pb.set_message("GPU: search (warm-up, then timed)");
        let tiles = nq.div_ceil(16);
        // Both key kernels, the tensor cores' (the library's) first: the same hits, bit for bit.
        for (kernel, label) in [(KeyKernel::TensorCores, "tensor-core keys"), (KeyKernel::Simt, "CUDA-core keys")] {
            index.top_r_with(&q, r, kernel)?;
            let h = index.top_r_with(&q, r, kernel)?;
            let same = cpu_hits.as_ref().map(|c| *c == h.hits);
            entries.push(SearchEntry {
                implementation: format!("gpu, {label} ({})", g.name()),
                n,
                queries: nq,
                r,
                words,
                seconds: h.total_ms / 1e3,
                kernel_seconds: Some(h.kernel_ms / 1e3),
                key_kernel_seconds: Some(h.keys_ms / 1e3),
                database_bytes_read: Some((tiles * n.next_multiple_of(64) * words * 8) as f64),
                copy_bandwidth: Some(bw),
                identical_to_cpu: same,
            });
            print(entries.last().expect("pushed"))?;
            if same == Some(false) {
                bail!("GPU hits ({label}) differ from the CPU's");
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(entries)
}

fn print(e: &SearchEntry) -> Result<()> {
    let mut line = format!("{:<34} {:>10.4} s", e.implementation, e.seconds);
    if let (Some(k), Some(kk), Some(bytes), Some(bw)) =
        (e.kernel_seconds, e.key_kernel_seconds, e.database_bytes_read, e.copy_bandwidth)
    {
        // A copy reads and writes: its bandwidth counts both, a read-only stream can use it all.
        let bound = bytes / bw;
        line += &format!(
            " (kernels {:.3} ms, keys {:.3} ms: database read {:.1} GB = {:.3} ms at the copy bandwidth {:.0} GB/s, {:.0} % of it)",
            k * 1e3,
            kk * 1e3,
            bytes / 1e9,
            bound * 1e3,
            bw / 1e9,
            100.0 * bound / kk
        );
    }
    line += match e.identical_to_cpu {
        Some(true) => "  identical to CPU",
        Some(false) => "  DIFFERS from CPU",
        None => "",
    };
    crate::outln!("{line}")
}
