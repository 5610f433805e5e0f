//! The cortical-column network of Nere, Franey, Hashmi & Lipasti ("Simulating Cortical Networks
//! on Heterogeneous Multi-GPU Systems", JPDC 2012), in the exact integer form of
//! `docs/manual/src/spec-cortical*.md`: hypercolumns of `M` minicolumns in a binary converging tree,
//! Eq. 1–7 as `G = 20·S − (40k + 19)·Ω` on Q0.16 weights (no `exp`, no division), an integer
//! winner-take-all key with ties to the lowest index, Hebbian learning of the winner, random
//! firing from a counter-based hash. Every decision is an integer, so every target, schedule,
//! thread mapping and device split gives the same bits.
//!
//! * [`rules`]: Eq. 1–7, the WTA key, learning, random firing — one minicolumn at a time;
//! * [`column_step`]: one hypercolumn's step; [`Net::step`]: all levels, either [`Schedule`];
//! * [`Part`]: the levels and subtrees one worker of a multi-device split holds (P-1);
//! * [`lgn`]: the image → bottom inputs transform; [`train()`]/[`evaluate`]: the protocol;
//! * [`rng`]: the spec's counter-based generator; `digest` (feature `sha`): the SHA-256 digests.
//!
//! ```
//! use neurobits_core::cortical::{rules, FixedNetwork, CpuLearner, Protocol, Schedule, StepCtx, train};
//! // Configuration A's shape (3 levels × 16 minicolumns), one image with 4 active inputs.
//! let mut fixed = FixedNetwork::<7, 16, 32>::new(3).unwrap();
//! let mut net = fixed.net();
//! net.init(1);
//! let images = [0b1111u64 << 8, 0, 0, 0];
//! let (mut winners, mut prev) = ([0i32; 7], [-1i32; 7]);
//! let mut cpu = CpuLearner { net, images: &images, winners: &mut winners, prev: &mut prev,
//!     schedule: Schedule::Synchronous, t: 0, seed: 1, rule: rules::Rule::spec(32768) };
//! train(&mut cpu, &mut [0], &Protocol { epochs: 200, exposure: 1, seed: 1 }, |_| {}).unwrap();
//! // The first bottom hypercolumn has learnt the pattern: a minicolumn answers it on its own.
//! let mut w = [0i32; 7];
//! let eval = StepCtx::new(&cpu.net.geo, 0, 1, false);
//! cpu.net.step(&images, &mut w, None, &eval);
//! assert!(w[0] >= 0 && w[1] == -1);
//! ```

mod column;
#[cfg(feature = "sha")]
pub mod digest;
mod fixed;
mod geometry;
pub mod kernels;
pub mod lgn;
mod network;
mod part;
pub mod rng;
pub mod rules;
mod train;

pub use column::bottom_input;
pub use column::{
    bit, column_step, minicolumn_key, nearest_code, nearest_feature, parent_input, population_code, settle,
    tally_inputs, Column, Input, StepCtx,
};
pub use fixed::FixedNetwork;
pub use geometry::{Geometry, MAX_LEVELS};
pub use network::{init_column, Net, Schedule};
pub use part::{Part, Span};
pub use train::{evaluate, train, CpuLearner, Learner, Protocol};
