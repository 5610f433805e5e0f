//! Message and probe CSV: any text gives symbols that pass the geometry's check, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::symbols(data));
