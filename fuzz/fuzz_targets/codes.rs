//! FlyHash code files: any bytes give codes with clean padding, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::codes(data));
