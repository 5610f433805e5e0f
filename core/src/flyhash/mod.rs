//! FlyHash (Dasgupta, Stevens & Navlakha, Science 2017) as step functions: a sparse binary
//! projection drawn from the portable PRNG, an exact winner-take-all with a fixed tie rule, and
//! Hamming search — written once, called by the CPU driver and the GPU kernels.
//!
//! * Row `r` of the `m × d` projection holds exactly `s` distinct input indices, ascending:
//!   Floyd's algorithm over draws `r·s + j` of `stream_key(seed, 16)`, then sorted.
//! * Output `r` is the `f32` sum of `x` over row `r`'s indices **in ascending index order**,
//!   starting from `+0.0` — one fixed order, so every target produces the same floats.
//! * Winner-take-all keeps exactly `k` outputs: larger value first, then lower index. Values are
//!   compared through [`sort_key`], an order-preserving map of `f32` onto `u32`, and the `k`-th
//!   largest key is found by a 4-pass radix select ([`kth_largest`]).
//! * Inputs that are 8-bit pixels (integers in `0..=255`) may be summed as integers instead,
//!   four inputs per [`Pixels4`] word: every partial `f32` sum of such inputs is an integer below
//!   2²⁴, hence exact, so the integer sums are the `f32` activations and select the same winners.
//! * [`bisect64`] is the 64-step bisection of da Cunha et al. (2023), kept for comparison: it
//!   returns `x > mid`, which can hold more or fewer than `k` winners.
//! * [`dense_pack`] turns every activation into a bit against a threshold (DenseFly, and the
//!   learned per-bit medians): codes as long as SimHash's, compared at equal length.
//! * The approximate index's rules: [`pseudo_sums`]/[`pseudo_key`] (a short bucket key per
//!   table, sum-pooled from the dense projection), [`Probes`] (multi-probe order over a table's
//!   buckets) and [`sq_euclidean`] (re-ranking on the original vectors).

mod dense;
mod euclid;
mod filter;
mod flynn;
mod hamming;
pub mod kernels;
mod params;
mod pixels;
mod probe;
mod projection;
mod pseudo;
mod search;
mod view;
mod wta;

pub use dense::{dense_mean, dense_median, dense_pack};
pub use euclid::{sq_euclidean, sq_euclidean_mixed, sq_euclidean_pixels, EUCLID_LANES, PIXEL_EUCLID_MAX_DIM};
pub use filter::{
    candidate, candidate_row, sample_interval, sample_ranks, wta_pack_filtered, FilterCounts, KeyClass, KeyInterval,
    RadixSelect64, SampleSelect,
};
pub use flynn::{
    flynn_class, flynn_novelty, flynn_restore, flynn_store, flynn_weights, FLYNN_MAX_COUNT, FLYNN_WEIGHTS,
};
pub use hamming::{hamming, hamming_from_and, hamming_word};
pub use params::FlyParams;
pub use pixels::{is_pixel, pixel_sums_exact, Pixels4};
pub use probe::{Probe, Probes};
pub use projection::{activation, activation_chunks, activation_chunks_at, activation_with, projection_row, Lanes};
pub use pseudo::{key_value, probe_costs, pseudo_key, pseudo_sums, PSEUDO_MAX_BITS};
pub use search::{sort_hits, top_r};
pub use view::FlynnView;
pub use wta::{
    bisect64, kth_largest, pack_above, select, select_range, sort_key, ties_left, wta_pack, wta_pack_keys, RadixSelect,
};
