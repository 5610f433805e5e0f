//! The OCNN on the CPU: the spec's Lsun test vector (§11.3) exactly, the scale constant from the
//! Delaunay triangulation, and the clustering rules on hand-made cases.

use neurobits::ocnn::{self, points, Config};
use std::path::{Path, PathBuf};

fn fcps(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps").join(name);
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("NEUROBITS_SKIP_DATA").is_some(),
        "{} missing: `make setup` fetches the FCPS sets (or set NEUROBITS_SKIP_DATA=1 to skip)",
        p.display()
    );
    None
}

/// The library's defaults (seed 1, T = 1000, phase, automatic threshold, f32), x-threads, and
/// one run at the scale a (`--select stable`): the spec's vectors are of one run.
fn config() -> Config {
    Config { variant: ocnn::Variant::XThreads, select: ocnn::Select::Stable, ..Config::default() }
}

#[test]
fn lsun_test_vector() {
    let Some(path) = fcps("Lsun.data") else { return };
    // pyclustering's copy starts with 3 rows of .lrn header debris.
    let p = points::load(&path).unwrap().skip(3);
    assert_eq!((p.n, p.dim), (400, 2));
    let a = 0.21925040730964698;
    // The spec's automatic threshold is the plateau rule (`--select plateau`).
    let plateau = Config { select: ocnn::Select::Plateau, ..config() };
    let r = ocnn::cluster_cpu::<f32>(&p, Some(a), &plateau).unwrap();
    assert_eq!(&r.hits_sha256[..16], "4851193aa2faeb7b", "hit matrix digest");
    assert_eq!(&r.state_sha256[..16], "1ef5fddbef11217c", "final state digest");
    assert_eq!((r.threshold_percent, r.k), (65, 3));
    // The FCPS classes are 200/100/100 in file order; the stable selection finds them from the
    // same hits too.
    let stable = ocnn::cluster_cpu::<f32>(&p, Some(a), &config()).unwrap();
    assert_eq!(stable.hits_sha256, r.hits_sha256);
    for r in [r, stable] {
        let sizes: Vec<usize> = (0..3).map(|c| r.labels.iter().filter(|&&l| l == c).count()).collect();
        assert_eq!((r.k, sizes), (3, vec![200, 100, 100]));
        assert!(r.labels[..200].iter().all(|&l| l == r.labels[0]));
        assert!(r.labels[200..300].iter().all(|&l| l == r.labels[200]));
    }
}

#[test]
fn lsun_scale_from_the_delaunay_triangulation() {
    let Some(path) = fcps("Lsun.data") else { return };
    let p = points::load(&path).unwrap().skip(3);
    let a = ocnn::scale::scale(&p).unwrap();
    // scipy/Qhull with `Qbb Qc Qz Q12` gives 0.21925040730964698; Lsun's grid-like points have
    // several Delaunay triangulations, and the qhull crate's lifting picks another (docs/manual/src/ocnn.md).
    assert!((a - 0.21925040730964698).abs() / 0.21925 < 0.01, "a = {a:.17}");
    // Unchanged by a uniform rescaling of the data, up to rounding.
    let scaled = points::Points { coords: p.coords.iter().map(|c| c * 20.0).collect(), ..p.clone() };
    assert!((ocnn::scale::scale(&scaled).unwrap() / 20.0 - a).abs() < 1e-9 * a);
}

#[test]
fn scale_in_3d_and_degenerate_inputs() {
    // A tetrahedron and its centre: the centre's 4 neighbours are at √3/2·… — check the mean by
    // brute force over the Delaunay edges, which here are all 10 pairs but the 4 outer corners
    // see each other and the centre.
    let p = points::parse("1 1 1\n1 -1 -1\n-1 1 -1\n-1 -1 1\n0 0 0\n", "mem").unwrap();
    let a = ocnn::scale::scale(&p).unwrap();
    let (edge, centre) = (8f64.sqrt(), 3f64.sqrt());
    // Corners: 3 edges and the centre; the centre: 4 corners.
    let want = (4.0 * (3.0 * edge + centre) / 4.0 + centre) / 5.0;
    assert!((a - want).abs() < 1e-12, "a = {a}, want {want}");
    // All points equal, or too few for a simplex: an error, not a panic.
    assert!(ocnn::scale::scale(&points::parse("1 1\n1 1\n1 1\n1 1\n", "mem").unwrap()).is_err());
    assert!(ocnn::scale::scale(&points::parse("0 0\n1 1\n", "mem").unwrap()).is_err());
}

/// Bad input: one line on stderr, exit code 2, no output file.
#[test]
fn bad_inputs_end_in_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("labels.csv");
    let cases: &[(&str, &str, &[&str])] = &[
        ("one point", "1 2\n", &[]),
        ("nan", "1 2\nnan 3\n3 4\n", &[]),
        ("inf", "1 2\ninf 3\n3 4\n", &[]),
        ("ragged", "1 2\n3 4 5\n", &[]),
        ("not a number", "1 2\nx 4\n", &[]),
        ("duplicates only", "1 1\n1 1\n1 1\n1 1\n", &[]),
        ("collinear", "0 0\n1 1\n2 2\n3 3\n", &[]),
        ("scale 0", "0 0\n1 0\n0 1\n1 1\n", &["--scale", "0"]),
        ("scale nan", "0 0\n1 0\n0 1\n1 1\n", &["--scale", "nan"]),
        ("half the points uncoupled in f32", "0 0\n1 0\n1e6 1e6\n-1e6 1e6\n", &["--scale", "0.5"]),
        ("bad threshold", "0 0\n1 0\n0 1\n1 1\n", &["--threshold", "120"]),
        ("bad eps", "0 0\n1 0\n0 1\n1 1\n", &["--sync", "fragmentary", "--eps", "-1"]),
        ("empty", "", &[]),
        ("cutoff 0", "0 0\n1 0\n0 1\n1 1\n", &["--cutoff", "0"]),
        ("cutoff nan", "0 0\n1 0\n0 1\n1 1\n", &["--cutoff", "nan"]),
        ("cutoff isolates a point", "0 0\n1 0\n0 1\n1 1\n9 9\n", &["--cutoff", "2", "--scale", "1"]),
    ];
    for (name, text, extra) in cases {
        let input = d.path().join("p.txt");
        std::fs::write(&input, text).unwrap();
        let o = assert_cmd::Command::cargo_bin("neurobits")
            .unwrap()
            .args(["ocnn", "cluster", "--input"])
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .args(*extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with("error: ") && !err.contains("panicked"), "{name}: {err}");
        assert!(!out.exists(), "{name}: no output on error");
    }
}

#[test]
fn a_dense_coupling_larger_than_memory_is_refused_before_allocating() {
    let d = tempfile::tempdir().unwrap();
    // 200 000 points: the dense f32 J would take 160 GB.
    let text: String = (0..200_000u64).map(|i| format!("{} {}\n", i % 997, i / 997)).collect();
    let input = d.path().join("big.txt");
    std::fs::write(&input, text).unwrap();
    let o = assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["ocnn", "cluster", "--scale", "1", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(d.path().join("l.csv"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // The whole dense network (J, lane rows, pair hits) is checked at once, before J.
    assert!(err.contains("the dense OCNN of 200000 points") && err.contains("more than the memory budget"), "{err}");
}

#[test]
fn clusters_two_separated_blobs_and_writes_one_label_per_point() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::from("# two blobs\n");
    for i in 0..40 {
        let (dx, dy) = ((i % 7) as f64 * 0.1, (i / 7) as f64 * 0.1);
        text += &format!("{} {}\n{},{}\n", dx, dy, 10.0 + dx, 10.0 + dy);
    }
    let input = d.path().join("blobs.txt");
    std::fs::write(&input, text).unwrap();
    let (out, json) = (d.path().join("l.csv"), d.path().join("r.json"));
    assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["ocnn", "cluster", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let labels: Vec<u32> = std::fs::read_to_string(&out).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(labels.len(), 80);
    assert!(labels.iter().step_by(2).all(|&l| l == 0) && labels.iter().skip(1).step_by(2).all(|&l| l == 1));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!((r["k"].as_u64(), r["n"].as_u64(), r["dim"].as_u64()), (Some(2), Some(80), Some(2)));
    assert_eq!(r["hits_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn cpu_simd_path_equals_the_portable_path() {
    let Some(path) = fcps("Hepta.data") else { return };
    let d = tempfile::tempdir().unwrap();
    let run = |no_simd: bool| {
        let json = d.path().join(format!("r{no_simd}.json"));
        let mut c = assert_cmd::Command::cargo_bin("neurobits").unwrap();
        if no_simd {
            c.env("NEUROBITS_NO_SIMD", "1");
        }
        c.args(["ocnn", "cluster", "--iters", "300", "--input"])
            .arg(&path)
            .arg("--out")
            .arg(d.path().join("l.csv"))
            .arg("--json")
            .arg(&json)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        (v["state_sha256"].as_str().unwrap().to_string(), v["hits_sha256"].as_str().unwrap().to_string())
    };
    assert_eq!(run(true), run(false));
}

/// The sparse coupling (`--cutoff`) is the dense coupling with the far weights set to zero: the
/// same trajectory bit for bit (zero terms do not change a lanes32 sum), and on the coupled pairs
/// the same hit counts — for f32 and f64, phase and fragmentary, in 2-D and 3-D.
#[test]
fn sparse_coupling_equals_the_dense_one_with_zeros() {
    use neurobits::ocnn::{bench::random_points, cpu, weights};
    use neurobits_core::ocnn::SyncMode;
    fn check<T: neurobits_core::ocnn::Real + Send + Sync>(dim: usize, r: f64, mode: SyncMode<T>) {
        let p = random_points(300, dim, 5);
        let a = ocnn::scale::scale(&p).unwrap();
        let dense = weights::dense_cut::<T>(&p, a, Some(r)).unwrap();
        let sparse = weights::sparse::<T>(&p, a, r).unwrap();
        let n = p.n;
        // The CSR holds exactly the nonzero-distance-within-cutoff pairs, columns ascending.
        for i in 0..n {
            let cols = &sparse.cols[sparse.ptr[i]..sparse.ptr[i + 1]];
            assert!(cols.windows(2).all(|w| w[0] < w[1]) && !cols.contains(&(i as u32)));
            for (k, &j) in cols.iter().enumerate() {
                assert_eq!(sparse.vals[sparse.ptr[i] + k].to_f64(), dense.j[i * n + j as usize].to_f64());
            }
        }
        assert!(sparse.hit_ptr[n] < n * (n - 1) / 4, "the cutoff should drop most pairs");
        let (td, ts) = (cpu::run(&dense, 1, 10, 200, mode), cpu::run(&sparse, 1, 10, 200, mode));
        assert!(td.state.iter().zip(&ts.state).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits()));
        for (s, (i, j)) in sparse.pairs().enumerate() {
            assert_eq!(ts.hits[s], td.hits[cpu::tri(n, i as usize, j as usize)], "pair ({i}, {j})");
        }
    }
    check::<f32>(2, 3.0, SyncMode::Phase);
    check::<f64>(2, 3.0, SyncMode::Phase);
    check::<f32>(3, 2.5, SyncMode::Fragmentary(0.2));
    check::<f64>(3, 2.5, SyncMode::Phase);
}

#[test]
fn lsun_with_a_cutoff_finds_the_three_clusters() {
    let Some(path) = fcps("Lsun.data") else { return };
    let p = points::load(&path).unwrap().skip(3);
    let c = Config { cutoff: Some(3.0), ..config() };
    let r = ocnn::cluster_cpu::<f32>(&p, Some(0.21925040730964698), &c).unwrap();
    assert_eq!(r.k, 3);
    assert!(r.coupled_pairs < 400 * 399 / 2 / 5, "{} coupled pairs", r.coupled_pairs);
    let sizes: Vec<usize> = (0..3).map(|c| r.labels.iter().filter(|&&l| l == c).count()).collect();
    assert_eq!(sizes, [200, 100, 100]);
    // A cutoff beyond every distance couples every pair: the sparse path then reproduces the
    // spec's dense test vector (final state) exactly.
    let c = Config { cutoff: Some(1e9), ..c };
    let r = ocnn::cluster_cpu::<f32>(&p, Some(0.21925040730964698), &c).unwrap();
    assert_eq!(r.coupled_pairs, 400 * 399 / 2);
    assert_eq!(&r.state_sha256[..16], "1ef5fddbef11217c", "final state digest through the sparse path");
    assert_eq!(r.k, 3);
    let c = Config { select: ocnn::Select::Plateau, ..c };
    let r = ocnn::cluster_cpu::<f32>(&p, Some(0.21925040730964698), &c).unwrap();
    assert_eq!((r.threshold_percent, r.k), (65, 3), "the spec's plateau threshold through the sparse path");
}

/// The lane rows (each lane's nonzero weights, ascending columns, zero padding) update like the
/// dense rows they come from, bit for bit: state and every pair's hits, for f32 and f64, phase
/// and fragmentary, 2-D and 3-D, with a cutoff (many zero weights) and without.
#[test]
fn lane_rows_equal_the_dense_rows() {
    use neurobits::ocnn::{bench::random_points, cpu, weights};
    use neurobits_core::ocnn::{Quot16, Quot8, SyncMode};
    fn check<T: neurobits_core::ocnn::Real + Send + Sync>(dim: usize, cut: Option<f64>, mode: SyncMode<T>) {
        let p = random_points(333, dim, 6);
        let a = ocnn::scale::scale(&p).unwrap();
        let dense = weights::dense_cut::<T>(&p, a, cut).unwrap();
        let rows = dense.lane_rows();
        let nonzero = dense.j.iter().filter(|&&w| w != T::ZERO).count();
        assert!(rows.cols.len() >= nonzero && rows.cols.len().is_multiple_of(32));
        let td = cpu::run(&dense, 2, 5, 150, mode);
        // Columns as u32 (the GPU's form), as quotients by 32 in one and two bytes (the CPU's).
        let runs = [
            cpu::run(&rows, 2, 5, 150, mode),
            cpu::run(&dense.lane_rows_as::<Quot8>(), 2, 5, 150, mode),
            cpu::run(&dense.lane_rows_as::<Quot16>(), 2, 5, 150, mode),
            cpu::run_lane_rows(&dense, 2, 5, 150, mode),
        ];
        for tl in runs {
            assert!(td.state.iter().zip(&tl.state).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits()));
            assert_eq!(td.hits, tl.hits);
        }
    }
    check::<f32>(2, Some(2.0), SyncMode::Phase);
    check::<f64>(2, None, SyncMode::Fragmentary(0.2));
    check::<f32>(3, None, SyncMode::Phase);
    check::<f64>(3, Some(3.0), SyncMode::Phase);
}

/// `ocnn experiment` scores against the class files (FCPS `.cls`); one that is not one key and
/// one class per point is one line and exit code 2, before any clustering and with no output.
#[test]
fn experiment_refuses_a_malformed_class_file() {
    let Some(data) = fcps("Lsun.data") else { return };
    let d = tempfile::tempdir().unwrap();
    let labels = d.path().join("labels");
    std::fs::create_dir(&labels).unwrap();
    for e in std::fs::read_dir(neurobits::ocnn::experiment::LABELS).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), labels.join(e.file_name())).unwrap();
    }
    let target = std::fs::read_to_string(labels.join("Target.cls")).unwrap();
    let rows: Vec<&str> = target.lines().filter(|l| !l.starts_with('%')).collect();
    let one_column: String = rows.iter().map(|r| format!("{}\n", r.split('\t').nth(1).unwrap())).collect();
    let three_columns: String = rows.iter().map(|r| format!("{r}\t0\n")).collect();
    let short: String = rows[1..].iter().map(|r| format!("{r}\n")).collect();
    let swapped: String = [rows[1], rows[0]].iter().chain(&rows[2..]).map(|r| format!("{r}\n")).collect();
    let cases: &[(&str, &str)] = &[
        ("one column", &one_column),
        ("three columns", &three_columns),
        ("a class fewer than points", &short),
        ("keys out of order", &swapped),
        ("a negative class", &target.replacen("\n5\t1\n", "\n5\t-1\n", 1)),
        ("a fractional class", &target.replacen("\n5\t1\n", "\n5\t1.5\n", 1)),
        ("a word", &target.replacen("\n5\t1\n", "\n5\tring\n", 1)),
        ("empty", ""),
    ];
    let out = d.path().join("out");
    for (name, text) in cases {
        assert_ne!(*text, target, "{name}: the case changes the file");
        std::fs::write(labels.join("Target.cls"), text).unwrap();
        let o = assert_cmd::Command::cargo_bin("neurobits")
            .unwrap()
            .args(["ocnn", "experiment", "--seeds", "1", "--input"])
            .arg(data.parent().unwrap())
            .arg("--labels")
            .arg(&labels)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.starts_with("error: ") && err.contains("Target.cls"), "{name}: {err}");
        assert!(o.stdout.is_empty() && !out.exists(), "{name}: nothing written");
    }
}
