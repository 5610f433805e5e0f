//! # neurobits-core
//!
//! Bit-packed Gripon–Berrou neural networks (GBNN, Yao, Gripon & Rabbat 2013) written once as
//! word-level step functions. Every target — the rayon CPU driver, the PTX kernels, the FPGA
//! cycle model and the Cortex-M firmware — calls the same functions, so their results agree bit
//! for bit.
//!
//! `#![no_std]` and heap-free by default: the step functions take plain slices, never allocate,
//! never format and never touch floating point, so they compile for `nvptx64-nvidia-cuda` and
//! `thumbv7m-none-eabi` unchanged. Feature `alloc` adds the heap-backed [`Network`]; feature
//! `std` adds the rayon batch driver [`batch`]; feature `defmt` derives `defmt::Format`.
//!
//! ## Data layout
//! A network of `C` clusters of `L` neurons has `n = C·L` neurons; neuron `(c, l)` has index
//! `c·L + l`. Each cluster is padded to `wpc = ⌈L/64⌉` 64-bit [`Word`]s, so a *row* (the state
//! of one probe, or the neighbours of one neuron) is `C·wpc` words and every cluster starts on a
//! word boundary: per-cluster work never needs cross-word masking. `W` is `n` rows, row `i` holding
//! the neurons connected to `i`.
//!
//! ```
//! use neurobits_core::{FixedNetwork, Rule, Params, weight_words, ERASED};
//! // 3 clusters of 3 neurons: the paper's Section V-A example, 0-based.
//! let mut net = FixedNetwork::<{ weight_words(3, 3) }>::new(3, 3).unwrap();
//! for m in [[0u16, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] {
//!     net.store(&m).unwrap();
//! }
//! let (mut state, mut scratch) = ([0u64; 3], [0u64; 3]);
//! let stats = net.retrieve(&[ERASED, ERASED, 0], Rule::SumOfMax, Params::default(),
//!                          &mut state, &mut scratch).unwrap();
//! assert!(stats.converged);
//! ```
#![no_std]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;
mod fixed;
mod geometry;

#[cfg(feature = "std")]
pub mod batch;
pub mod digest;
pub mod flyhash;
#[cfg(feature = "alloc")]
mod network;
pub mod outcome;
pub mod prng;
pub mod retrieve;
pub mod rules;
pub mod store;
pub mod workload;

pub use error::Error;
pub use fixed::FixedNetwork;
pub use geometry::{weight_words, Geometry, MAX_CLUSTERS, MAX_NEURONS};
#[cfg(feature = "alloc")]
pub use network::Network;
pub use retrieve::{retrieve, Params, Rule, Stats};

/// The machine word the bit-packed state and weights are made of.
pub type Word = u64;
/// Bits in a [`Word`].
pub const WORD_BITS: usize = 64;
/// The symbol value that marks an erased cluster in a probe.
///
/// ```
/// assert_eq!(neurobits_core::ERASED, u16::MAX);
/// ```
pub const ERASED: u16 = u16::MAX;
