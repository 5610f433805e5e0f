//! FlyNN's error-driven rounds (`FlyNNConfig::rounds`, the core's `flynn_restore`): memories
//! only grow and stay independent of the training order, the rounds raise the test accuracy on
//! Fashion-MNIST (needs the data set that `make setup` installs), a model keeps its rounds
//! through saving (and files written before them read as 0), and bad values are refused — in
//! the library, by `flynn fit` and by `flyhash flynn`, each with one line and exit code 2.

use assert_cmd::Command;
use neurobits::flyhash::classifier::{FlyNN, FlyNNConfig, MAX_ROUNDS};
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::flynn;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::model::Model;
use neurobits_core::flyhash::{flynn_weights, FLYNN_WEIGHTS};
use neurobits_core::prng::{below, draw};

/// `rows` vectors of 24 values in two overlapping classes (centres 10 apart, noise 0..120), so
/// that one counting pass leaves training errors for the rounds to work on.
fn overlapping(rows: usize, seed: u64) -> (Matrix, Vec<i64>) {
    let mut data = Vec::with_capacity(rows * 24);
    let labels: Vec<i64> = (0..rows).map(|r| (r % 2) as i64).collect();
    for (r, &c) in labels.iter().enumerate() {
        for j in 0..24 {
            let centre = if (j % 2 == 0) == (c == 0) { 10.0 } else { 0.0 };
            data.push(centre + below(draw(seed, (r * 24 + j) as u64), 120) as f32);
        }
    }
    (Matrix { rows, cols: 24, data }, labels)
}

fn config(rounds: u32) -> FlyNNConfig {
    let hash = FlyHashConfig { code_bits: Some(512), winners: Some(16), ..Default::default() };
    FlyNNConfig { hash, rounds, ..Default::default() }
}

#[test]
fn rounds_only_add_counts() {
    let (x, y) = overlapping(400, 5);
    let mut plain = FlyNN::new(config(0));
    plain.fit(&x, &y).unwrap();
    let mut boosted = FlyNN::new(config(6));
    boosted.fit(&x, &y).unwrap();
    let (a, b) = (plain.counts().unwrap(), boosted.counts().unwrap());
    assert!(a.iter().zip(b).all(|(a, b)| a <= b), "the rounds only count again");
    assert_ne!(a, b, "the classes overlap: the counting pass leaves errors");
}

/// On Fashion-MNIST (3 000 training images, 500 test images), the library's default rounds
/// classify the test images better than the counting pass alone (the library's other defaults),
/// and the JSON says which row is which.
#[test]
fn rounds_raise_the_test_accuracy_on_fashion_mnist() {
    let fashion = "/usr/share/datasets/fashion-mnist";
    assert!(std::path::Path::new(fashion).exists(), "{fashion} missing: run `make setup`");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let rounds = FlyNNConfig::default().rounds;
    assert!(rounds > 0);
    let o = nb()
        .args(["flyhash", "flynn", "--train-limit", "3000", "--test-limit", "500", "--no-knn"])
        .args(["--rounds", &format!("0,{rounds}"), "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let acc = |r: u64| {
        v["rows"].as_array().unwrap().iter().find(|row| row["rounds"] == r).unwrap()["accuracy"].as_f64().unwrap()
    };
    let (before, after) = (acc(0), acc(rounds as u64));
    println!("test accuracy {before:.3} -> {after:.3}");
    assert!(after > before + 0.01, "0 rounds {before}, {rounds} rounds {after}");
}

#[test]
fn rounds_ignore_the_training_order_and_match_the_counting_rule() {
    let (m, n, words) = (256, 60, 4);
    let codes: Vec<u64> = (0..n * words).map(|i| draw(7, i as u64) & draw(8, i as u64)).collect();
    let labels: Vec<u8> = (0..n).map(|i| below(draw(3, i as u64), 3) as u8).collect();
    let mut w = vec![0u64; FLYNN_WEIGHTS];
    flynn_weights(0.9, &mut w);
    let learn = |codes: &[u64], labels: &[u8]| {
        let mut mem = flynn::train(codes, labels, 3, m);
        let mut seen = Vec::new();
        flynn::rounds(&mut mem, codes, labels, m, &w, 3, |r, _| seen.push(r));
        assert_eq!(seen, [1, 2, 3]);
        mem
    };
    let a = learn(&codes, &labels);
    let order: Vec<usize> = (0..n).rev().collect();
    let codes_r: Vec<u64> = order.iter().flat_map(|&j| codes[j * words..(j + 1) * words].to_vec()).collect();
    let labels_r: Vec<u8> = order.iter().map(|&j| labels[j]).collect();
    assert_eq!(a, learn(&codes_r, &labels_r), "the same memories in any order");
    // One round by hand: the codes the counting pass misclassifies, counted once more.
    let mut one = flynn::train(&codes, &labels, 3, m);
    let pred = flynn::classify(&one, 3, m, &w, &codes);
    let wrong: Vec<usize> = (0..n).filter(|&j| pred[j] != labels[j] as u32).collect();
    assert!(!wrong.is_empty(), "random codes leave errors");
    let mut want = one.clone();
    for &j in &wrong {
        let extra = flynn::train(&codes[j * words..(j + 1) * words], &labels[j..j + 1], 3, m);
        want.iter_mut().zip(extra).for_each(|(a, b)| *a = a.saturating_add(b));
    }
    flynn::rounds(&mut one, &codes, &labels, m, &w, 1, |_, _| {});
    assert_eq!(one, want);
}

#[test]
fn a_model_keeps_its_rounds_and_old_files_read_as_none() {
    let (x, y) = overlapping(200, 9);
    let mut clf = FlyNN::new(config(3));
    clf.fit(&x, &y).unwrap();
    let back = FlyNN::from_bytes(&clf.to_bytes().unwrap(), "r.nbm").unwrap();
    assert_eq!(back.config.rounds, 3);
    assert_eq!(back.counts().unwrap(), clf.counts().unwrap());
    assert_eq!(back.predict(&x).unwrap(), clf.predict(&x).unwrap());
    // A configuration without the key takes the default; a file written before the rounds
    // existed (no key in its header) was fitted without them and says so.
    let partial: FlyNNConfig = serde_json::from_str(r#"{"decay": 0.9}"#).unwrap();
    assert_eq!(partial.rounds, FlyNNConfig::default().rounds);
    let (mut head, payload) = clf.parts().unwrap();
    head["config"].as_object_mut().unwrap().remove("rounds").expect("the key is written");
    let old = FlyNN::from_bytes(&neurobits::io::model_file::encode(FlyNN::KIND, &head, &payload).unwrap(), "old.nbm");
    let old = old.unwrap();
    assert_eq!(old.config.rounds, 0);
    assert_eq!(old.predict(&x).unwrap(), clf.predict(&x).unwrap(), "the memories are what they were");
    // Learning codes hashed apart (the Python package's interruptible fit) equals `fit`.
    let mut parts = FlyNN::new(config(3));
    parts.begin(&x).unwrap();
    let codes: Vec<u64> = [0..120, 120..200]
        .into_iter()
        .flat_map(|r| {
            let m = Matrix { rows: r.len(), cols: 24, data: x.data[r.start * 24..r.end * 24].to_vec() };
            parts.codes(&m).unwrap()
        })
        .collect();
    parts.learn_codes(&codes, &y).unwrap();
    assert_eq!(parts.to_bytes().unwrap(), clf.to_bytes().unwrap());
    assert!(parts.learn_codes(&codes[1..], &y).is_err(), "codes that do not match the labels");
}

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn fails(args: &[&str], needle: &str) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
}

#[test]
fn the_command_line_takes_rounds_and_refuses_bad_ones() {
    let bad = FlyNNConfig { rounds: MAX_ROUNDS + 1, ..Default::default() };
    assert_eq!(bad.validate().unwrap_err().to_string(), "rounds = 1001: must be at most 1000");
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n).display().to_string();
    let (x, y) = overlapping(200, 11);
    let csv = |rows: &mut dyn Iterator<Item = String>| rows.collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(
        p("x.csv"),
        csv(&mut x.data.chunks(24).map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))),
    )
    .unwrap();
    std::fs::write(p("y.csv"), csv(&mut y.iter().map(|v| v.to_string()))).unwrap();
    let fit = |rounds: &str, out: &str| {
        let o = nb()
            .args(["flynn", "fit", "-i", &p("x.csv"), "--labels", &p("y.csv"), "--code-bits", "512"])
            .args(["--winners", "16", "--rounds", rounds, "-o", &p(out)])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        FlyNN::load(std::path::Path::new(&p(out))).unwrap()
    };
    let (cli, zero) = (fit("3", "r3.nbm"), fit("0", "r0.nbm"));
    assert_eq!(cli.config.rounds, 3);
    let mut lib = FlyNN::new(config(3));
    lib.fit(&x, &y).unwrap();
    assert_eq!(cli.to_bytes().unwrap(), lib.to_bytes().unwrap(), "the CLI's model is the library's");
    assert_eq!(zero.config.rounds, 0);
    assert_ne!(zero.counts().unwrap(), cli.counts().unwrap());
    let o = nb().args(["flynn", "predict", "--model", &p("r3.nbm"), "-i", &p("x.csv"), "-o", &p("pred.txt")]).output();
    assert!(o.unwrap().status.success());
    let pred: Vec<i64> = std::fs::read_to_string(p("pred.txt")).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pred, lib.predict(&x).unwrap());
    let base = ["flynn", "fit", "-i", &p("x.csv"), "--labels", &p("y.csv"), "-o", &p("bad.nbm")];
    fails(&[&base[..], &["--rounds", "1001"]].concat(), "--rounds");
    fails(&[&base[..], &["--rounds=-1"]].concat(), "--rounds");
    fails(&["flyhash", "flynn", "--rounds", "two"], "not a whole number of rounds");
    assert!(!std::path::Path::new(&p("bad.nbm")).exists(), "no model after a refusal");
}
