//! Point sets of the OCNN GPU tests: uniform random points from the portable PRNG, and the FCPS
//! sets from the working directory (the GPU bundle) or the source tree.
#![allow(dead_code)]

use neurobits::ocnn::points;
use std::path::PathBuf;

/// Uniform random points in `[−100, 100]^dim` from the portable PRNG (the paper's Table 2 data).
pub fn random(n: usize, dim: usize, seed: u64) -> points::Points {
    let coords = (0..n * dim)
        .map(|i| (neurobits_core::prng::draw(seed, i as u64) >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0)
        .collect();
    points::Points { n, dim, coords }
}

/// The FCPS set `name`: `data/fcps` of the working directory (the GPU bundle), else of the
/// source tree (`make setup` fetches them).
pub fn fcps(name: &str) -> points::Points {
    let here = PathBuf::from("data/fcps").join(name);
    let p = if here.exists() { here } else { PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/fcps").join(name) };
    points::load(&p).unwrap_or_else(|e| panic!("{e}: run make setup"))
}
