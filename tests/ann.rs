//! The ann-benchmarks layout (`io::ann`), `flyhash ann-data` and `flyhash ann-figure`: round
//! trips, exact neighbours against a naive search, hostile HDF5 files, bad result files.
#![cfg(feature = "ann")]

use assert_cmd::Command;
use neurobits::device::{simd_detected, Simd};
use neurobits::flyhash::ann_data::{exact_neighbours, exact_neighbours_on};
use neurobits::io::ann::{read, write, AnnData};
use neurobits::io::read::Table;
use neurobits_core::prng::{below, draw};
use std::path::Path;

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `rows × cols` values from the portable PRNG: small integers (many tied distances) or floats.
fn table(rows: usize, cols: usize, seed: u64, ints: bool) -> Table<f32> {
    let v = |i: usize| {
        let r = draw(seed, i as u64);
        if ints {
            below(r, 4) as f32
        } else {
            (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        }
    };
    Table { rows, cols, data: (0..rows * cols).map(v).collect() }
}

/// The naive answer: every distance in f64 by a plain loop, sorted by (distance, row).
fn naive(train: &Table<f32>, test: &Table<f32>, k: usize) -> (Vec<i32>, Vec<f32>) {
    let (mut ids, mut dist) = (vec![], vec![]);
    for q in 0..test.rows {
        let mut all: Vec<(f64, usize)> = (0..train.rows)
            .map(|i| {
                let d: f64 = train.row(i).iter().zip(test.row(q)).map(|(a, b)| (*a as f64 - *b as f64).powi(2)).sum();
                (d, i)
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(d, i) in &all[..k] {
            ids.push(i as i32);
            dist.push(d.sqrt() as f32);
        }
    }
    (ids, dist)
}

fn sample(ints: bool) -> AnnData {
    let (train, test) = (table(200, 13, 1, ints), table(17, 13, 2, ints));
    let (neighbors, distances) = exact_neighbours(&train, &test, 10);
    AnnData { train, test, neighbors, distances: Some(distances), metric: "euclidean".into() }
}

#[test]
fn exact_neighbours_equal_a_naive_search_on_every_instruction_set() {
    for ints in [true, false] {
        let (train, test) = (table(300, 21, 3, ints), table(25, 21, 4, ints));
        let (want_ids, want_dist) = naive(&train, &test, 12);
        for level in [Simd::Portable, Simd::Avx2, Simd::Avx512] {
            if level > simd_detected() {
                continue;
            }
            let (ids, dist) = exact_neighbours_on(level, &train, &test, 12);
            assert_eq!((ids.rows, ids.cols), (25, 12));
            // Integer data: the sums are exact, so the ids (ties by row) agree exactly.
            if ints {
                assert_eq!(ids.data, want_ids, "{level:?}");
                assert_eq!(dist.data, want_dist, "{level:?}");
            } else {
                let close = dist.data.iter().zip(&want_dist).all(|(a, b)| (a - b).abs() <= 1e-6 * b.max(1.0));
                assert!(close, "{level:?}");
            }
            assert_eq!((ids.clone(), dist.clone()), exact_neighbours_on(Simd::Portable, &train, &test, 12));
        }
    }
    // k larger than the data set: every row, in order.
    let (train, test) = (table(5, 3, 5, true), table(2, 3, 6, true));
    let (ids, _) = exact_neighbours(&train, &test, 100);
    assert_eq!((ids.rows, ids.cols), (2, 5));
    assert_eq!(ids.data, naive(&train, &test, 5).0);
}

#[test]
fn read_gives_back_what_write_wrote() {
    let dir = tempfile::tempdir().unwrap();
    for (i, ints) in [true, false].into_iter().enumerate() {
        let mut d = sample(ints);
        if i == 1 {
            d.distances = None;
            d.metric = "angular".into();
        }
        let p = dir.path().join(format!("x{i}.hdf5"));
        write(&p, &d).unwrap();
        assert_eq!(read(&p).unwrap(), d);
        // Atomic: nothing but the file is left beside it.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), i + 1, "{left:?}");
    }
}

#[test]
fn write_refuses_data_that_does_not_agree() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.hdf5");
    let mut d = sample(true);
    d.neighbors.data[3] = 200; // train has 200 rows: ids 0..200
    let e = write(&p, &d).unwrap_err().to_string();
    assert!(e.contains("x.hdf5") && e.contains("'neighbors'") && e.contains("id 200"), "{e}");
    assert!(!p.exists());
    let mut d = sample(true);
    d.test.cols = 12;
    d.test.data.truncate(12 * d.test.rows);
    let e = write(&p, &d).unwrap_err().to_string();
    assert!(e.contains("'test' has 12 columns but 'train' has 13"), "{e}");
}

#[test]
fn hostile_files_are_refused_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.hdf5");
    write(&good, &sample(true)).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let p = dir.path().join("bad.hdf5");
    let one_line = |e: &neurobits::Error| {
        let m = e.to_string();
        assert!(m.starts_with(&p.display().to_string()), "{m}");
        assert_eq!(m.lines().count(), 1, "{m}");
    };
    // Truncated anywhere: an error, never a panic or a short read taken for data.
    for cut in (0..bytes.len()).step_by(bytes.len() / 97 + 1).chain([bytes.len() - 1]) {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = read(&p).expect_err(&format!("cut at {cut}"));
        one_line(&e);
    }
    // Garbled: bytes flipped all over the file. The data may still read (a flipped pixel is a
    // pixel), but then it is whole and consistent; otherwise one line.
    for (i, at) in (0..bytes.len()).step_by(bytes.len() / 211 + 1).enumerate() {
        let mut b = bytes.clone();
        for j in 0..8 {
            let k = (at + j * 37) % b.len();
            b[k] ^= (draw(9, (i * 8 + j) as u64) as u8) | 1;
        }
        std::fs::write(&p, &b).unwrap();
        match read(&p) {
            Ok(d) => {
                assert_eq!(d.train.data.len(), d.train.rows * d.train.cols);
                assert_eq!(d.neighbors.rows, d.test.rows);
            }
            Err(e) => one_line(&e),
        }
    }
    // Not HDF5 at all, and HDF5 without the datasets.
    std::fs::write(&p, b"train,test\n1,2\n").unwrap();
    let e = read(&p).unwrap_err();
    one_line(&e);
    assert!(e.to_string().contains("not an HDF5 file"), "{e}");
    let e = read(&dir.path().join("missing.hdf5")).unwrap_err();
    assert!(e.is_io(), "{e}");
}

fn idx(path: &Path, t: &Table<f32>) {
    let mut b = vec![0, 0, 0x08, 3];
    for d in [t.rows as u32, 1, t.cols as u32] {
        b.extend(d.to_be_bytes());
    }
    b.extend(t.data.iter().map(|&v| v as u8));
    std::fs::write(path, b).unwrap();
}

#[test]
fn ann_data_builds_the_layout_from_idx_files() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = (dir.path().join("train.idx"), dir.path().join("test.idx"));
    // Pixels 0..255 as in Fashion-MNIST.
    let pix = |rows, seed| {
        let mut t = table(rows, 28, seed, false);
        t.data.iter_mut().for_each(|v| *v = ((*v + 0.5) * 255.0).floor());
        t
    };
    let (train, test) = (pix(150, 11), pix(9, 12));
    idx(&tr, &train);
    idx(&te, &test);
    let out = dir.path().join("f.hdf5");
    nb().args(["-q", "flyhash", "ann-data", "--train-images", s(&tr), "--test-images", s(&te)])
        .args(["--neighbours", "20", "-o", s(&out)])
        .assert()
        .success();
    let d = read(&out).unwrap();
    let (ids, dist) = naive(&train, &test, 20);
    assert_eq!((d.train, d.test), (train, test));
    assert_eq!((d.neighbors.rows, d.neighbors.cols), (9, 20));
    assert_eq!(d.neighbors.data, ids);
    assert_eq!(d.distances.unwrap().data, dist);
    assert_eq!(d.metric, "euclidean");

    // Images of another size: one line naming the file and both sizes, exit 2, no output.
    let small = dir.path().join("small.idx");
    idx(&small, &Table { rows: 2, cols: 5, data: vec![1.0; 10] });
    let out2 = dir.path().join("g.hdf5");
    let o = nb()
        .args(["flyhash", "ann-data", "--train-images", s(&tr), "--test-images", s(&small), "-o", s(&out2)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("small.idx") && err.contains("5 values per image") && err.contains("28"), "{err}");
    assert!(!out2.exists());

    // Standard output cannot hold an HDF5 file: refused before the work, no file named `-`.
    let o = nb()
        .current_dir(dir.path())
        .args(["flyhash", "ann-data", "--train-images", s(&tr), "--test-images", s(&te), "-o", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("standard output"), "{err}");
    assert!(!dir.path().join("-").exists());
}

#[test]
fn ann_figure_draws_every_line_and_refuses_bad_json() {
    let dir = tempfile::tempdir().unwrap();
    let row = |a: &str, dev: &str, p: &str, recall: f64, qps: f64| {
        format!(
            r#"{{"algorithm": "{a}", "params": "{p}", "device": "{dev}", "k": 10, "recall": {recall}, "qps": {qps}, "build_s": 1.5, "n_train": 600, "n_test": 50}}"#
        )
    };
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(
        &a,
        format!("[{}, {}]", row("faiss-X", "cpu", "n=2", 0.9, 50.0), row("faiss-X", "cpu", "n=1", 0.5, 400.0)),
    )
    .unwrap();
    // A key beyond the shared ones (`flyhash ann-bench` adds `candidates`) is read past.
    let extra = row("ours", "gpu", "p=1", 0.7, 9e4).replace("}", r#", "candidates": 123.5}"#);
    std::fs::write(&b, format!("[{}, {}]", row("ours", "cpu", "p=1", 0.7, 900.0), extra)).unwrap();
    let out = dir.path().join("fig");
    nb().args(["-q", "flyhash", "ann-figure", "--results", s(&a), s(&b), "-o", s(&out)]).assert().success();
    let svg = std::fs::read_to_string(out.join("ann-recall-qps.svg")).unwrap();
    for label in ["faiss-X", "ours (cpu)", "ours (gpu)", "recall@10", "queries per second"] {
        assert!(svg.contains(label), "{label} not in the SVG");
    }
    // One marker per point (circles for the first three lines) and one per legend entry.
    assert_eq!(svg.matches("<circle").count(), 4 + 3, "{svg}");
    let csv = std::fs::read_to_string(out.join("ann-results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.starts_with("algorithm,params,device,k,recall,qps,build_s,n_train,n_test\n"), "{csv}");
    let merged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ann-results.json")).unwrap()).unwrap();
    assert_eq!(merged.as_array().unwrap().len(), 4);
    // Lines sorted by recall: the faiss line goes from recall 0.5 to 0.9.
    let rows = neurobits::flyhash::ann_figure::read_rows(&a).unwrap();
    let lines = neurobits::flyhash::ann_figure::series(&rows);
    assert_eq!(lines[0].points, [(0.5, 400.0), (0.9, 50.0)]);
    // A line is the Pareto front: settings slower at a lower (or equal) recall are not drawn.
    let mut more = rows.clone();
    for (recall, qps) in [(0.4, 100.0), (0.9, 20.0), (0.7, 300.0), (0.5, 400.0)] {
        more.push(neurobits::flyhash::ann_figure::AnnRow { recall, qps, ..rows[0].clone() });
    }
    let lines = neurobits::flyhash::ann_figure::series(&more);
    assert_eq!(lines[0].points, [(0.5, 400.0), (0.7, 300.0), (0.9, 50.0)]);

    for (text, needle) in [
        ("{not json", "not a JSON array of ann-bench rows"),
        (r#"[{"algorithm": "x"}]"#, "missing field"),
        (&format!("[{}]", row("x", "cpu", "p", 1.5, 3.0)), "recall 1.5 is not in [0, 1]"),
        (&format!("[{}]", row("x", "cpu", "p", 0.5, 0.0)), "qps 0 is not a positive number"),
        ("[]", "no rows to plot"),
    ] {
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, text).unwrap();
        let out = dir.path().join("fig-bad");
        let o = nb().args(["flyhash", "ann-figure", "--results", s(&bad), "-o", s(&out)]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("bad.json") && err.contains(needle), "{needle} not in {err}");
        assert!(!out.exists(), "{text}: a half-written output");
    }
}

#[test]
fn files_written_by_h5py_as_ann_benchmarks_writes_them_read() {
    // tests/data/ann-h5py.hdf5: written by h5py 3.16 as ann-benchmarks' `write_output` does (str
    // attributes, float32 points, neighbours and distances from numpy in float64);
    // ann-h5py-uint8.hdf5: the same points as uint8, a bytes attribute, no distances.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let a = read(&dir.join("ann-h5py.hdf5")).unwrap();
    assert_eq!(a.metric, "euclidean");
    assert_eq!((a.train.rows, a.train.cols, a.test.rows, a.neighbors.cols), (12, 5, 3, 4));
    assert_eq!(a.train.row(0), [241.0, 160.0, 175.0, 229.0, 148.0]);
    let (ids, dist) = exact_neighbours(&a.train, &a.test, 4);
    assert_eq!(ids, a.neighbors);
    assert_eq!(Some(dist), a.distances);
    let b = read(&dir.join("ann-h5py-uint8.hdf5")).unwrap();
    assert_eq!((b.metric.as_str(), &b.train, &b.test, &b.neighbors), ("angular", &a.train, &a.test, &a.neighbors));
    assert_eq!(b.distances, None);
}
