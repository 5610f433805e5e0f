//! A point too far from every other for the scale (no weight survives: `C_i = 0`) is left out
//! of the dynamics and labelled a cluster of its own, where it used to stop the default
//! clustering with an error (up to 3-D) or, above 3-D, widen every neuron's coupling through a
//! floor on the scale; with `--cutoff` the error stands.

use neurobits::ocnn::experiment::ari;
use neurobits::ocnn::points::Points;
use neurobits::ocnn::{self, Config};
use std::process::Command;

/// Three round Gaussian blobs of 40 points in `dim` dimensions (unit spread, centres 10 apart on
/// the first axis; Box–Muller from SplitMix64), then one point 1 000 out on every axis; the
/// classes (the outlier's is 3).
fn blobs_and_outlier(dim: usize, seed: u64) -> (Points, Vec<u32>) {
    use neurobits_core::prng::draw;
    let uniform = |i: u64| ((draw(seed, i) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let gauss = |i: u64| (-2.0 * uniform(2 * i).ln()).sqrt() * (std::f64::consts::TAU * uniform(2 * i + 1)).cos();
    let mut truth: Vec<u32> = (0..120).map(|i| i % 3).collect();
    let mut coords: Vec<f64> = (0..120 * dim)
        .map(|s| gauss(s as u64) + if s % dim == 0 { 10.0 * truth[s / dim] as f64 } else { 0.0 })
        .collect();
    coords.extend(std::iter::repeat_n(1000.0, dim));
    truth.push(3);
    (Points { n: 121, dim, coords }, truth)
}

#[test]
fn a_far_outlier_is_a_singleton_and_the_rest_is_clustered() {
    for dim in [2, 6] {
        let (p, truth) = blobs_and_outlier(dim, 7);
        for select in [ocnn::Select::Consensus, ocnn::Select::Stable] {
            let r = ocnn::cluster_cpu::<f32>(&p, None, &Config { select, ..Config::default() })
                .unwrap_or_else(|e| panic!("{dim}-D {select:?}: {e}"));
            assert_eq!((r.n, r.labels.len(), r.uncoupled), (121, 121, 1), "{dim}-D {select:?}");
            let outlier = r.labels[120];
            assert_eq!(r.labels.iter().filter(|&&l| l == outlier).count(), 1);
            let score = ari(&truth[..120], &r.labels[..120]);
            assert!(score >= 0.95, "{dim}-D {select:?}: ARI {score:.4}");
            // The others are clustered as the set without the outlier is.
            let inner = Points { n: 120, dim, coords: p.coords[..120 * dim].to_vec() };
            let alone = ocnn::cluster_cpu::<f32>(&inner, None, &Config { select, ..Config::default() }).unwrap();
            assert_eq!((&r.labels[..120], r.a, &r.hits_sha256), (&alone.labels[..], alone.a, &alone.hits_sha256));
            // Numbered by smallest member, singletons counted in k and in the curve.
            let mut first = Vec::new();
            r.labels.iter().for_each(|&l| {
                if !first.contains(&l) {
                    first.push(l)
                }
            });
            assert!(first.iter().enumerate().all(|(i, &l)| l == i as u32) && first.len() as u32 == r.k);
            assert!(r.curve.iter().all(|&(_, k)| k > r.uncoupled as u32));
        }
        // A sparse coupling sets its own reach: there the point is still refused.
        let cut = Config { cutoff: Some(3.0), ..Config::default() };
        let e = ocnn::cluster_cpu::<f32>(&p, None, &cut).unwrap_err().to_string();
        assert!(e.contains("has no neighbour within the cutoff (C = 0)"), "{e}");
    }
}

#[test]
fn above_3d_an_outlier_does_not_widen_the_scale() {
    let (p, _) = blobs_and_outlier(6, 8);
    let inner = Points { n: 120, dim: 6, coords: p.coords[..120 * 6].to_vec() };
    let (with, without) = (ocnn::scale::scale(&p).unwrap(), ocnn::scale::scale(&inner).unwrap());
    // The former floor, the largest nearest-neighbour distance over 12, would be about 200.
    assert!(with < 1.1 * without && with > without / 1.1, "{with} against {without}");
}

#[test]
fn the_command_line_warns_and_writes_every_label() {
    let (p, _) = blobs_and_outlier(2, 9);
    let dir = std::env::temp_dir().join(format!("neurobits-uncoupled-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text: String = (0..p.n).map(|i| format!("{} {}\n", p.point(i)[0], p.point(i)[1])).collect();
    std::fs::write(dir.join("p.txt"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_neurobits"))
        .args(["ocnn", "cluster", "--quiet", "--select", "stable", "--input"])
        .arg(dir.join("p.txt"))
        .arg("--out")
        .arg(dir.join("l.txt"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.starts_with("warning: 1 of 121 points keep no coupling") && err.lines().count() == 1, "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("l.txt")).unwrap().lines().count(), 121);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn copies_of_points_do_not_set_the_scale_above_3d() {
    // 8 distinct points in 6-D, 30 copies each, and 40 scattered points. Each copy's nearest
    // point is a twin (distance 0) and couples to its 29 twins at weight 1 at any scale: with
    // copies counted, no scale had a median perplexity of 20, the scattered points were left out
    // and the copies alone, every nearest distance 0, ended in "the points are all equal" (so
    // did the copies alone from the start). Counted without copies, the scale is that of the
    // distinct points and every group is a cluster.
    use neurobits_core::prng::draw;
    let unit = |s: u64, i: u64| (draw(s, i) >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0;
    let mut coords: Vec<f64> = (0..8 * 30 * 6).map(|s| unit(1, ((s / 6) / 30 * 6 + s % 6) as u64)).collect();
    coords.extend((0..40 * 6).map(|s| unit(2, s as u64)));
    let p = Points { n: 280, dim: 6, coords };
    let r = ocnn::cluster_cpu::<f32>(&p, None, &Config::default()).unwrap();
    let groups: Vec<u32> = (0..240).map(|i| r.labels[i]).collect();
    assert!((0..8).all(|g| groups[g * 30..g * 30 + 30].iter().all(|&l| l == groups[g * 30])), "{groups:?}");
    assert!(r.k_non_singleton >= 8 && r.uncoupled < 40, "{} clusters, {} uncoupled", r.k_non_singleton, r.uncoupled);
}
