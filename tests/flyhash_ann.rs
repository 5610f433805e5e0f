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
