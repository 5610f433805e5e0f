//! What every fuzz target asserts, written once: the fuzz targets (`fuzz_targets/*.rs`) call
//! these on libFuzzer's inputs, and `tests/fuzz_corpus.rs` (in `make test`) replays the committed
//! corpus (`fuzz/corpus/<target>/`) through the same functions. Each reader either refuses the
//! bytes (an error) or returns something whose size matches its shape; a panic is the failure.

// Each fuzz target uses one of these functions.
#![allow(dead_code)]

use neurobits_core::gbnn::Geometry;

/// What a target asserts of one input (it panics when the reader breaks its promise).
pub type Check = fn(&[u8]);

/// The targets, by the name of their corpus folder.
pub const TARGETS: &[(&str, Check)] = &[
    ("netfile", netfile),
    ("symbols", symbols),
    ("idx", idx),
    ("npy", npy),
    ("matrix_csv", matrix_csv),
    ("projection", projection),
    ("codes", codes),
    ("points", points),
    ("classes", classes),
];

/// Network files: a file that decodes is exactly what encoding writes.
pub fn netfile(data: &[u8]) {
    use neurobits::io::netfile::{decode, encode};
    if let Ok(net) = decode(data, data.len() as u64, "fuzz") {
        let mut out = Vec::new();
        encode(&mut out, &net).unwrap();
        assert_eq!(out, data, "a file that decodes must be exactly what encoding writes");
    }
}

/// Message/probe CSV for a geometry the first byte picks: whole messages whose symbols are in
/// `[0, L)`, silent (`-`, sparse messages) or, in probes, erased (`?`).
pub fn symbols(data: &[u8]) {
    use neurobits_core::gbnn::{ERASED, SILENT};
    let Some((&shape, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let g = Geometry::new(1 + (shape & 7) as usize, 1 + (shape >> 3) as usize).unwrap();
    for probes in [false, true] {
        if let Ok(s) = neurobits::io::symbols::parse(text, "fuzz", &g, probes) {
            assert_eq!(s.len() % g.clusters(), 0);
            let ok = |x: u16| (x as usize) < g.neurons_per_cluster() || x == SILENT || (probes && x == ERASED);
            assert!(s.iter().all(|&x| ok(x)), "a symbol out of range: {s:?}");
        }
    }
}

/// IDX matrices.
pub fn idx(data: &[u8]) {
    if let Ok(m) = neurobits::flyhash::data::idx(data, "fuzz") {
        assert_eq!(m.data.len(), m.rows * m.cols);
    }
}

/// NPY arrays.
pub fn npy(data: &[u8]) {
    if let Ok(m) = neurobits::flyhash::data::npy(data, "fuzz") {
        assert_eq!(m.data.len(), m.rows * m.cols);
    }
}

/// CSV matrices (any delimiter the reader detects).
pub fn matrix_csv(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(m) = neurobits::flyhash::data::csv(text, "fuzz") {
        assert_eq!(m.data.len(), m.rows * m.cols);
    }
}

/// Projection CSV for an input dimension the first byte picks: sorted, in-range rows.
pub fn projection(data: &[u8]) {
    let Some((&d, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let d = 1 + d as usize;
    if let Ok((m, s, idx)) = neurobits::io::projection::parse(text, "fuzz", d) {
        assert_eq!(idx.len(), m as usize * s as usize);
        for row in idx.chunks(s as usize) {
            assert!(row.windows(2).all(|w| w[0] < w[1]) && row.iter().all(|&i| (i as usize) < d));
        }
    }
}

/// FlyHash code files: whole codes, no bit set past bit `m`.
pub fn codes(data: &[u8]) {
    if let Ok((m, codes)) = neurobits::io::codes::decode(data, "fuzz") {
        let words = (m as usize).div_ceil(64);
        assert_eq!(codes.len() % words, 0);
        if m % 64 != 0 {
            assert!(codes.chunks(words).all(|c| c[words - 1] >> (m % 64) == 0));
        }
    }
}

/// OCNN point files: at least 2 points of at least one finite coordinate each.
pub fn points(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(p) = neurobits::ocnn::points::parse(text, "fuzz") {
        assert!(p.n >= 2 && p.dim >= 1 && p.coords.len() == p.n * p.dim);
        assert!(p.coords.iter().all(|c| c.is_finite()));
    }
}

/// Class files (FCPS `.cls`) for as many points as the first byte says: one class per point.
pub fn classes(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if let Ok(c) = neurobits::ocnn::classes::parse(text, "fuzz", n as usize) {
        assert_eq!(c.len(), n as usize);
    }
}
