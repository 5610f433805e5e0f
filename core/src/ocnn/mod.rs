//! The oscillatory chaotic neural network (OCNN) of Benderskaya & Tolstov, as specified in
//! `docs/manual/src/spec-ocnn.md`: one chaotic logistic-map neuron per data point, coupled by Gaussian
//! weights; pairs that stay synchronized are linked, and the connected components are clusters.
//!
//! Canonical arithmetic (spec §11.1), identical on every target:
//! * `f(x) = 1 − (2·x)·x`, no FMA;
//! * `s_i = Σ_j J_ij·f(x_j)` in the **lanes32** order ([`lanes32`]): lane `l = j mod 32` sums its
//!   terms in ascending `j` from `+0.0`, then the 32 lane sums are combined by the xor-butterfly
//!   `d = 16, 8, 4, 2, 1` (what one warp does with `shfl.bfly`);
//! * `x_i = s_i / C_i`, one IEEE division, `C_i = Σ_j J_ij` in the same order, computed once;
//! * initial state from SplitMix64: `x0_i = k_i·2⁻²³ − 1`, `k_i` the top 24 bits of output `i`.
//!
//! Everything after the trajectories is integer: phase bits packed 64 iterations per word,
//! fragmentary counts with `|x_i − x_j| < ε`, the threshold test `100·H_ij > p·T`, union-find,
//! clusters numbered by their smallest member.

mod cluster;
#[cfg(feature = "alloc")]
mod consensus;
mod coupling;
mod dynamics;
mod early;
mod grouped;
mod grouped_rows;
pub mod kernels;
mod lane_column;
mod lane_kernels;
#[cfg(feature = "alloc")]
mod links;
mod real;
#[cfg(feature = "alloc")]
mod stable;
mod sync;

pub use cluster::{
    forest_key, forest_pair, labels_at, linked, linked_prefix, plateau, UnionFind, FOREST_MAX_HITS, FOREST_MAX_N,
};
#[cfg(feature = "alloc")]
pub use consensus::{
    adjusted_rand, mean_agreement, min_cluster_candidates, most_agreeing, pick_min_cluster, restart_seed,
    DEFAULT_RESTARTS, DEFAULT_SCALE_FACTORS, MIN_CLUSTER_DIVISORS, MIN_CLUSTER_MARGIN,
};
pub use coupling::{coupling_weight, squared, zero_beyond};
pub use dynamics::{
    butterfly, combine, initial_state, lane_sum, lane_sum_of_states, lane_sum_sparse, lanes32, lanes32_sparse,
    row_norm, transfer, update_neuron, update_neuron_lanes, update_neuron_sparse,
};
pub use early::EarlyStop;
pub use grouped::{
    grouped_by_lane, lanes32_grouped, lanes32_grouped_at, update_neuron_grouped, update_neuron_grouped_at,
};
pub use lane_column::{LaneColumn, Quot16, Quot8};
#[cfg(feature = "alloc")]
pub use links::{link_neighbours, mutual_pairs};
pub use real::Real;
#[cfg(feature = "alloc")]
pub use stable::{default_min_cluster, lambda, stable_clusters, stable_clusters_attached, Stable};
pub use sync::{phase_bit, phase_hits, phase_hits_blocks, SyncMode};
