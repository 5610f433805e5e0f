//! CSV matrices: any text gives a matrix whose size matches its shape, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(m) = neurobits::flyhash::data::csv(text, "fuzz") {
        assert_eq!(m.data.len(), m.rows * m.cols);
    }
});
