//! Projection CSV: any text gives m rows of s ascending indices below d, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&d, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let d = 1 + d as usize;
    if let Ok((m, s, idx)) = neurobits::io::projection::parse(text, "fuzz", d) {
        assert_eq!(idx.len(), m as usize * s as usize);
        for row in idx.chunks(s as usize) {
            assert!(row.windows(2).all(|w| w[0] < w[1]) && row.iter().all(|&i| (i as usize) < d));
        }
    }
});
