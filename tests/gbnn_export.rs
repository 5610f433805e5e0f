//! `gbnn export`: the blob is W's words, little-endian, and the module names its sizes; a saved
//! model and a `gbnn store` network file export alike; bad input is one line, exit 2, and
//! nothing written. (That the module compiles and links into flash is `make mcu-test`'s check.)

use assert_cmd::Command;
use neurobits::gbnn::model::{Gbnn, GbnnConfig};
use neurobits::gbnn::RuleArg;
use neurobits::model::Model;
use std::path::Path;

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn export_writes_the_weights_and_a_module_with_the_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Gbnn::new(GbnnConfig { clusters: 4, neurons: 70, rule: RuleArg::SumOfMax, ..Default::default() });
    m.fit(&[1, 2, 3, 69, 0, 5, 66, 7]).unwrap();
    let model = dir.path().join("m.nbm");
    m.save(&model).unwrap();
    let blob = dir.path().join("sub/net.bin");
    nb().args(["gbnn", "export", "--net", s(&model), "-o", s(&blob)]).assert().success();
    let bytes = std::fs::read(&blob).unwrap();
    let w = m.network().unwrap().weights();
    assert_eq!(bytes.len(), w.len() * 8);
    assert!(bytes.chunks(8).zip(w).all(|(b, &x)| u64::from_le_bytes(b.try_into().unwrap()) == x));
    let module = std::fs::read_to_string(dir.path().join("sub/net.rs")).unwrap();
    for line in [
        "pub const CLUSTERS: usize = 4;",
        "pub const NEURONS_PER_CLUSTER: usize = 70;",
        "pub const ROW_WORDS: usize = 8;",       // 4 clusters of 2 words
        "pub const WEIGHT_WORDS: usize = 2240;", // 280 rows of 8 words
        "pub const STORED: u64 = 2;",
        "pub const RULE: Rule = Rule::SumOfMax;",
        "include_bytes!(\"net.bin\")",
        "const _: () = assert!(WEIGHT_BYTES <= crate::capacity::MAX_WEIGHT_BYTES",
    ] {
        assert!(module.contains(line), "{line} not in the module:\n{module}");
    }
}

#[test]
fn export_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("m.csv");
    std::fs::write(&text, "1,2\n").unwrap();
    let out = dir.path().join("net.bin");
    for (net, o, needle) in [
        (s(&text), s(&out), "m.csv"),
        ("/nonexistent/net.nbm", s(&out), "/nonexistent/net.nbm"),
        (s(&text), "net.rs", "names the module"),
        (s(&text), "-", "-o -"),
    ] {
        let r = nb().args(["gbnn", "export", "--net", net, "-o", o]).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{net} {o}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "'{needle}' not in {err}");
        assert!(!out.exists() && !dir.path().join("net.rs").exists());
    }
}
