//! Files: message/probe CSV, the network format, FlyHash code and projection files, atomic
//! writes, memory checks. Every reader has a parser over bytes or text (what the fuzzers call).

pub mod atomic;
pub mod codes;
pub mod json;
pub mod memory;
pub mod netfile;
pub mod output;
pub mod projection;
pub mod symbols;
