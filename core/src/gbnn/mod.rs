//! The Gripon–Berrou associative memory (GBNN; Yao, Gripon & Rabbat 2013), bit-packed.
//!
//! ## Data layout
//! A network of `C` clusters of `L` neurons has `n = C·L` neurons; neuron `(c, l)` has index
//! `c·L + l`. Each cluster is padded to `wpc = ⌈L/64⌉` 64-bit [`Word`](crate::Word)s, so a *row*
//! (the state of one probe, or the neighbours of one neuron) is `C·wpc` words and every cluster
//! starts on a word boundary: per-cluster work never needs cross-word masking. `W` is `n` rows,
//! row `i` holding the neurons connected to `i`.
//!
//! ## Layers
//! * [`rules`]: the four retrieval rules as word-level step functions;
//! * [`schedule`]: which update each rule runs at step `t`, and when it stops;
//! * [`retrieve`](mod@retrieve): the single-probe driver over both; [`batch`] (feature `std`):
//!   the rayon driver;
//! * [`decode`]: compact results (a cluster's lowest active symbol and active count);
//! * [`shard`]: W split over devices by clusters (the columns of their neurons);
//! * [`NetworkBase`]: the network as a value over any weight storage; [`NetworkView`] over
//!   borrowed, read-only weights (`&'static [u64]` in a microcontroller's flash).
//!
//! ```
//! use neurobits_core::gbnn::{FixedNetwork, Rule, Params, weight_words, ERASED};
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

#[cfg(feature = "std")]
pub mod batch;
pub mod decode;
mod geometry;
pub mod kernels;
pub mod mode;
mod network;
pub mod outcome;
pub mod retrieve;
pub mod rules;
pub mod schedule;
pub mod shard;
pub mod store;
pub mod workload;

pub use geometry::{row_words, weight_words, Geometry, MAX_CLUSTERS, MAX_NEURONS};
pub use mode::{Mode, SILENT};
#[cfg(feature = "alloc")]
pub use network::Network;
pub use network::{FixedNetwork, NetworkBase, NetworkView};
pub use retrieve::{retrieve, retrieve_in, Params, Rule, Stats};
pub use schedule::{Schedule, Update};

/// The symbol value that marks an erased cluster in a probe.
///
/// ```
/// assert_eq!(neurobits_core::gbnn::ERASED, u16::MAX);
/// ```
pub const ERASED: u16 = u16::MAX;
