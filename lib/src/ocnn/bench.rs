//! `ocnn bench`: the paper's Table 2 workload (uniform random points in [−100, 100]², T = 1000,
//! dense) on every GPU decomposition and the all-cores CPU, side by side in one run.

use anyhow::{bail, Result};
use neurobits_core::ocnn::SyncMode;
use neurobits_gpu_host::ocnn::Decomposition;
use std::path::PathBuf;
use std::time::Instant;

use super::{clusters, cpu, points::Points, scale, weights};
use crate::device::{bench_devices, BenchDevice};

/// `ocnn bench`.
#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct BenchConfig {
    /// Network sizes N, comma-separated (the paper's Table 2: 1000 … 16 000).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_value = "1000,2000,4000,10000,14000,16000"))]
    pub sizes: Vec<usize>,
    /// Observed iterations T.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000)))]
    pub iters: u32,
    /// Largest N timed on the CPU (the CPU is O(N²·T)).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 4000))]
    pub cpu_max: usize,
    /// Where to time: cpu, gpu, all (side by side) or auto.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = BenchDevice::All))]
    pub device: BenchDevice,
    /// Seed of the points and of the initial state.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// Sparse coupling within R·a instead of dense (then N can reach 10⁶ on a GPU); the GPU
    /// runs the sparse kernel (a thread per row grouped by lane), the CPU runs N ≤ --cpu-max.
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub cutoff: Option<f64>,
    /// Time the host's preparation only (Delaunay, scale, weights, lane rows; before and now),
    /// stage by stage, on the CPU; no dynamics.
    #[cfg_attr(feature = "cli", arg(long))]
    pub prepare: bool,
    /// Also write the rows as JSON to this file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: Option<PathBuf>,
}

/// One timed run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// Network size.
    pub n: usize,
    /// Implementation.
    pub implementation: String,
    /// Seconds of the host's preparation: the scale and J (dense decompositions), or the scale,
    /// the lane rows from the points and (GPU) their upload (lane rows, CPU).
    pub prepare_s: f64,
    /// Seconds of the dynamics and synchronization (results in host memory).
    pub dynamics_s: f64,
    /// GPU kernel seconds, where known.
    pub kernel_s: Option<f64>,
    /// Seconds of the threshold scan and the labels (host).
    pub clusters_s: f64,
    /// The whole algorithm: points to labels.
    pub total_s: f64,
    /// Clusters found.
    pub k: u32,
    /// SHA-256 prefix of the hit matrix (equal across implementations).
    pub hits: String,
}

/// Uniform random points in `[−100, 100]^dim` from the portable PRNG.
pub fn random_points(n: usize, dim: usize, seed: u64) -> Points {
    let key = neurobits_core::prng::stream_key(seed, 40);
    let coords = (0..n * dim)
        .map(|i| (neurobits_core::prng::draw(key, i as u64) >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0)
        .collect();
    Points { n, dim, coords }
}

/// Runs the benchmark.
pub fn run(b: &BenchConfig) -> Result<()> {
    if let Some(out) = &b.out {
        crate::io::atomic::check_writable(out)?;
    }
    if b.prepare {
        return prepare(b);
    }
    // Every size before any is timed: J and its lane rows (f32), the pairs' hits, buckets, edges
    // (the sparse run, `--cutoff`, sizes its pairs itself).
    for &n in b.sizes.iter().filter(|_| b.cutoff.is_none()) {
        let n = n as u128;
        crate::budget::check(
            format_args!("ocnn bench --sizes {n}: the dense network"),
            n * n * 12 + n * n.saturating_sub(1) / 2 * 13,
        )?;
    }
    let (use_cpu, gpu) = bench_devices(b.device)?;
    if let Some(g) = &gpu {
        crate::outln!("GPU: {}", g.name())?;
    }
    if let Some(r) = b.cutoff {
        return sparse(b, r, use_cpu, gpu.as_ref());
    }
    crate::outln!(
        "CPU: {} threads; T = {}, dense f32, phase synchronization, automatic threshold",
        rayon::current_num_threads(),
        b.iters
    )?;
    crate::outln!(
        "{:>6} {:<26} {:>9} {:>10} {:>10} {:>10} {:>10} {:>4}",
        "N",
        "implementation",
        "prepare",
        "dynamics",
        "kernels",
        "clusters",
        "total s",
        "k"
    )?;
    let mut rows = Vec::new();
    let steps = |n: usize| 1 + 4 * gpu.is_some() as u64 + (use_cpu && n <= b.cpu_max) as u64;
    let pb = crate::progress::stages(b.sizes.iter().map(|&n| steps(n)).sum());
    for &n in &b.sizes {
        pb.set_message(format!("N = {n}: points, scale, weights"));
        let p = random_points(n, 2, b.seed);
        let t = Instant::now();
        let a = scale::scale(&p)?;
        let scale_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let w = weights::dense::<f32>(&p, a)?;
        // The dense decompositions' preparation: the scale and J. Lane rows (GPU and CPU) are
        // built from the points instead: their own preparation, timed where they are built.
        let prepare_dense_s = scale_s + t.elapsed().as_secs_f64();
        pb.inc(1);
        let grid = clusters::grid(true);
        // `clustered`: the clustering and its seconds; `hits`: the upper triangle, for the digest.
        let mut finish = |name: String,
                          prepare_s: f64,
                          dynamics_s: f64,
                          kernel_s: Option<f64>,
                          (cl, clusters_s): (clusters::Clustering, f64),
                          hits: &[u32]|
         -> Result<()> {
            let row = Row {
                n,
                implementation: name,
                prepare_s,
                dynamics_s,
                kernel_s,
                clusters_s,
                total_s: prepare_s + dynamics_s + clusters_s,
                k: cl.k,
                hits: super::digest::hits(n, hits, b.iters)[..16].to_string(),
            };
            crate::outln!(
                "{:>6} {:<26} {:>9.3} {:>10.3} {:>10} {:>10.3} {:>10.3} {:>4}",
                row.n,
                row.implementation,
                row.prepare_s,
                row.dynamics_s,
                row.kernel_s.map_or("-".into(), |k| format!("{k:.3}")),
                row.clusters_s,
                row.total_s,
                row.k
            )?;
            rows.push(row);
            pb.inc(1);
            Ok(())
        };
        if let Some(g) = &gpu {
            let resident = g.ocnn(n, &w.j, &w.norm)?;
            // The lane rows built on the device from the points (no J, no host pass): that
            // decomposition's preparation, in its prepare column (J's upload is outside).
            let t = Instant::now();
            let lane_rows = super::coupling::lane_rows_gpu::<f32>(g, &p, a)?;
            g.synchronize()?;
            let prepare_rows_s = scale_s + t.elapsed().as_secs_f64();
            let all = [
                Decomposition::XThreads,
                Decomposition::ThreadPerNeuron,
                Decomposition::YThreads,
                Decomposition::LaneRows,
            ];
            for d in all {
                let (resident, prepare_s) = if d == Decomposition::LaneRows {
                    (&lane_rows, prepare_rows_s)
                } else {
                    (&resident, prepare_dense_s)
                };
                pb.set_message(format!("N = {n}: GPU {d:?}"));
                // The hit matrix stays on the GPU: its maximum spanning forest comes back
                // (dynamics column: dynamics, synchronization and the forest).
                let t = Instant::now();
                let Some(r) = resident.run_forest(b.seed, 0, (b.iters, grid[0]), SyncMode::Phase, d)? else {
                    bail!("N = {n}, T = {} is past the GPU forest's range", b.iters);
                };
                let dynamics_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let pairs = r.pairs.iter().map(|&(_, i, j)| (i, j));
                let hits: Vec<u32> = r.pairs.iter().map(|&(h, ..)| h).collect();
                let cl = clusters::cluster_pairs(n, &hits, pairs, b.iters, &grid, super::Config::default().rule(n))?;
                let clustered = (cl, t.elapsed().as_secs_f64());
                let upper = cpu::upper_triangle(n, &r.hits(g)?);
                finish(format!("gpu {d:?}"), prepare_s, dynamics_s, Some(r.kernel_ms / 1e3), clustered, &upper)?;
            }
        }
        if use_cpu && n <= b.cpu_max {
            pb.set_message(format!("N = {n}: CPU"));
            let t = Instant::now();
            // Lane rows from the points: the dense update's bits from the nonzero weights only.
            let (tr, built_s) = cpu::run_points::<f32>(&p, a, (b.seed, 0, b.iters, SyncMode::Phase), None)?;
            let dynamics_s = t.elapsed().as_secs_f64() - built_s;
            let t = Instant::now();
            let cl = clusters::cluster(n, &tr.hits, b.iters, &grid, super::Config::default().rule(n))?;
            let clustered = (cl, t.elapsed().as_secs_f64());
            let name = format!("cpu ({} threads)", rayon::current_num_threads());
            finish(name, scale_s + built_s, dynamics_s, None, clustered, &tr.hits)?;
        }
    }
    pb.finish_and_clear();
    if let Some(out) = &b.out {
        crate::io::json::write(out, &rows)?;
    }
    Ok(())
}

/// The `--cutoff` benchmark: the whole algorithm (`cluster_on`: scale, sparse weights, dynamics
/// and synchronization on the coupled pairs, clusters) per size and device, stage by stage.
fn sparse(b: &BenchConfig, r: f64, use_cpu: bool, gpu: Option<&neurobits_gpu_host::Gpu>) -> Result<()> {
    let mut rows = Vec::new();
    for &n in &b.sizes {
        let p = random_points(n, 2, b.seed);
        let c = super::Config {
            seed: b.seed,
            iters: b.iters,
            cutoff: Some(r),
            variant: super::Variant::XThreads,
            // One run of the dynamics (the default consensus makes six): the benchmark's unit.
            select: super::Select::Stable,
            ..Default::default()
        };
        let mut devices: Vec<(String, Option<&neurobits_gpu_host::Gpu>)> = Vec::new();
        if let Some(g) = gpu {
            devices.push((format!("gpu sparse ({})", g.name()), Some(g)));
        }
        if use_cpu && n <= b.cpu_max {
            devices.push((format!("cpu sparse ({} threads)", rayon::current_num_threads()), None));
        }
        for (name, g) in devices {
            let t = Instant::now();
            let rep = super::cluster_on::<f32>(&p, None, &c, g)?;
            let total = t.elapsed().as_secs_f64();
            let sec = |k: &str| rep.seconds.get(k).copied().unwrap_or(f64::NAN);
            crate::outln!(
                "N = {n}, cutoff {r}·a: {name}: {} coupled pairs, k = {} ({} non-singleton) at {} %; scale {:.2} s, \
                 weights {:.2} s, dynamics+sync {:.2} s{}, clusters {:.2} s; whole algorithm {:.2} s",
                rep.coupled_pairs,
                rep.k,
                rep.k_non_singleton,
                rep.threshold_percent,
                sec("scale"),
                sec("weights"),
                sec("dynamics and sync"),
                rep.seconds.get("gpu kernels").map_or(String::new(), |k| format!(" (kernels {k:.2} s)")),
                sec("clusters"),
                total
            )?;
            rows.push(serde_json::json!({"n": n, "cutoff": r, "implementation": name, "total_s": total,
                "coupled_pairs": rep.coupled_pairs, "k": rep.k, "seconds": rep.seconds,
                "hits_sha256": rep.hits_sha256, "state_sha256": rep.state_sha256}));
        }
    }
    if let Some(out) = &b.out {
        crate::io::json::write(out, &rows)?;
    }
    Ok(())
}

/// `--prepare`: [`super::prepare::profile`] per size, one line each, and the JSON.
fn prepare(b: &BenchConfig) -> Result<()> {
    let mut rows = Vec::new();
    for &n in &b.sizes {
        let p = random_points(n, 2, b.seed);
        let r = super::prepare::profile(&p, b.cutoff)?;
        let f = |s: [f64; 2]| format!("{:.3} ({:.3} CPU)", s[0], s[1]);
        let opt = |s: Option<[f64; 2]>| s.map_or("-".to_string(), f);
        crate::outln!(
            "N = {n}{}, {} threads, wall s (CPU s): Qhull {}, spade {} (same edges: {}), scale {}, weights {}, \
             lane rows from J {}, from the points {}; {} entries; upload {:.1} MB before, {:.1} MB now; \
             host before {}, now {}",
            b.cutoff.map_or(String::new(), |r| format!(", cutoff {r}·a")),
            r.threads,
            f(r.qhull_s),
            opt(r.spade_s),
            r.same_edges,
            f(r.scale_from_edges_s),
            f(r.weights_s),
            opt(r.lane_rows_from_j_s),
            opt(r.lane_rows_from_points_s),
            r.entries,
            r.upload_bytes_before as f64 / 1e6,
            r.upload_bytes_now as f64 / 1e6,
            f(r.before_s),
            f(r.now_s)
        )?;
        rows.push(r);
    }
    if let Some(out) = &b.out {
        crate::io::json::write(out, &rows)?;
    }
    Ok(())
}
