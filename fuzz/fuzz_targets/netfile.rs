//! Network files: any bytes give a network that re-encodes to the same bytes, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use neurobits::io::netfile::{decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(net) = decode(data, data.len() as u64, "fuzz") {
        let mut out = Vec::new();
        encode(&mut out, &net).unwrap();
        assert_eq!(out, data, "a file that decodes must be exactly what encoding writes");
    }
});
