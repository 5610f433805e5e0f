//! The early stop (`--early-stop WINDOW`): on the FCPS sets it ends runs before T and gives the
//! full run's clustering (labels, k), at the iteration it reports; off, nothing changes.

use neurobits::ocnn::{self, experiment::SETS, points, Config};
use std::path::Path;

/// The window the manual recommends (`results/ocnn/early-stop.json`: 8 is the smallest window
/// from which every larger one gives the full run's labels on all 24 FCPS runs, seeds 1–3; 10
/// keeps a margin of two checks).
const WINDOW: u32 = 10;

fn set(file: &str, skip: usize) -> points::Points {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps").join(file);
    points::load(&path).unwrap_or_else(|e| panic!("{e}: `make setup` fetches the FCPS sets")).skip(skip)
}

#[test]
fn early_stop_gives_the_full_runs_clustering_on_the_fcps_sets() {
    let mut stopped = 0;
    for s in &SETS {
        let p = set(s.file, s.skip);
        let a = ocnn::scale::scale(&p).unwrap();
        // One run per set (`--select stable`): the window was chosen on single runs.
        let single = Config { select: ocnn::Select::Stable, ..Config::default() };
        let full = ocnn::cluster_cpu::<f32>(&p, Some(a), &single).unwrap();
        assert_eq!(full.observed_iters, 1000);
        let c = Config { early_stop: Some(WINDOW), ..single };
        let early = ocnn::cluster_cpu::<f32>(&p, Some(a), &c).unwrap();
        assert_eq!(early.labels, full.labels, "{}: labels", s.file);
        assert_eq!((early.k, early.k_non_singleton), (full.k, full.k_non_singleton), "{}", s.file);
        assert!(early.observed_iters == 1000 || early.observed_iters.is_multiple_of(64));
        stopped += (early.observed_iters < 1000) as usize;
        println!("{:<18} stopped at {:>4} of 1000", s.file, early.observed_iters);
    }
    // Seed 1: Hepta, Tetra and Atom stop at 704 (results/ocnn/early-stop.json).
    assert!(stopped >= 3, "the early stop ends FCPS runs early ({stopped} of {})", SETS.len());
}

#[test]
fn without_early_stop_a_run_is_unchanged_and_the_cli_reports_the_stop() {
    let p = set("Hepta.data", 0);
    // A window longer than the run never stops it: the same digests as no early stop.
    let full = ocnn::cluster_cpu::<f32>(&p, None, &Config { iters: 300, ..Config::default() }).unwrap();
    let never = ocnn::cluster_cpu::<f32>(&p, None, &Config { iters: 300, early_stop: Some(1000), ..Config::default() })
        .unwrap();
    assert_eq!((full.scale_factor, full.run_seed), (never.scale_factor, never.run_seed));
    assert_eq!((full.hits_sha256, full.state_sha256), (never.hits_sha256, never.state_sha256));
    assert_eq!(never.observed_iters, 300);
    let d = tempfile::tempdir().unwrap();
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps/Hepta.data");
    let o = assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["ocnn", "cluster", "--early-stop", "2", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(d.path().join("l.csv"))
        .arg("--json")
        .arg(d.path().join("r.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(d.path().join("r.json")).unwrap()).unwrap();
    let at = r["observed_iters"].as_u64().unwrap();
    assert!(at < 1000 && err.contains(&format!("stable at iteration {at} of 1000")), "{err}");
    // A window of 0 is a bad option: one line, exit 2.
    let o = assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["ocnn", "cluster", "--early-stop", "0", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(d.path().join("l2.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.path().join("l2.csv").exists());
}
