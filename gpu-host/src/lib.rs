//! GPU backend of neurobits: the PTX built from `gpu-device/` (Rust kernels over the core's step
//! functions), launched through `cudarc`.
//!
//! Layers, as in cudarc: [`ptx`] (the kernels as built) → `launch` (the one launch path, typed by
//! the argument structs of `neurobits_core::kernel`) → [`Gpu`] and one module per model holding
//! safe types that own device memory: [`gbnn::DeviceNetwork`] (W resident, answers batches),
//! [`flyhash::FlyGpu`] (projection resident). A model's handle borrows the GPU it lives on. The
//! driver library is opened at run time, so this crate builds, and its CPU-side tests run, on
//! machines without CUDA.
//!
//! ```no_run
//! use neurobits_core::gbnn::{Network, Params, Rule, ERASED};
//! use neurobits_gpu_host::Gpu;
//! let mut net = Network::new(3, 3).unwrap();
//! net.store(&[1, 2, 0]).unwrap();
//! let gpu = Gpu::open(0)?;
//! let dnet = gpu.upload(&net)?;
//! let out = dnet.retrieve(&[ERASED, 2, 0], Rule::Joint, &Params::default())?;
//! assert_eq!(out.states, [0b010, 0b100, 0b001]);
//! # Ok::<(), neurobits_gpu_host::GpuError>(())
//! ```
#![warn(missing_docs)]

mod bandwidth;
pub mod cortical;
mod error;
pub mod flyhash;
pub mod gbnn;
mod gpu;
mod launch;
pub mod ocnn;
mod pinned;
pub mod ptx;
mod timeline;

pub use error::GpuError;
pub use gpu::{opened as opened_gpus, Gpu};
pub use launch::{KernelTimer, BLOCK};
pub use pinned::{Pinned, Plain};
