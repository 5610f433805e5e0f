//! Network files: any bytes give a network that re-encodes to the same bytes, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::netfile(data));
