//! NPY arrays: any bytes give a matrix whose size matches its shape, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = neurobits::flyhash::data::npy(data, "fuzz") {
        assert_eq!(m.data.len(), m.rows * m.cols);
    }
});
