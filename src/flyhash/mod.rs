//! FlyHash on the host: data readers, the rayon CPU driver over the core's FlyHash step
//! functions, Hamming search, SimHash for comparison, and the `neurobits flyhash` commands.

pub mod bench;
pub mod commands;
pub mod cpu;
pub mod data;
pub mod eval;
pub mod flynn;
pub mod gpu;
pub mod search;
mod search_bench;
pub mod simhash;
