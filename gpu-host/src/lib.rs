//! GPU backend of neurobits: the PTX built from `gpu-device/` (Rust kernels over the core's step
//! functions), launched through `cudarc`.
//!
//! Layers, as in cudarc: [`ptx`] (the raw kernels and their names) → [`launch`] (one thin,
//! `Result`-returning wrapper per kernel) → [`Gpu`] and [`DeviceNetwork`] (safe types owning
//! device memory; a network borrows the GPU it lives on). The driver library is opened at run
//! time, so this crate builds, and its CPU-side tests run, on machines without CUDA.
//!
//! ```no_run
//! use neurobits_core::{Network, Params, Rule, ERASED};
//! use neurobits_gpu_host::Gpu;
//! let mut net = Network::new(3, 3).unwrap();
//! net.store(&[1, 2, 0]).unwrap();
//! let gpu = Gpu::open(0)?;
//! let dnet = gpu.upload(&net)?;
//! let out = dnet.retrieve(&[ERASED, 2, 0], Rule::Joint, &Params::default())?;
//! assert_eq!(out.states, [0b010, 0b100, 0b001]);
//! # Ok::<(), neurobits_gpu_host::GpuError>(())
//! ```

mod bandwidth;
mod dense;
mod error;
mod fly;
mod gpu;
pub mod launch;
mod network;
pub mod ptx;

pub use dense::DenseGpu;
pub use error::GpuError;
pub use fly::{FlyBatch, FlyGpu, FlyInputs, FlyWta};
pub use gpu::Gpu;
pub use network::{DeviceNetwork, GpuBatch};
