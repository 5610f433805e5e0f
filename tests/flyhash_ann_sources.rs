//! `flyhash ann-bench` without an HDF5 file — a folder of IDX images (what the GPU machine's
//! binaries, built without libhdf5, read) and the synthetic set of `--synthetic` — and the
//! device choices of the approximate index that need no GPU to check.

use neurobits::flyhash::ann_gpu::AnnDevice;

fn nb() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("neurobits").unwrap()
}

/// An IDX file of `rows` 4×8 pixel images from a simple deterministic pattern.
fn idx_images(path: &std::path::Path, rows: usize, seed: u64) {
    use neurobits_core::prng::{below, draw};
    let mut b = vec![0, 0, 8, 3];
    for v in [rows as u32, 4, 8] {
        b.extend(v.to_be_bytes());
    }
    for i in 0..rows {
        let c = below(draw(seed, i as u64), 8);
        b.extend(
            (0..32).map(|j| (below(draw(99, c * 64 + j), 200) + below(draw(seed + 1, (i * 32) as u64 + j), 50)) as u8),
        );
    }
    std::fs::write(path, b).unwrap();
}

fn rows(json: &std::path::Path) -> Vec<serde_json::Value> {
    serde_json::from_slice::<serde_json::Value>(&std::fs::read(json).unwrap()).unwrap().as_array().unwrap().clone()
}

const SHAPE: [&str; 12] = [
    "--code-bits",
    "512",
    "--winners",
    "32",
    "--ones-per-row",
    "4",
    "--tables",
    "4",
    "--key-bits",
    "6",
    "--rerank",
    "euclidean",
];

#[test]
fn ann_bench_reads_a_folder_of_idx_images() {
    let dir = tempfile::tempdir().unwrap();
    idx_images(&dir.path().join("train-images-idx3-ubyte"), 700, 3);
    idx_images(&dir.path().join("t10k-images-idx3-ubyte"), 40, 4);
    let json = dir.path().join("rows.json");
    nb().args(["-q", "flyhash", "ann-bench", "-i", dir.path().to_str().unwrap(), "-o", json.to_str().unwrap()])
        .args(SHAPE)
        .args(["--probes", "1,64", "--truth-queries", "25", "--runs", "1", "--device", "cpu"])
        .assert()
        .success();
    let r = rows(&json);
    assert_eq!(r.len(), 2);
    assert_eq!((r[0]["n_train"].as_u64(), r[0]["n_test"].as_u64()), (Some(700), Some(40)));
    assert!(r[0]["device"].as_str().unwrap().starts_with("cpu ("), "{}", r[0]);
    // 64 = 2^key-bits probes: every id re-ranked, the exact Euclidean top 10.
    assert_eq!(r[1]["recall"].as_f64(), Some(1.0));
    assert!(r[0]["warmup_s"].as_f64().is_some());
}

#[test]
fn ann_bench_makes_the_synthetic_set() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rows.json");
    nb().args(["-q", "flyhash", "ann-bench", "--synthetic", "3001", "--dim", "24", "--queries", "30"])
        .args(["-o", json.to_str().unwrap()])
        .args(SHAPE)
        .args(["--probes", "2,64", "--runs", "1"])
        .assert()
        .success();
    let r = rows(&json);
    assert_eq!((r[0]["n_train"].as_u64(), r[0]["n_test"].as_u64()), (Some(3001), Some(30)));
    let recall: Vec<f64> = r.iter().map(|r| r["recall"].as_f64().unwrap()).collect();
    assert!(recall[0] < 1.0 && recall[1] == 1.0, "{recall:?}");
}

#[test]
fn device_choices_parse_and_gpus_refuse_an_exact_index() {
    assert_eq!("gpus:3".parse::<AnnDevice>(), Ok(AnnDevice::Gpus(Some(3))));
    assert!("gpus:x".parse::<AnnDevice>().unwrap_err().contains("gpus:x"));
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("x.csv"), "1,2,3,4\n4,3,2,1\n0,0,9,1\n").unwrap();
    nb().args(["-q", "flyhash", "index", "build", "-i", &p("x.csv"), "-o", &p("exact.nbm")])
        .args(["--code-bits", "64", "--winners", "8"])
        .assert()
        .success();
    let o = nb()
        .args(["flyhash", "index", "search", "--index", &p("exact.nbm"), "-i", &p("x.csv"), "-o", &p("h.csv")])
        .args(["--device", "gpus"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("exact index") && err.lines().count() == 1, "{err}");
    let o = nb()
        .args(["flyhash", "index", "search", "--index", &p("exact.nbm"), "-i", &p("x.csv"), "-o", &p("h.csv")])
        .args(["--device", "gpus:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn synthetic_vectors_are_pixels_and_reproducible() {
    use neurobits::flyhash::ann_bench_data::synthetic;
    let (a, b, q) = (synthetic(20_000, 16, 1, 41), synthetic(20_000, 16, 1, 41), synthetic(20_000, 16, 1, 42));
    assert_eq!(a, b);
    assert_ne!(a, q);
    assert!(a.data.iter().all(|&v| v.fract() == 0.0 && (0.0..=255.0).contains(&v)));
    // Clustered (about 20 vectors per centre here): a vector lies much nearer its nearest other
    // vector than a random pair does.
    let d2 = |i: usize, j: usize| a.row(i).iter().zip(a.row(j)).map(|(x, y)| (x - y) * (x - y)).sum::<f32>();
    let nearest = (1..20_000).map(|j| d2(0, j)).fold(f32::INFINITY, f32::min);
    let typical = (1..200).map(|j| d2(j, j + 1000)).sum::<f32>() / 199.0;
    assert!(nearest * 4.0 < typical, "nearest {nearest}, typical {typical}");
}
