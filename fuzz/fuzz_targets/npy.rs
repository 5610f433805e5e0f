//! NPY arrays: any bytes give a matrix whose size matches its shape, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::npy(data));
