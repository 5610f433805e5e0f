//! `neurobits flyhash flynn` on the CPU: FlyNN learns Fashion-MNIST (needs the data set that
//! `make setup` installs), the rules' order independence, and bad input.

use assert_cmd::Command;
use neurobits::flyhash::flynn;
use neurobits_core::flyhash::{flynn_weights, FLYNN_WEIGHTS};
use neurobits_core::prng::{below, draw};

const FASHION: &str = "/usr/share/datasets/fashion-mnist";

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

/// FlyNN and 1-NN on 3 000 training and 300 test images: both far above chance (0.1), and the
/// JSON holds what the table printed.
#[test]
fn flynn_learns_fashion_mnist() {
    assert!(std::path::Path::new(FASHION).exists(), "{FASHION} missing: run `make setup`");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("flynn.json");
    let o = nb()
        .args(["flyhash", "flynn", "--train-limit", "3000", "--test-limit", "300", "--knn", "1"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let acc = |prefix: &str| {
        rows["rows"].as_array().unwrap().iter().find(|r| r["method"].as_str().unwrap().starts_with(prefix)).unwrap()
            ["accuracy"]
            .as_f64()
            .unwrap()
    };
    let (fly, nn) = (acc("FlyNN"), acc("exact 1-NN"));
    println!("FlyNN {fly:.3}, 1-NN {nn:.3}");
    assert!(fly > 0.55, "FlyNN accuracy {fly}");
    assert!(nn > 0.65, "1-NN accuracy {nn}");
}

/// Training codes in any order give the same memories; a code equal to one class's only
/// training code and unlike the other's goes to that class.
#[test]
fn flynn_memories_ignore_the_order_and_classify_the_seen() {
    let (m, n, words) = (256, 40, 4);
    let codes: Vec<u64> = (0..n * words).map(|i| draw(7, i as u64) & draw(8, i as u64) & draw(9, i as u64)).collect();
    let labels: Vec<u8> = (0..n).map(|i| below(draw(3, i as u64), 3) as u8).collect();
    let a = flynn::train(&codes, &labels, 3, m);
    let mut order: Vec<usize> = (0..n).collect();
    order.reverse();
    let codes_r: Vec<u64> = order.iter().flat_map(|&j| codes[j * words..(j + 1) * words].to_vec()).collect();
    let labels_r: Vec<u8> = order.iter().map(|&j| labels[j]).collect();
    assert_eq!(a, flynn::train(&codes_r, &labels_r, 3, m));
    let mut w = vec![0u64; FLYNN_WEIGHTS];
    flynn_weights(0.5, &mut w);
    let (one, other) = ([u64::MAX, 0, 0, 0], [0, 0, 0, u64::MAX]);
    let mem = flynn::train(&[one, other].concat(), &[1, 0], 2, m);
    assert_eq!(flynn::classify(&mem, 2, m, &w, &one), [1]);
    assert_eq!(flynn::classify(&mem, 2, m, &w, &other), [0]);
}

fn fails(args: &[&str], needle: &str) {
    let o = nb().args(["flyhash", "flynn"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
}

#[test]
fn flynn_bad_input_is_one_line_and_exit_2() {
    let test_labels = format!("{FASHION}/t10k-labels-idx1-ubyte.gz");
    fails(&["--train-labels", &test_labels, "--no-knn"], "labels for");
    fails(&["--gamma", "1.5"], "not a number in [0, 1]");
    // 3·10⁹ outputs: the projection and the memories cannot fit; refused before allocating.
    fails(&["--m", "3000000000", "--train-limit", "2", "--test-limit", "2", "--no-knn"], "needs");
    fails(&["--train", "/nonexistent/x.csv"], "/nonexistent/x.csv");
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.csv");
    std::fs::write(&x, "1,2\n3,4\n").unwrap();
    fails(&["--train", x.to_str().unwrap(), "--no-knn"], "--train-labels");
    let y = d.path().join("y.csv");
    std::fs::write(&y, "0\n1.5\n").unwrap();
    fails(&["--train", x.to_str().unwrap(), "--train-labels", y.to_str().unwrap(), "--no-knn"], "not an integer");
}
