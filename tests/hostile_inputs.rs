//! Hostile inputs end in an error, never a panic: the crashes the fuzzers found (kept in
//! tests/data/fuzz-crashes/) and hand-made cases of each class (sizes that overflow, headers that
//! end early, padding bits set).

use neurobits::flyhash::data::{idx, npy};
use neurobits::io::{codes, netfile, projection};

fn crash(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/fuzz-crashes/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn fuzz_crashes_are_errors() {
    assert!(idx(&crash("idx-dims-overflow"), "x").is_err());
    assert!(npy(&crash("npy-shape-empty"), "x").is_err());
}

#[test]
fn idx_dimensions_that_overflow_are_refused() {
    // 3 dimensions of 2^32 − 1: the element count overflows 64 bits.
    let mut b = vec![0, 0, 0x08, 3];
    b.extend([0xff; 12]);
    let e = idx(&b, "x").unwrap_err().to_string();
    assert!(e.contains("absurd"), "{e}");
    // Count fits but count × element size does not.
    let mut b = vec![0, 0, 0x0E, 2];
    b.extend(0x8000_0000u32.to_be_bytes());
    b.extend(0x8000_0000u32.to_be_bytes());
    assert!(idx(&b, "x").is_err());
}

#[test]
fn npy_headers_that_end_early_are_refused() {
    for header in [
        "{'descr': '<f4', 'fortran_order': False, 'shape': ), }",
        "{'descr'",
        "{'shape'",
        "{'shape': (99999999999999999999,), 'descr': '<f4', 'fortran_order': False}",
    ] {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((header.len() as u16).to_le_bytes());
        b.extend(header.as_bytes());
        assert!(npy(&b, "x").is_err(), "{header}");
    }
}

#[test]
fn code_files_with_padding_bits_or_bad_sizes_are_refused() {
    let file = |m: u32, n: u64, words: &[u64]| {
        let mut b = b"NBFLYHSH".to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend(m.to_le_bytes());
        b.extend(n.to_le_bytes());
        words.iter().for_each(|w| b.extend(w.to_le_bytes()));
        b
    };
    assert!(codes::decode(&file(70, 1, &[1, 1]), "x").is_ok());
    assert!(codes::decode(&file(70, 1, &[1, 1 << 6]), "x").is_err(), "bit 70 is padding");
    assert!(codes::decode(&file(70, u64::MAX, &[1, 1]), "x").is_err(), "n × words overflows");
    assert!(codes::decode(&file(0, 0, &[]), "x").is_err(), "m = 0");
    assert!(codes::decode(&file(64, 1, &[1])[..20], "x").is_err(), "truncated header");
}

#[test]
fn projection_rows_must_be_ascending_and_in_range() {
    assert!(projection::parse("0,1\n", "x", 2).is_ok());
    for bad in ["1,0\n", "0,2\n", "0,0\n", "0\n0,1\n", "", "a\n", "4294967296\n"] {
        assert!(projection::parse(bad, "x", 2).is_err(), "{bad:?}");
    }
}

#[test]
fn network_files_cut_anywhere_are_refused() {
    let mut net = neurobits_core::gbnn::Network::new(3, 70).unwrap();
    net.store(&[1, 2, 69]).unwrap();
    let mut b = Vec::new();
    netfile::encode(&mut b, &net).unwrap();
    assert_eq!(netfile::decode(&b[..], b.len() as u64, "x").unwrap(), net);
    for cut in [0, 7, 39, 40, 41, b.len() - 1] {
        assert!(netfile::decode(&b[..cut], cut as u64, "x").is_err(), "cut at {cut}");
    }
    // A size that claims more than the bytes there: an error, not a hang or an abort.
    assert!(netfile::decode(&b[..], u64::MAX, "x").is_err());
    let mut flipped = b.clone();
    flipped[100] ^= 1;
    assert!(netfile::decode(&flipped[..], b.len() as u64, "x").is_err(), "checksum");
}
