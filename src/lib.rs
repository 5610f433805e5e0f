//! neurobits: the host-side library around [`neurobits_core`], and the `neurobits` command line.
//!
//! Layers: `neurobits-core` holds every model's rules once, as word-level step functions; this
//! crate adds one module per model ([`gbnn`], [`flyhash`]: drivers, benches, experiments), the
//! device policy and CPU pool ([`device`]: choosing a device is one argument), file formats
//! ([`io`]), plots ([`plot`]) and progress bars ([`progress`]). The command tree is [`cli`]; every
//! command is a library function taking its configuration struct, so the library is usable
//! without it (see `examples/`).
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

/// `print!` that returns an error (one line, exit code 2) instead of panicking when standard
/// output cannot be written (a full device); a closed pipe ends the process quietly (SIGPIPE,
/// restored by `main`), as for any Unix filter.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($t)*).map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))
    }};
}

/// `println!` that returns an error instead of panicking (see [`out!`]).
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        $crate::progress::suspend(|| writeln!(std::io::stdout(), $($t)*))
            .map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))
    }};
}

pub mod cli;
pub mod cortical;
pub mod device;
pub mod flyhash;
pub mod gbnn;
pub mod io;
pub mod ocnn;
pub mod plot;
pub mod progress;
