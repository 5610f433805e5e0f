//! neurobits: the command-line tool and host-side library around [`neurobits_core`].
//!
//! Layers: `neurobits-core` holds every model rule once, as word-level step functions; this crate
//! adds file formats ([`io`]), compute backends chosen by one argument ([`device`]), the
//! dense-float baseline of the paper's CPU code ([`dense`]), plots and the `gbnn` commands.

pub mod cli;
pub mod device;
pub mod flyhash;
pub mod gbnn;
pub mod io;
pub mod plot;
pub mod progress;
