//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`, the seeds and what the fuzz runs
//! kept, with the issue-31 cases: a deeply nested NPY header, empty rows, extra headers, semicolon
//! and tab CSV, long lines, zero-dimension points, a one-column class file) through the readers,
//! with the fuzz targets' own assertions (`fuzz/checks.rs`), so that `make test` runs every
//! corpus input without libFuzzer: each is refused or read whole, never a panic or a hang.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn every_corpus_input_is_read_or_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let folders: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    for f in &folders {
        assert!(checks::TARGETS.iter().any(|(t, _)| t == f), "fuzz/corpus/{f} has no target in fuzz/checks.rs");
    }
    let start = Instant::now();
    for (target, check) in checks::TARGETS {
        let dir = root.join(target);
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (every target has a corpus)", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{}: an empty corpus", dir.display());
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let t = Instant::now();
            let ok = std::panic::catch_unwind(|| check(&data));
            assert!(ok.is_ok(), "{target}: {} makes the reader panic", input.display());
            // The nested NPY header once took exponential time: a slow input is a hang in waiting.
            assert!(t.elapsed() < Duration::from_secs(5), "{target}: {} took {:?}", input.display(), t.elapsed());
        }
    }
    eprintln!("corpus replayed in {:?}", start.elapsed());
}

/// The issue's cases are in the corpus, and the readers decide them as the contract says.
#[test]
fn the_issue_cases_are_decided_as_documented() {
    use neurobits::flyhash::data::{csv, npy};
    let corpus = |t: &str, n: &str| {
        std::fs::read(format!("{}/fuzz/corpus/{t}/issue31-{n}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    let text = |t: &str, n: &str| String::from_utf8(corpus(t, n)).unwrap();
    assert!(npy(&corpus("npy", "nested-header-280"), "x").is_err());
    // A 5 x 0 array is a matrix of that shape here; the commands refuse zero dimensions.
    assert!(npy(&corpus("npy", "zero-dim-5x0"), "x").is_ok_and(|m| m.rows * m.cols == 0));
    // Delimiters read as the comma file; empty rows and a second header are refused, not dropped.
    let comma = csv("1,2,3\n4,5,6\n", "x").unwrap();
    for n in ["semicolon", "tab"] {
        assert_eq!(csv(&text("matrix_csv", n), "x").unwrap().data, comma.data, "{n}");
    }
    // A blank line is skipped (as numpy's loadtxt skips it); a row of empty fields is refused.
    assert_eq!(csv(&text("matrix_csv", "empty-rows-between"), "x").unwrap().data, comma.data);
    for n in ["all-empty-rows", "extra-header-inside", "zero-dimension", "zero-dimension-commas"] {
        assert!(csv(&text("matrix_csv", n), "x").is_err(), "{n} is refused");
    }
    assert_eq!(csv(&text("matrix_csv", "long-line"), "x").unwrap().cols, 30_000);
    assert!(neurobits::ocnn::points::parse(&text("points", "zero-dimension-header"), "x").is_err());
    let cls = |n: &str| {
        let b = corpus("classes", n);
        neurobits::ocnn::classes::parse(std::str::from_utf8(&b[1..]).unwrap(), "x", b[0] as usize)
    };
    assert_eq!(cls("valid").unwrap(), [1, 2, 1]);
    for n in [
        "one-column",
        "three-columns",
        "keys-out-of-order",
        "fewer-than-points",
        "negative-class",
        "fractional",
        "huge-class",
    ] {
        assert!(cls(n).is_err(), "{n} is refused");
    }
}
