//! Files: message/probe CSV, the network format, FlyHash code and projection files, atomic
//! writes, memory checks. Every reader has a parser over bytes or text (what the fuzzers call).

#[cfg(feature = "ann")]
pub mod ann;
pub mod atomic;
pub mod codes;
pub mod firmware;
pub mod journal;
pub mod json;
pub mod labels_out;
pub mod memory;
pub mod model_file;
pub mod netfile;
pub mod output;
pub mod projection;
pub mod read;
pub mod symbols;

/// Lowercase hex of a digest.
///
/// ```
/// assert_eq!(neurobits::io::hex(&[0x0f, 0xa0]), "0fa0");
/// ```
pub fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
