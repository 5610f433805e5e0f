//! # neurobits-core
//!
//! Every model of neurobits written once, as word-level step functions: the rayon CPU driver, the
//! PTX kernels, the FPGA cycle model and the Cortex-M firmware all call the same functions, so
//! their results agree bit for bit. One module per model:
//!
//! * [`gbnn`]: the Gripon–Berrou associative memory (Yao, Gripon & Rabbat 2013), bit-packed;
//! * [`flyhash`]: FlyHash (Dasgupta, Stevens & Navlakha 2017) with an exact winner-take-all;
//! * [`ocnn`]: the oscillatory chaotic clustering network (Benderskaya & Tolstov);
//! * [`cortical`]: the cortical-column network (Nere, Franey, Hashmi & Lipasti 2012).
//!
//! Shared by all models: [`exp`] (`e^x` with the same bits on every target), [`prng`]
//! (counter-based random numbers keyed by purpose), [`digest`] (FNV-1a over little-endian
//! words), [`bits`] (set-bit iteration), [`kernel`] (the typed host–kernel interface) and
//! [`Error`].
//!
//! `#![no_std]` and heap-free by default: the step functions take plain slices, never allocate
//! and never format, so they compile for `nvptx64-nvidia-cuda` and `thumbv7m-none-eabi`
//! unchanged. Feature `alloc` adds the heap-backed [`gbnn::Network`]; feature `std` adds the rayon
//! batch driver [`gbnn::batch`]; feature `defmt` derives `defmt::Format`.
//!
//! ```
//! use neurobits_core::gbnn::{FixedNetwork, Rule, Params, weight_words, ERASED};
//! let mut net = FixedNetwork::<{ weight_words(3, 3) }>::new(3, 3).unwrap();
//! net.store(&[1, 2, 0]).unwrap();
//! let (mut state, mut scratch) = ([0u64; 3], [0u64; 3]);
//! net.retrieve(&[ERASED, 2, 0], Rule::Joint, Params::default(), &mut state, &mut scratch).unwrap();
//! assert_eq!(state, [0b010, 0b100, 0b001]);
//! ```
#![no_std]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;

pub mod bits;
pub mod cortical;
pub mod digest;
pub mod exp;
pub mod flyhash;
pub mod gbnn;
pub mod kernel;
pub mod ocnn;
pub mod prng;

pub use error::Error;

/// The machine word the bit-packed states, weights and codes are made of.
pub type Word = u64;
/// Bits in a [`Word`].
pub const WORD_BITS: usize = 64;
