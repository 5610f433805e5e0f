//! FlyHash on the host: data readers, the rayon CPU driver over the core's FlyHash step
//! functions, Hamming search, SimHash for comparison, and the `neurobits flyhash` commands.

pub mod ann;
#[cfg(feature = "cli")]
pub mod ann_bench;
#[cfg(feature = "cli")]
pub mod ann_bench_data;
/// `flyhash ann-data`: an ann-benchmarks file from IDX images, with exact neighbours.
#[cfg(feature = "ann")]
pub mod ann_data;
/// `flyhash ann-figure`: recall against queries per second.
#[cfg(feature = "cli")]
pub mod ann_figure;
pub mod ann_gpu;
mod ann_search;
pub mod ann_truth;
#[cfg(feature = "cli")]
pub mod bench;
#[cfg(feature = "cli")]
mod bench_config;
pub mod classifier;
#[cfg(feature = "cli")]
pub mod commands;
pub mod cpu;
pub mod data;
pub mod dense;
#[cfg(feature = "cli")]
pub mod eval;
/// `flynn export`.
pub mod export;
pub mod flynn;
pub mod gpu;
pub mod index;
pub mod index_dist;
pub mod model;
pub mod search;
#[cfg(feature = "cli")]
mod search_bench;
pub mod simhash;
