//! OCNN point files: at least 2 points of finite coordinates, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::points(data));
