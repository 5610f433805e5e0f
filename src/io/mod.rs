//! Files: message/probe CSV, the network format, atomic writes, memory checks.

pub mod atomic;
pub mod memory;
pub mod netfile;
pub mod output;
pub mod symbols;
