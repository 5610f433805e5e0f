//! The cortical network judged on held-out digits (the manual's "Quality" section): the default
//! competitive rule answers unseen digits and its population-code readout is at least as
//! accurate as k-means transfer with the same number of clusters (from 10 images per class on)
//! and well above its random-weights baseline; the spec's rule answers none; the scores count
//! silent images as wrong; the rule and the population code are bit-exact across CPU drivers
//! and survive the network file.

use assert_cmd::Command;
use neurobits::cortical::{self, cpu::Threads, quality, Network, RuleArg, TrainConfig, VariantArg};
use neurobits::device::DeviceChoice;
use neurobits_core::cortical::rules::{Rule, LTD};

#[path = "common/cortical.rs"]
mod common;
use common::DIGITS;

fn run(c: &TrainConfig, threads: Threads) -> cortical::TrainReport {
    let p = cortical::prepare(c).unwrap();
    let (mut net, s) = cortical::train_cpu(&p, &c.config(), threads).unwrap();
    cortical::report(&mut net, &p, &c.config(), "cpu".into(), s)
}

fn quality(seed: u64, per_class: Option<usize>) -> TrainConfig {
    common::quality(seed, per_class, DeviceChoice::Cpu, VariantArg::PerLevel)
}

/// k-means transfer with 16 clusters on the same split (mean of seeds 1-3,
/// results/cortical/quality.json): with all training images and with 10 per class.
const KMEANS_ALL: f64 = 0.870;
const KMEANS_10: f64 = 0.7613;

/// All 1 297 training images, the 500 test images: coverage 1.000 and readout accuracy 0.918
/// (seed 1), above k-means transfer.
#[test]
fn the_default_network_answers_held_out_digits() {
    let r = run(&quality(1, None), Threads::Rayon);
    let h = &r.held_out;
    assert_eq!((r.train_images, h.images), (1297, 500));
    assert!(h.coverage >= 0.95, "held-out coverage {}", h.coverage);
    assert!(h.readout_accuracy >= KMEANS_ALL, "readout accuracy {} vs k-means {KMEANS_ALL}", h.readout_accuracy);
    assert!(
        h.readout_accuracy > r.random_baseline.1 + 0.02,
        "readout {} vs random weights {}",
        h.readout_accuracy,
        r.random_baseline.1
    );
    // The top level as a clusterer: far above chance (0.1), far below its readout.
    assert!(h.cluster_accuracy > 0.2 && h.purity > 0.2, "{h:?}");
}

/// Ten training images per class: the population-code readout (0.782, seed 1) is at least as
/// accurate as k-means transfer (0.761); the winners' vote, the readout before it, was not (0.694).
#[test]
fn with_ten_images_per_class_the_readout_is_level_with_k_means_transfer() {
    let r = run(&quality(1, Some(10)), Threads::Rayon);
    let h = &r.held_out;
    assert_eq!((r.train_images, h.images, h.coverage), (100, 500, 1.0));
    assert!(h.readout_accuracy >= KMEANS_10, "readout {} vs k-means {KMEANS_10}", h.readout_accuracy);
    let vote = h.vote_accuracy.unwrap();
    assert!(vote < KMEANS_10 && vote + 0.05 < h.readout_accuracy, "vote {vote} vs readout {}", h.readout_accuracy);
}

/// The population code's winners are the evaluation pass's (one thread), and its codes hold
/// every learnt minicolumn's matched mass: 0 for minicolumns that hold nothing.
#[test]
fn the_population_code_agrees_with_the_evaluation_pass() {
    let c = quality(3, Some(5));
    let p = cortical::prepare(&c).unwrap();
    let (mut net, _) = cortical::train_cpu(&p, &c.config(), Threads::Single).unwrap();
    let (winners, codes) = cortical::cpu::population(&mut net, &p.test_x);
    assert_eq!(winners, cortical::cpu::evaluate(&mut net, &p.test_x, Threads::Single));
    let (n_hc, m) = (p.geo.hypercolumns(), p.geo.minicolumns());
    assert_eq!(codes.len(), 500 * n_hc * m);
    for (j, &om) in net.omega.iter().enumerate() {
        if om == 0 {
            assert!(codes.chunks(n_hc * m).all(|img| img[j] == 0), "minicolumn {j}");
        }
    }
    // Every winner holds a feature (it competed), and some winner's matched mass is positive.
    // (Not every winner's: at an upper level the two active inputs may both sit on weights that
    // decayed to 0 in every competitor, and the least penalised one still wins, with mass 0.)
    let mut positive = 0;
    for (img, w) in codes.chunks(n_hc * m).zip(winners.chunks(n_hc)) {
        for (h, &k) in w.iter().enumerate().filter(|(_, &k)| k >= 0) {
            assert!(net.omega[h * m + k as usize] > 0, "hypercolumn {h}: winner {k} holds nothing");
            positive += (img[h * m + k as usize] > 0) as usize;
        }
    }
    assert!(positive > 0, "no winner has a positive matched mass");
}

/// The spec's rule on the same split memorises its ten digits and answers no held-out one.
#[test]
fn the_spec_rule_answers_no_held_out_digit() {
    let c = TrainConfig {
        rule: RuleArg::Spec,
        ..common::config_a(1, cortical::ScheduleArg::Synchronous, VariantArg::PerLevel, DeviceChoice::Cpu)
    };
    let r = run(&c, Threads::Rayon);
    assert_eq!(r.train.coverage, 1.0);
    assert_eq!((r.held_out.coverage, r.held_out.purity, r.held_out.cluster_accuracy), (0.0, 0.0, 0.0));
}

#[test]
fn the_competitive_rule_is_the_same_on_one_thread_and_rayon() {
    let c = quality(2, Some(5));
    let (a, b) = (run(&c, Threads::Single), run(&c, Threads::Rayon));
    assert_eq!((&a.weights_sha256, &a.winners_sha256), (&b.weights_sha256, &b.winners_sha256));
    assert_eq!(a.held_out, b.held_out);
    assert!(a.held_out.readout_accuracy > a.held_out.vote_accuracy.unwrap());
    let p = run(&TrainConfig { schedule: cortical::ScheduleArg::Pipelined, ..c.clone() }, Threads::Single);
    let q = run(&TrainConfig { schedule: cortical::ScheduleArg::Pipelined, ..c }, Threads::Rayon);
    assert_eq!(p.weights_sha256, q.weights_sha256);
    assert_ne!(p.weights_sha256, a.weights_sha256);
}

/// Purity and cluster accuracy divide by every held-out image: silent ones count as wrong.
#[test]
fn held_out_scores_count_silent_images_as_wrong() {
    // Winner 0 answers labels 0 and 1, winner 1 label 1, one image is silent.
    let h = quality::held_out(&[-1, 0, 0, 1], &[0, 0, 1, 1], &[0, 1], &[0, 1], &[0, 0, 0, 1]);
    assert_eq!((h.coverage, h.purity, h.cluster_accuracy, h.readout_accuracy), (0.75, 0.5, 0.5, 0.75));
    assert_eq!(h.distinct_top, 2);
}

#[test]
fn the_network_file_keeps_the_rule_and_old_files_load_with_the_spec_rule() {
    let c = quality(1, Some(1));
    let p = cortical::prepare(&c).unwrap();
    let (net, _) = cortical::train_cpu(&p, &c.config(), Threads::Rayon).unwrap();
    assert_eq!(net.rule, Rule::competitive(2));
    assert_eq!(net.lgn_threshold, 12);
    let b = net.encode();
    assert_eq!(&b[..8], b"NBCORT3\0");
    assert_eq!(Network::decode(&b, "mem").unwrap(), net);
    // An NBCORT2 file is the same bytes without the LGN threshold (its networks were trained at
    // 16), an NBCORT1 file without the rule either.
    let mut v2 = b[..b.len() - 4].to_vec();
    v2[..8].copy_from_slice(b"NBCORT2\0");
    let old = Network::decode(&v2, "old").unwrap();
    assert_eq!((old.rule, old.lgn_threshold, &old.w), (net.rule, 16, &net.w));
    let mut v1 = b[..b.len() - 8].to_vec();
    v1[..8].copy_from_slice(b"NBCORT1\0");
    let old = Network::decode(&v1, "old").unwrap();
    assert_eq!((old.rule, old.lgn_threshold, &old.w), (Rule::spec(LTD), 16, &net.w));
    // A threshold out of range is a damaged file, named.
    let mut bad = b.clone();
    let at = bad.len() - 4;
    bad[at..].copy_from_slice(&(-5i32).to_le_bytes());
    let e = Network::decode(&bad, "bad.net").unwrap_err().to_string();
    assert!(e.starts_with("bad.net: LGN threshold -5"), "{e}");
}

/// `cortical eval` reads images through the LGN the network was trained behind (kept in its
/// file) and refuses another threshold in one line.
#[test]
fn eval_uses_the_networks_lgn_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("n.net");
    let train = |extra: &[&str]| {
        let out = Command::cargo_bin("neurobits")
            .unwrap()
            .args(["cortical", "train", "--data", DIGITS, "--epochs", "2", "--train-per-class", "3", "--out"])
            .arg(&net)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let eval = |extra: &[&str]| {
        Command::cargo_bin("neurobits")
            .unwrap()
            .args(["cortical", "eval", "--data", DIGITS, "--train-per-class", "3", "--net"])
            .arg(&net)
            .args(extra)
            .output()
            .unwrap()
    };
    let held = |s: &str| s.lines().find(|l| l.contains("held-out")).map(str::to_owned);
    let trained = train(&["--lgn-threshold", "6"]);
    let out = eval(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(held(&String::from_utf8_lossy(&out.stdout)), held(&trained));
    assert!(held(&trained).is_some(), "{trained}");
    let out = eval(&["--lgn-threshold", "12"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.trim().lines().count() == 1 && err.contains("--lgn-threshold 12") && err.contains("with 6"), "{err}");
}

/// The CLI's default run prints the held-out line; the validation list replaces the test list.
#[test]
fn cli_reports_held_out_coverage_and_validation_replaces_the_test_list() {
    for (args, images) in [(vec!["--train-per-class", "5"], 500), (vec!["--validation-per-class", "25"], 250)] {
        let out = Command::cargo_bin("neurobits")
            .unwrap()
            .args(["cortical", "train", "--data", DIGITS, "--epochs", "3"])
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert!(stdout.contains(&format!("held-out ({images} images): coverage 1.000")), "{args:?}: {stdout}");
    }
}
