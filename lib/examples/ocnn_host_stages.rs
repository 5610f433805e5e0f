//! The host stages of the sparse OCNN run (`--cutoff 3`, f32, phase sync, T = 1000) on N uniform
//! points, each timed (wall and CPU seconds of the process) with a digest of what it produced,
//! so that two builds can be compared stage by stage and bit for bit:
//!
//! ```text
//! cargo run --release -p neurobits --example ocnn_host_stages -- 1000000 gen out/hits-1000000.bin
//! cargo run --release -p neurobits --example ocnn_host_stages -- 1000000 time out/hits-1000000.bin
//! ```
//!
//! `gen` runs the dynamics on the CPU (minutes at 10⁶ on two cores) and writes the hit counts;
//! `time` reads them back, so the clusters are timed on the real counts without the dynamics.
use neurobits::ocnn::{bench::random_points, clusters, cpu, digest, scale, weights, Config, Select};
use neurobits_core::ocnn::SyncMode;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// The process's CPU seconds so far.
fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the struct it is given; RUSAGE_SELF is always valid.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn timed<R>(name: &str, f: impl FnOnce() -> R) -> R {
    let (t, c) = (Instant::now(), cpu_seconds());
    let r = f();
    println!("{name}: {:.3} s wall, {:.3} CPU s", t.elapsed().as_secs_f64(), cpu_seconds() - c);
    r
}

/// The first 8 bytes of the SHA-256 of `bytes`, in hex.
fn short(bytes: impl Iterator<Item = u8>) -> String {
    let v: Vec<u8> = bytes.collect();
    Sha256::digest(&v).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, n, mode, file] = &args[..] else {
        anyhow::bail!("usage: ocnn_host_stages N gen|time HITS_FILE");
    };
    let n: usize = n.parse()?;
    let p = random_points(n, 2, 1);
    let edges = timed("Delaunay edges", || scale::delaunay_edges(&p))?;
    let a = timed("scale (edges and mean)", || scale::scale(&p))?;
    let pairs = edges.iter().flat_map(|e| [e.0.to_le_bytes(), e.1.to_le_bytes()].concat());
    println!("{} edges {}, a = {a:?}", edges.len(), short(pairs));
    let w = timed("weights (CSR rows)", || weights::sparse::<f32>(&p, a, 3.0))?;
    let index = w.ptr.iter().chain(&w.upper).chain(&w.hit_ptr).flat_map(|x| x.to_le_bytes());
    let values = w.vals.iter().chain(&w.norm).flat_map(|x| x.to_bits().to_le_bytes());
    let rows = index.chain(w.cols.iter().flat_map(|x| x.to_le_bytes())).chain(values);
    println!("{} entries {}", w.cols.len(), short(rows));
    let c = Config { iters: 1000, cutoff: Some(3.0), select: Select::Stable, ..Default::default() };
    let hits: Vec<u32> = if mode == "gen" {
        let tr = timed("dynamics (CPU)", || cpu::run_until(&w, 1, c.transient, c.iters, SyncMode::Phase, None));
        std::fs::write(file, tr.hits.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())?;
        tr.hits
    } else {
        let bytes = std::fs::read(file)?;
        bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
    };
    anyhow::ensure!(hits.len() == w.hit_ptr[n], "{file}: not the hits of this run");
    let grid = clusters::grid(true);
    // Also the stable rule with a small smallest cluster (many candidate clusters).
    let small = clusters::Rule::Stable { min_cluster: 5, attach_floor: 60 };
    for rule in [c.rule(n), clusters::Rule::Plateau, clusters::Rule::Fixed(70), small] {
        let cl =
            timed(&format!("clusters {rule:?}"), || clusters::cluster_pairs(n, &hits, w.pairs(), 1000, &grid, rule))?;
        let labels = short(cl.labels.iter().flat_map(|x| x.to_le_bytes()));
        let curve = short(cl.curve.iter().flat_map(|x| [x.0.to_le_bytes(), x.1.to_le_bytes()].concat()));
        println!("  p {} %, k {} ({} non-singleton), labels {labels}, curve {curve}", cl.p, cl.k, cl.k_non_singleton);
    }
    let d = timed("hits digest", || digest::sparse_hits(w.pairs(), &hits));
    println!("hits {d}");
    Ok(())
}
