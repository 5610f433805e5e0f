//! CSV matrices: any text gives a matrix whose size matches its shape, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::matrix_csv(data));
