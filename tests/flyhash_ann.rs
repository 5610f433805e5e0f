//! The approximate FlyHash index (`neurobits::flyhash::ann`): exact at the knob's maximum, recall
//! rising with the knob, `add` in pieces equal to one `add`, saved files, refused knob values.

use neurobits::flyhash::ann::{AnnConfig, FlyAnnIndex, Rerank};
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::index::FlyIndex;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::model::Model;
use neurobits_core::prng::{below, draw};

/// `rows` vectors of dimension `d` around 20 centres (integer noise), a clustered set like real
/// data, from the portable PRNG.
fn clustered(rows: usize, d: usize, seed: u64) -> Matrix {
    let mut data = Vec::with_capacity(rows * d);
    for i in 0..rows {
        let c = below(draw(seed, i as u64), 20);
        for j in 0..d {
            let centre = below(draw(77, c * 1000 + j as u64), 200) as f32;
            let noise = below(draw(seed ^ 0x55, (i * d + j) as u64), 241) as f32 - 120.0;
            data.push(centre + noise);
        }
    }
    Matrix { rows, cols: d, data }
}

fn hash() -> FlyHashConfig {
    FlyHashConfig { code_bits: Some(512), winners: Some(32), ones_per_row: Some(4), ..Default::default() }
}

fn ann(rerank: Rerank) -> AnnConfig {
    AnnConfig { tables: 4, bits: 8, pool: 4, probes: 4, rerank }
}

fn build(x: &Matrix, rerank: Rerank) -> FlyAnnIndex {
    let mut index = FlyAnnIndex::new(hash(), ann(rerank), x.cols).unwrap();
    index.add(x).unwrap();
    index
}

/// True Euclidean top-k of each query (ties by id).
fn brute_force(x: &Matrix, q: &Matrix, k: usize) -> Vec<Vec<usize>> {
    (0..q.rows)
        .map(|i| {
            let mut d: Vec<(f32, usize)> = (0..x.rows)
                .map(|j| (x.row(j).iter().zip(q.row(i)).map(|(a, b)| (a - b) * (a - b)).sum::<f32>(), j))
                .collect();
            d.sort_by(|a, b| a.partial_cmp(b).unwrap());
            d[..k].iter().map(|p| p.1).collect()
        })
        .collect()
}

fn recall(found: &[i64], truth: &[Vec<usize>], k: usize) -> f64 {
    let hit: usize = found
        .chunks(k)
        .zip(truth)
        .map(|(f, t)| f.iter().filter(|&&id| id >= 0 && t.contains(&(id as usize))).count())
        .sum();
    hit as f64 / (truth.len() * k) as f64
}

#[test]
fn all_probes_is_the_exact_hamming_search() {
    let (x, q) = (clustered(1500, 32, 1), clustered(100, 32, 2));
    let index = build(&x, Rerank::Hamming);
    let exact = FlyIndex::new(hash(), 32).map(|mut e| {
        e.add(&x).unwrap();
        e.search(&q, 10).unwrap()
    });
    let exact = exact.unwrap();
    let got = index.search_probes(&q, 10, 256).unwrap();
    assert_eq!(got.ids, exact.ids);
    assert_eq!(got.distances, exact.distances.iter().map(|&d| d as f32).collect::<Vec<_>>());
    assert_eq!(got.candidates, 1500 * 100);
    // The index's own exact index answers the same.
    assert_eq!(index.exact().search(&q, 10).unwrap(), exact);
}

#[test]
fn all_probes_with_euclidean_rerank_is_the_brute_force() {
    let (x, q) = (clustered(1500, 32, 1), clustered(100, 32, 2));
    let index = build(&x, Rerank::Euclidean);
    let got = index.search_probes(&q, 10, 256).unwrap();
    let truth = brute_force(&x, &q, 10);
    assert_eq!(recall(&got.ids, &truth, 10), 1.0);
    // Squared distances, nearest first.
    for row in got.distances.chunks(10) {
        assert!(row.windows(2).all(|w| w[0] <= w[1]), "{row:?}");
    }
}

#[test]
fn recall_rises_with_the_probes() {
    let (x, q) = (clustered(3000, 32, 3), clustered(200, 32, 4));
    let truth = brute_force(&x, &q, 10);
    let index = build(&x, Rerank::Euclidean);
    let mut measured = vec![];
    for probes in [1, 2, 4, 8, 16, 64, 256] {
        let got = index.search_probes(&q, 10, probes).unwrap();
        measured.push((recall(&got.ids, &truth, 10), got.candidates as f64 / (200.0 * 3000.0)));
    }
    // Measured on this data (2026-11-26): recall@10 and the share of the database re-ranked.
    let expected = [0.228, 0.3775, 0.555, 0.746, 0.885, 0.9965, 1.0];
    for (w, (m, e)) in measured.windows(2).zip(measured.iter().zip(expected)) {
        assert!(w[1].0 >= w[0].0 - 0.01, "recall fell: {measured:?}");
        assert!(w[1].1 >= w[0].1, "candidates fell: {measured:?}");
        assert!((m.0 - e).abs() < 0.02, "recall {} expected {e}: {measured:?}", m.0);
    }
    assert_eq!(measured[6].0, 1.0);
}

#[test]
fn adding_in_pieces_equals_adding_at_once() {
    let (x, q) = (clustered(1200, 32, 5), clustered(50, 32, 6));
    for rerank in [Rerank::Hamming, Rerank::Euclidean] {
        let whole = build(&x, rerank);
        let mut pieces = FlyAnnIndex::new(hash(), ann(rerank), 32).unwrap();
        pieces.train(&x).unwrap();
        let (a, b) = x.data.split_at(700 * 32);
        assert_eq!(pieces.add(&Matrix { rows: 700, cols: 32, data: a.to_vec() }).unwrap(), 0..700);
        assert_eq!(pieces.add(&Matrix { rows: 500, cols: 32, data: b.to_vec() }).unwrap(), 700..1200);
        for probes in [1, 3, 8, 256] {
            assert_eq!(whole.search_probes(&q, 10, probes).unwrap(), pieces.search_probes(&q, 10, probes).unwrap());
        }
        // Thresholds from a first add of 700 rows: other buckets, the same exact answer.
        let mut first = FlyAnnIndex::new(hash(), ann(rerank), 32).unwrap();
        first.add(&Matrix { rows: 700, cols: 32, data: a.to_vec() }).unwrap();
        first.add(&Matrix { rows: 500, cols: 32, data: b.to_vec() }).unwrap();
        assert_eq!(whole.search_probes(&q, 10, 256).unwrap(), first.search_probes(&q, 10, 256).unwrap());
        assert!(first.train(&x).unwrap_err().to_string().contains("already holds 1200"));
    }
}

#[test]
fn save_and_load_keep_every_answer() {
    let (x, q) = (clustered(800, 32, 7), clustered(40, 32, 8));
    for rerank in [Rerank::Hamming, Rerank::Euclidean] {
        let index = build(&x, rerank);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ann.nbm");
        index.save(&path).unwrap();
        let back = FlyAnnIndex::load(&path).unwrap();
        assert_eq!(back.config(), index.config());
        for probes in [1, 4, 256] {
            assert_eq!(back.search_probes(&q, 5, probes).unwrap(), index.search_probes(&q, 5, probes).unwrap());
        }
        // A flipped byte, a truncation and the other kind are one-line refusals naming the file.
        let mut b = std::fs::read(&path).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 1;
        let e = FlyAnnIndex::from_bytes(&b, "ann.nbm").unwrap_err().to_string();
        assert!(e.contains("ann.nbm") && e.contains("checksum"), "{e}");
        let e = FlyAnnIndex::from_bytes(&b[..mid], "ann.nbm").unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = FlyIndex::load(&path).unwrap_err().to_string();
        assert!(e.contains("holds a flyhash-ann model"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }
    // An exact index file still loads as one.
    let mut exact = FlyIndex::new(hash(), 32).unwrap();
    exact.add(&x).unwrap();
    let f = tempfile::NamedTempFile::new().unwrap();
    exact.save(f.path()).unwrap();
    assert_eq!(FlyIndex::load(f.path()).unwrap().search(&q, 3).unwrap(), exact.search(&q, 3).unwrap());
}

#[test]
fn bad_knob_values_are_refused_with_one_line() {
    let x = clustered(100, 32, 9);
    let mut index = build(&x, Rerank::Hamming);
    for probes in [0, 257] {
        let e = index.search_probes(&x, 3, probes).unwrap_err().to_string();
        assert!(e.contains("probes") && e.contains(&probes.to_string()) && e.contains("1..=256"), "{e}");
        assert_eq!(e.lines().count(), 1);
        assert!(index.set_probes(probes).is_err());
    }
    index.set_probes(256).unwrap();
    assert_eq!(index.config().probes, 256);
    for (cfg, field) in [
        (AnnConfig { bits: 0, ..ann(Rerank::Hamming) }, "bits"),
        (AnnConfig { bits: 25, ..ann(Rerank::Hamming) }, "bits"),
        (AnnConfig { tables: 0, ..ann(Rerank::Hamming) }, "tables"),
        (AnnConfig { pool: 0, ..ann(Rerank::Hamming) }, "pool"),
        (AnnConfig { probes: 0, ..ann(Rerank::Hamming) }, "probes"),
        (AnnConfig { tables: 100, ..ann(Rerank::Hamming) }, "tables"), // 100·8·4 outputs > 512
    ] {
        let e = FlyAnnIndex::new(hash(), cfg, 32).unwrap_err().to_string();
        assert!(e.contains(field), "{e}");
        assert_eq!(e.lines().count(), 1);
    }
    // Queries of the wrong width, and k = 0.
    let e = index.search_probes(&Matrix { rows: 1, cols: 3, data: vec![0.; 3] }, 3, 4).unwrap_err().to_string();
    assert!(e.contains("3 features"), "{e}");
    assert!(index.search_probes(&x, 0, 4).is_err());
}

fn nb() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("neurobits").unwrap()
}

/// An IDX file of `n` 4×8 byte images (the layout of the Fashion-MNIST files).
fn idx_images(path: &std::path::Path, x: &Matrix) {
    let mut b = vec![0, 0, 8, 3];
    for v in [x.rows as u32, 4, 8] {
        b.extend(v.to_be_bytes());
    }
    b.extend(x.data.iter().map(|&v| v.clamp(0.0, 255.0) as u8));
    std::fs::write(path, b).unwrap();
}

fn csv(path: &std::path::Path, x: &Matrix) {
    let rows: Vec<String> =
        (0..x.rows).map(|i| x.row(i).iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")).collect();
    std::fs::write(path, rows.join("\n")).unwrap();
}

#[test]
fn cli_builds_adds_to_and_searches_an_approximate_index() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (x, q) = (clustered(600, 32, 11), clustered(20, 32, 12));
    let (a, b) = (
        Matrix { rows: 400, cols: 32, data: x.data[..400 * 32].to_vec() },
        Matrix { rows: 200, cols: 32, data: x.data[400 * 32..].to_vec() },
    );
    csv(dir.path().join("a.csv").as_path(), &a);
    csv(dir.path().join("b.csv").as_path(), &b);
    csv(dir.path().join("q.csv").as_path(), &q);
    let hash = ["--code-bits", "512", "--winners", "32", "--ones-per-row", "4"];
    let approx = ["--approx", "--tables", "4", "--key-bits", "8", "--pool", "4", "--rerank", "euclidean"];
    nb().args(["flyhash", "index", "build", "-i", &p("a.csv"), "-o", &p("ann.nbm")])
        .args(hash)
        .args(approx)
        .assert()
        .success();
    nb().args(["flyhash", "index", "add", "--index", &p("ann.nbm"), "-i", &p("b.csv")]).assert().success();
    let out = nb()
        .args(["flyhash", "index", "search", "--index", &p("ann.nbm"), "-i", &p("q.csv"), "-k", "5"])
        .args(["--probes", "256", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The library's answer for the same index (thresholds from `a`, then `b` added).
    let mut index = FlyAnnIndex::new(hash_cfg(), AnnConfig { probes: 16, ..ann(Rerank::Euclidean) }, 32).unwrap();
    index.add(&a).unwrap();
    index.add(&b).unwrap();
    let want = index.search_probes(&q, 5, 256).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<i64> = text.lines().skip(1).map(|l| l.split(',').nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(ids, want.ids);
    // A bad knob: one line naming it, exit code 2; --probes on an exact index likewise.
    let o = nb()
        .args([
            "flyhash",
            "index",
            "search",
            "--index",
            &p("ann.nbm"),
            "-i",
            &p("q.csv"),
            "--probes",
            "0",
            "-o",
            &p("o.csv"),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("probes") && err.contains("1..=256"), "{err}");
    assert!(!dir.path().join("o.csv").exists());
    nb().args(["flyhash", "index", "build", "-i", &p("a.csv"), "-o", &p("exact.nbm")]).args(hash).assert().success();
    let o = nb()
        .args([
            "flyhash",
            "index",
            "search",
            "--index",
            &p("exact.nbm"),
            "-i",
            &p("q.csv"),
            "--probes",
            "4",
            "-o",
            &p("o.csv"),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exact index"));
}

fn hash_cfg() -> FlyHashConfig {
    hash()
}

#[test]
fn ann_bench_writes_the_shared_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (x, q) = (clustered(500, 32, 13), clustered(30, 32, 14));
    idx_images(&dir.path().join("train-images-idx3-ubyte"), &x);
    idx_images(&dir.path().join("t10k-images-idx3-ubyte"), &q);
    // The ann-benchmarks file that `flyhash ann-data` makes from the IDX images.
    let data = dir.path().join("data.hdf5");
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    nb().args(["-q", "flyhash", "ann-data", "--train-images", &s(&dir.path().join("train-images-idx3-ubyte"))])
        .args(["--test-images", &s(&dir.path().join("t10k-images-idx3-ubyte")), "-o", &s(&data)])
        .assert()
        .success();
    let json = dir.path().join("bench.json");
    nb().args(["flyhash", "ann-bench", "-i", data.to_str().unwrap(), "-o", json.to_str().unwrap()])
        .args(["--code-bits", "512", "--winners", "32", "--ones-per-row", "4", "--tables", "4", "--key-bits", "8"])
        .args(["--rerank", "euclidean", "--probes", "1,16,256", "--exact-scan", "-q"])
        .assert()
        .success();
    let rows: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        for key in ["algorithm", "params", "device", "k", "recall", "qps", "build_s", "n_train", "n_test"] {
            assert!(r.get(key).is_some(), "{key} missing: {r}");
        }
        assert_eq!((r["k"].as_u64(), r["n_train"].as_u64(), r["n_test"].as_u64()), (Some(10), Some(500), Some(30)));
        assert!(r["device"].as_str().unwrap().starts_with("cpu ("));
    }
    assert_eq!(rows[0]["algorithm"], "neurobits-flyhash-multiprobe");
    assert!(rows[0]["params"].as_str().unwrap().contains("probes=1,"));
    let recall: Vec<f64> = rows.iter().map(|r| r["recall"].as_f64().unwrap()).collect();
    assert!(recall[0] <= recall[1] && recall[2] == 1.0, "{recall:?}");
    assert_eq!(rows[3]["algorithm"], "neurobits-flyhash-exact");
}

#[test]
fn pixel_vectors_kept_as_bytes_give_the_float_distances() {
    // Pixels (0..255 integers): the index keeps bytes; queries of pixels, then of other values.
    let clamp = |m: Matrix| Matrix { data: m.data.iter().map(|v| v.clamp(0.0, 255.0)).collect(), ..m };
    let (x, q) = (clamp(clustered(800, 32, 15)), clamp(clustered(40, 32, 16)));
    let index = build(&x, Rerank::Euclidean);
    let halves = Matrix { data: q.data.iter().map(|v| v + 0.5).collect(), ..q.clone() };
    for queries in [&q, &halves] {
        let got = index.search_probes(queries, 10, 256).unwrap();
        for (i, (ids, ds)) in got.ids.chunks(10).zip(got.distances.chunks(10)).enumerate() {
            for (&id, &d) in ids.iter().zip(ds) {
                let want = neurobits_core::flyhash::sq_euclidean(x.row(id as usize), queries.row(i));
                assert_eq!(d.to_bits(), want.to_bits());
            }
        }
        assert_eq!(recall(&got.ids, &brute_force(&x, queries, 10), 10), 1.0);
    }
    // Adding a non-pixel vector turns the store into floats: the same answers for the old ids.
    let mut mixed = build(&x, Rerank::Euclidean);
    mixed.add(&Matrix { rows: 1, cols: 32, data: vec![1000.5; 32] }).unwrap();
    assert_eq!(mixed.search_probes(&q, 10, 256).unwrap().ids, index.search_probes(&q, 10, 256).unwrap().ids);
}
