//! The cortical network on the CPU against spec `docs/manual/src/spec-cortical*.md`: its test vectors,
//! configuration A's two SHA-256 digests (single thread and rayon), schedule equality across
//! drivers, learning quality and its ablations (§11.5), the network file and bad input.

use assert_cmd::Command;
use neurobits::cortical::{self, cpu::Threads, data::Dataset, Network, ScheduleArg, TrainConfig};
use neurobits::device::DeviceChoice;
use neurobits_core::cortical::{lgn::THETA, Geometry};

#[path = "common/cortical.rs"]
mod common;
use common::{digits, A_FLAGS, A_WEIGHTS, A_WINNERS, DIGITS};

fn config_a(seed: u64) -> TrainConfig {
    common::config_a(seed, ScheduleArg::Synchronous, cortical::VariantArg::PerLevel, DeviceChoice::Cpu)
}

fn run(c: &TrainConfig, threads: Threads) -> cortical::TrainReport {
    let p = cortical::prepare(c).unwrap();
    let (mut net, s) = cortical::train_cpu(&p, &c.config(), threads).unwrap();
    cortical::report(&mut net, &p, &c.config(), "cpu".into(), s)
}

#[test]
fn lgn_matches_the_spec_vector_for_digit_zero() {
    let ds = Dataset::read(&digits()).unwrap();
    assert_eq!((ds.len(), ds.side, ds.labels[0]), (1797, 8, 0));
    let geo = Geometry::new(3, 16).unwrap();
    let x = ds.bottom(&geo, &[0], 1, THETA).unwrap();
    let counts: Vec<u32> = x.iter().map(|w| w.count_ones()).collect();
    assert_eq!(counts, [10, 9, 12, 11]);
    let bits: String = (0..32).map(|i| if (x[0] >> i) & 1 == 1 { '1' } else { '0' }).collect();
    assert_eq!(bits, "00010010000110100001100100001001");
}

#[test]
fn configuration_a_reproduces_the_spec_digests_single_thread_and_rayon() {
    for threads in [Threads::Single, Threads::Rayon] {
        let r = run(&config_a(1), threads);
        assert_eq!((r.weights_sha256.as_str(), r.winners_sha256.as_str()), (A_WEIGHTS, A_WINNERS), "{threads:?}");
        assert_eq!(r.steps, 60 * 10 * 4);
    }
}

#[test]
fn pipelined_schedule_is_the_same_on_one_thread_and_rayon_and_differs_from_synchronous() {
    let c = TrainConfig { schedule: ScheduleArg::Pipelined, levels: 4, minicolumns: 8, ..config_a(2) };
    let (a, b) = (run(&c, Threads::Single), run(&c, Threads::Rayon));
    assert_eq!((&a.weights_sha256, &a.winners_sha256), (&b.weights_sha256, &b.winners_sha256));
    let s = run(&TrainConfig { schedule: ScheduleArg::Synchronous, ..c }, Threads::Rayon);
    assert_ne!(a.weights_sha256, s.weights_sha256);
}

#[test]
fn configuration_a_memorises_and_reads_out_above_the_random_baseline() {
    let mut nmi = vec![];
    for seed in 1..=3 {
        let r = run(&config_a(seed), Threads::Rayon);
        assert!(
            r.train.coverage >= 0.9 && r.train.distinct_top >= 9 && r.train.purity == 1.0,
            "seed {seed}: {:?}",
            r.train
        );
        // Eq. 7's −2 term: uniformly random weights never answer strictly.
        assert_eq!(r.random_baseline.0.coverage, 0.0);
        assert!(r.test_accuracy >= 0.2, "seed {seed}: accuracy {}", r.test_accuracy);
        nmi.push((r.test_nmi, r.random_baseline.2));
    }
    nmi.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (median, random) = nmi[1];
    assert!(median >= 0.2 && median >= 1.5 * random, "median readout NMI {median} vs random {random}");
}

#[test]
fn ltd_ablations_fail_to_memorise() {
    for beta in [0.05, 0.0] {
        let r = run(&TrainConfig { beta, ..config_a(1) }, Threads::Rayon);
        assert!(r.train.coverage < 0.3, "beta {beta}: coverage {}", r.train.coverage);
    }
}

#[test]
fn the_untrained_network_is_silent() {
    let c = config_a(1);
    let p = cortical::prepare(&c).unwrap();
    let mut net = Network::new(p.geo, 1).unwrap();
    let w = cortical::cpu::evaluate(&mut net, &p.train_x, Threads::Single);
    assert!(w.iter().all(|&w| w == -1));
}

#[test]
fn network_file_round_trips_and_rejects_damage() {
    let dir = tempfile::tempdir().unwrap();
    let c = config_a(1);
    let p = cortical::prepare(&c).unwrap();
    let (net, _) = cortical::train_cpu(&p, &c.config(), Threads::Rayon).unwrap();
    let path = dir.path().join("a.net");
    net.save(&path).unwrap();
    let back = Network::load(&path).unwrap();
    assert_eq!(back, net);
    let mut b = std::fs::read(&path).unwrap();
    b.pop();
    std::fs::write(&path, &b).unwrap();
    assert!(Network::load(&path).unwrap_err().to_string().contains("bytes"));
}

#[test]
fn cli_trains_configuration_a_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    let out = Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "train", "--data", DIGITS])
        .args(A_FLAGS)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains(A_WEIGHTS) && stdout.contains(A_WINNERS), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["weights_sha256"], A_WEIGHTS);
    assert_eq!(v["winners"].as_array().unwrap().len(), 3);
    for bad in [
        vec!["--levels", "2"],
        vec!["--minicolumns", "129"],
        vec!["--beta", "2"],
        vec!["--train-per-class", "0"],
        vec!["--levels", "60"],
        vec!["--rate", "0"],
        vec!["--rate", "16"],
        vec!["--rule", "hebb"],
        vec!["--lgn-threshold", "128"],
        vec!["--lgn-threshold=-1"],
    ] {
        let a =
            Command::cargo_bin("neurobits").unwrap().args(["cortical", "train", "--data", DIGITS]).args(&bad).assert();
        let o = a.get_output();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
}

/// Trains configuration A through the CLI and saves it at `net`.
fn train_a_into(net: &std::path::Path) {
    Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "train", "--data", DIGITS])
        .args(A_FLAGS)
        .arg("--out")
        .arg(net)
        .assert()
        .success();
}

#[test]
fn eval_of_a_saved_network_repeats_its_digests_and_quality() {
    let dir = tempfile::tempdir().unwrap();
    let (net, json) = (dir.path().join("a.net"), dir.path().join("eval.json"));
    train_a_into(&net);
    let out = Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "eval", "--data", DIGITS, "--train-per-class", "1", "--upsample", "1", "--net"])
        .arg(&net)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains(A_WEIGHTS) && stdout.contains(A_WINNERS), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["train"]["coverage"], 1.0);
    // The spec's rule memorises but answers no held-out digit (the reason for the competitive rule).
    assert_eq!((v["held_out"]["images"].as_u64(), v["held_out"]["coverage"].as_f64()), (Some(500), Some(0.0)));
    assert_eq!(v["steps"], 2400);
    assert!(v["test_nmi"].as_f64().unwrap() > 0.2);
    // A missing network, or a network file that is not one: one line, exit 2.
    let junk = dir.path().join("junk.net");
    std::fs::write(&junk, b"not a network").unwrap();
    for bad in [dir.path().join("missing.net"), junk] {
        let a = Command::cargo_bin("neurobits")
            .unwrap()
            .args(["cortical", "eval", "--data", DIGITS, "--net"])
            .arg(&bad)
            .assert();
        let o = a.get_output();
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);
    }
}

/// `cortical features` draws every minicolumn of the bottom hypercolumns: one square per LGN
/// pixel (16 pixels per receptive field in configuration A), the trained weights' colours (a
/// trained network has saturated green or magenta cells; an untrained one is all dim); bad input
/// is one line and exit 2.
#[test]
fn features_of_a_trained_network_are_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let (net, svg) = (dir.path().join("a.net"), dir.path().join("f.svg"));
    train_a_into(&net);
    Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "features", "--net"])
        .arg(&net)
        .arg("--out")
        .arg(&svg)
        .assert()
        .success();
    let s = std::fs::read_to_string(&svg).unwrap();
    // 4 bottom hypercolumns x 16 minicolumns x 16 pixels, plus the background.
    assert_eq!(s.matches("<rect").count(), 4 * 16 * 16 + 1, "cells");
    assert!(s.contains("#00FF00") || s.contains("fill=\"#00FF00\""), "no saturated on-off cell");
    assert!(s.contains("#FF00FF"), "no saturated off-on cell");
    for bad in [vec!["--net", "/nonexistent.net"], vec!["--hypercolumns", "0"]] {
        let mut args = vec!["cortical", "features", "--out", svg.to_str().unwrap()];
        if bad[0] != "--net" {
            args.extend(["--net", net.to_str().unwrap()]);
        }
        let o = Command::cargo_bin("neurobits").unwrap().args(&args).args(&bad).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
}

/// `cortical bench-figure` turns the committed H100 bench into the Fig. 7 and Figs. 14–17
/// analogues (one pair per minicolumn count, every variant a curve); a file that is not a bench
/// report is one line and exit 2.
#[test]
fn bench_figures_from_the_h100_bench() {
    let dir = tempfile::tempdir().unwrap();
    let bench = concat!(env!("CARGO_MANIFEST_DIR"), "/results/cortical/bench-h100.json");
    Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "bench-figure", bench, "--out"])
        .arg(dir.path())
        .assert()
        .success();
    for m in [32, 128] {
        let speed = std::fs::read_to_string(dir.path().join(format!("speedup-m{m}.svg"))).unwrap();
        let times = std::fs::read_to_string(dir.path().join(format!("variants-m{m}.svg"))).unwrap();
        for v in ["PerLevel", "Pipelined", "Queue"] {
            assert!(speed.contains(&format!("GPU {v}")) && times.contains(&format!("GPU {v}")), "{v} at M = {m}");
        }
        assert!(times.contains("CPU, 1 thread") && speed.contains("CPU, all cores"));
    }
    let not = dir.path().join("x.json");
    std::fs::write(&not, "{\"k\": 1}").unwrap();
    let o = Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "bench-figure", not.to_str().unwrap(), "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!((o.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
}
