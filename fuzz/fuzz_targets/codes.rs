//! FlyHash code files: any bytes give codes with clean padding, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((m, codes)) = neurobits::io::codes::decode(data, "fuzz") {
        let words = (m as usize).div_ceil(64);
        assert_eq!(codes.len() % words, 0);
        if m % 64 != 0 {
            assert!(codes.chunks(words).all(|c| c[words - 1] >> (m % 64) == 0));
        }
    }
});
