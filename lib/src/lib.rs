//! neurobits: the host-side library around [`neurobits_core`]. The `neurobits` command line is a
//! separate crate (`neurobits-cli`) on top of this one.
//!
//! Layers: `neurobits-core` holds every model's rules once, as word-level step functions; this
//! crate adds one module per model ([`gbnn`], [`flyhash`], [`ocnn`], [`cortical`]: CPU drivers,
//! device-resident handles), the device policy and CPU pool ([`device`]: choosing a device is one
//! argument), file formats ([`io`]) and the checks every configuration shares ([`validate`]).
//!
//! Features: none by default, so a program that adds `neurobits` pulls in no clap, plotters or
//! indicatif. `cli` adds the experiment, bench and figure commands of the CLI (with `plots` for
//! SVG figures and `progress` for progress bars).
//!
//! ```
//! use neurobits::device::{Device, DeviceChoice};
//! use neurobits_core::gbnn::{Network, Params, Rule, ERASED};
//! let mut net = Network::new(3, 3).unwrap();
//! net.store(&[1, 2, 0]).unwrap();
//! let device = Device::open(DeviceChoice::Cpu)?;
//! let out = device.gbnn(&net)?.retrieve(&[ERASED, 2, 0], Rule::Joint, &Params::default())?;
//! assert_eq!(out.states, [0b010, 0b100, 0b001]);
//! # Ok::<(), anyhow::Error>(())
//! ```
#![warn(missing_docs)]

/// `print!` for human text (tables, summaries) that returns an error (one line, exit code 2)
/// instead of panicking when it cannot be written (a full device); a closed pipe ends the process
/// quietly (SIGPIPE, restored by `main`), as for any Unix filter. Prints nothing under `--quiet`
/// and goes to standard error while standard output carries data ([`console`]).
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {
        $crate::console::human(format_args!($($t)*))
    };
}

/// `println!` for human text that returns an error instead of panicking (see [`out!`]).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::console::human(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::console::human(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `eprintln!` for notes and one-line summaries: nothing under `--quiet` ([`console`]).
#[macro_export]
macro_rules! noteln {
    ($($t:tt)*) => {
        $crate::console::note(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `neurobits` version and the commit it was built from, e.g. `0.1.0 (0ac8e6c1a2b3)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("NEUROBITS_COMMIT"), ")");

/// Runs `f` with the active progress bar (if any) cleared from the terminal (`outln!`).
#[doc(hidden)]
pub fn suspend_progress<R>(f: impl FnOnce() -> R) -> R {
    progress::suspend(f)
}

pub mod budget;
pub mod cancel;
pub mod console;
pub mod cortical;
pub mod device;
pub mod dist;
#[cfg(doctest)]
pub mod doc_blocks;
pub mod error;
pub mod flyhash;
pub mod gbnn;
pub mod io;
pub mod model;
pub mod ocnn;
#[cfg(feature = "plots")]
pub mod plot;
pub mod progress;
pub(crate) mod resident;
pub mod validate;

pub use error::{Error, Result};
