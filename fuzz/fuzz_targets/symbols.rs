//! Message and probe CSV: any text gives symbols that pass the geometry's check, or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use neurobits::io::symbols::parse;
use neurobits_core::gbnn::Geometry;

fuzz_target!(|data: &[u8]| {
    let Some((&shape, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let g = Geometry::new(1 + (shape & 7) as usize, 1 + (shape >> 3) as usize).unwrap();
    for probes in [false, true] {
        if let Ok(s) = parse(text, "fuzz", &g, probes) {
            assert_eq!(s.len() % g.clusters(), 0);
            for m in s.chunks(g.clusters()) {
                g.check_symbols(m, probes).unwrap();
            }
        }
    }
});
