//! Projection CSV: any text gives m rows of s ascending indices below d, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::projection(data));
