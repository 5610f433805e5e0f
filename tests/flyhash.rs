//! FlyHash on the host: readers, CLI round trips, bad input, search against a brute force.

use assert_cmd::Command;
use neurobits::flyhash::{cpu, data, search};
use neurobits_core::flyhash::FlyParams;
use neurobits_core::prng::{below, draw};
use std::path::Path;

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Integer-valued inputs: activations tie often.
fn tied_csv(rows: usize, d: usize, seed: u64) -> String {
    (0..rows)
        .map(|i| (0..d).map(|j| below(draw(seed, (i * d + j) as u64), 4).to_string()).collect::<Vec<_>>().join(","))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fails(args: &[&str], needle: &str, out: &Path) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert!(!out.exists());
}

#[test]
fn hash_with_a_projection_file_reproduces_the_drawn_projection() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("x.csv");
    std::fs::write(&input, tied_csv(50, 30, 1)).unwrap();
    let proj = d.path().join("p.csv");
    nb().args(["flyhash", "projection", "--d", "30", "--m", "200", "--s", "5", "--seed", "9", "--out", s(&proj)])
        .assert()
        .success();
    let text = std::fs::read_to_string(&proj).unwrap();
    assert_eq!(text.lines().count(), 200);
    for line in text.lines() {
        let v: Vec<u32> = line.split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(v.len(), 5);
        assert!(v.windows(2).all(|w| w[0] < w[1]) && v[4] < 30);
    }
    let (a, b) = (d.path().join("a.txt"), d.path().join("b.txt"));
    nb().args([
        "flyhash",
        "hash",
        "--input",
        s(&input),
        "--m",
        "200",
        "--s",
        "5",
        "--k",
        "10",
        "--seed",
        "9",
        "--format",
        "indices",
        "--out",
        s(&a),
    ])
    .assert()
    .success();
    nb().args([
        "flyhash",
        "hash",
        "--input",
        s(&input),
        "--projection",
        s(&proj),
        "--k",
        "10",
        "--format",
        "indices",
        "--out",
        s(&b),
    ])
    .assert()
    .success();
    let (ta, tb) = (std::fs::read_to_string(&a).unwrap(), std::fs::read_to_string(&b).unwrap());
    assert_eq!(ta, tb);
    assert_eq!(ta.lines().count(), 50);
    for line in ta.lines() {
        let v: Vec<u32> = line.split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(v.len(), 10, "exactly k winners");
        assert!(v.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn npy_and_csv_inputs_hash_identically() {
    let d = tempfile::tempdir().unwrap();
    let text = tied_csv(20, 16, 3);
    std::fs::write(d.path().join("x.csv"), &text).unwrap();
    let vals: Vec<f32> = text.split([',', '\n']).map(|x| x.parse().unwrap()).collect();
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (20, 16), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    for v in &vals {
        npy.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(d.path().join("x.npy"), npy).unwrap();
    let a = data::read(&d.path().join("x.csv")).unwrap();
    let b = data::read(&d.path().join("x.npy")).unwrap();
    assert_eq!(a, b);
    let p = FlyParams::new(16, 64, 4, 8, 1).unwrap();
    let proj = cpu::projection(&p);
    assert_eq!(cpu::hash(&p, &proj, &a, cpu::Wta::Exact), cpu::hash(&p, &proj, &b, cpu::Wta::Exact));
}

#[test]
fn bad_flyhash_input_is_rejected() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.bin");
    let w = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let nan = w("nan.csv", "1,2,3\n4,NaN,6\n");
    fails(
        &["flyhash", "hash", "--input", s(&nan), "--m", "10", "--s", "2", "--k", "3", "--out", s(&out)],
        "nan.csv:2: field 2: NaN is not a finite number",
        &out,
    );
    let inf = w("inf.csv", "1,inf,3\n");
    fails(
        &["flyhash", "hash", "--input", s(&inf), "--m", "10", "--s", "2", "--k", "3", "--out", s(&out)],
        "not a finite number",
        &out,
    );
    let ragged = w("ragged.csv", "1,2,3\n4,5\n");
    fails(
        &["flyhash", "hash", "--input", s(&ragged), "--m", "10", "--s", "2", "--k", "3", "--out", s(&out)],
        "ragged.csv:2: expected 3 fields, found 2",
        &out,
    );
    let ok = w("ok.csv", "1,2,3\n4,5,6\n");
    fails(
        &["flyhash", "hash", "--input", s(&ok), "--m", "10", "--s", "4", "--k", "3", "--out", s(&out)],
        "1 <= s <= d",
        &out,
    );
    fails(
        &["flyhash", "hash", "--input", s(&ok), "--m", "10", "--s", "2", "--k", "11", "--out", s(&out)],
        "1 <= k <= m",
        &out,
    );
    let proj = w("proj.csv", "0,1\n1,3\n");
    fails(
        &["flyhash", "hash", "--input", s(&ok), "--projection", s(&proj), "--k", "1", "--out", s(&out)],
        "index 3 is outside the input dimension 3",
        &out,
    );
    let unsorted = w("unsorted.csv", "1,0\n");
    fails(
        &["flyhash", "hash", "--input", s(&ok), "--projection", s(&unsorted), "--k", "1", "--out", s(&out)],
        "distinct and ascending",
        &out,
    );
    let idx = w("bad.idx", "\x00\x00\x08\x01\x00\x00\x00\x09abc");
    fails(
        &["flyhash", "hash", "--input", s(&idx), "--m", "10", "--s", "1", "--k", "3", "--out", s(&out)],
        "IDX data is 3 bytes, dimensions say 9",
        &out,
    );
    let npy = w("bad.npy", "\x7fELF");
    fails(
        &["flyhash", "hash", "--input", s(&npy), "--m", "10", "--s", "1", "--k", "3", "--out", s(&out)],
        "not an NPY file",
        &out,
    );
    let empty = w("empty.csv", "");
    fails(
        &["flyhash", "hash", "--input", s(&empty), "--m", "10", "--s", "1", "--k", "3", "--out", s(&out)],
        "no data",
        &out,
    );
    let huge = ["flyhash", "hash", "--input", s(&ok), "--m", "4000000000", "--s", "3", "--k", "3", "--out", s(&out)];
    fails(&huge, "GiB", &out);
    // Search: truncated code files and mismatched code lengths.
    let codes = d.path().join("c.bin");
    nb().args(["flyhash", "hash", "--input", s(&ok), "--m", "10", "--s", "2", "--k", "3", "--out", s(&codes)])
        .assert()
        .success();
    let codes2 = d.path().join("c2.bin");
    nb().args(["flyhash", "hash", "--input", s(&ok), "--m", "20", "--s", "2", "--k", "3", "--out", s(&codes2)])
        .assert()
        .success();
    let bytes = std::fs::read(&codes).unwrap();
    let cut = w("cut.bin", "");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let sout = d.path().join("s.csv");
    fails(
        &["flyhash", "search", "--db", s(&cut), "--queries", s(&codes), "--out", s(&sout)],
        "truncated or corrupt code file",
        &sout,
    );
    fails(
        &["flyhash", "search", "--db", s(&codes), "--queries", s(&codes2), "--out", s(&sout)],
        "10 bits but queries have 20",
        &sout,
    );
}

#[test]
fn search_matches_a_brute_force_with_index_ties() {
    let x = data::csv(&tied_csv(300, 20, 5), "x").unwrap();
    let p = FlyParams::new(20, 128, 3, 10, 2).unwrap();
    let codes = cpu::hash(&p, &cpu::projection(&p), &x, cpu::Wta::Exact);
    let w = p.code_words();
    let q = &codes[..10 * w];
    let got = search::top_r(&codes, q, w, 25);
    for (qi, row) in got.iter().enumerate() {
        let mut all: Vec<(u32, u32)> = (0..300)
            .map(|j| (neurobits_core::flyhash::hamming(&codes[j * w..(j + 1) * w], &q[qi * w..(qi + 1) * w]), j as u32))
            .collect();
        all.sort();
        let want: Vec<(u32, u32)> = all[..25].iter().map(|&(d, j)| (j, d)).collect();
        assert_eq!(row, &want);
    }
}

/// Every instruction-set version of the search gives the portable version's answer, on code
/// lengths with a partial 512-bit chunk (5, 13 words) and without (16), with a partial block of
/// queries (19 = 2·8 + 3) and database tiles (8 MiB of distances per task split 70 000 codes).
#[test]
fn every_simd_search_path_equals_the_portable_one() {
    use neurobits::device::{simd_detected, Simd};
    for (words, n) in [(5usize, 1000usize), (13, 700), (16, 70_000)] {
        let db: Vec<u64> = (0..(n * words) as u64).map(|i| draw(7, i) & draw(8, i)).collect();
        let q: Vec<u64> = (0..(19 * words) as u64).map(|i| draw(9, i) & draw(10, i)).collect();
        let want = search::top_r_on(Simd::Portable, &db, &q, words, 40);
        for (qi, row) in want.iter().enumerate() {
            let d = |j: usize| {
                neurobits_core::flyhash::hamming(&db[j * words..(j + 1) * words], &q[qi * words..(qi + 1) * words])
            };
            assert!(row.iter().all(|&(j, dist)| d(j as usize) == dist));
        }
        for level in [Simd::Avx2, Simd::Avx512] {
            if level > simd_detected() {
                eprintln!("this CPU lacks {level:?}: that path is not run here");
                continue;
            }
            assert_eq!(search::top_r_on(level, &db, &q, words, 40), want, "{level:?}, {words} words");
        }
    }
}

/// The sixteen-lane CPU hash, on every instruction set, equals the one-input rule of the core
/// (activation, then the exact radix WTA) input by input — on tied integer inputs and on a batch
/// that is not a multiple of sixteen.
#[test]
fn batched_cpu_hash_equals_the_one_input_rule_on_every_simd_level() {
    use neurobits::device::{simd_detected, Simd};
    use neurobits_core::flyhash::{activation, sort_key, wta_pack};
    for (rows, d, m, s, k) in [(37usize, 20u32, 128u32, 3u32, 10u32), (21, 64, 1000, 9, 50)] {
        let x = data::csv(&tied_csv(rows, d as usize, 3), "x").unwrap();
        let p = FlyParams::new(d, m, s, k, 4).unwrap();
        let proj = cpu::projection(&p);
        let w = p.code_words();
        let mut want = vec![0u64; rows * w];
        for (i, code) in want.chunks_mut(w).enumerate() {
            let act: Vec<f32> = proj.chunks(s as usize).map(|r| activation(r, x.row(i))).collect();
            wta_pack(m as usize, k as usize, |r| sort_key(act[r]), &mut [0; 256], code);
        }
        for level in [Simd::Portable, Simd::Avx2, Simd::Avx512] {
            if level > simd_detected() {
                eprintln!("this CPU lacks {level:?}: that path is not run here");
                continue;
            }
            assert_eq!(cpu::hash_on(level, &p, &proj, &x, cpu::Wta::Exact), want, "{level:?}");
        }
    }
}

#[test]
fn fashion_mnist_is_readable() {
    let dir = Path::new(data::FASHION_MNIST);
    if !dir.join("t10k-images-idx3-ubyte.gz").exists() {
        assert!(
            std::env::var_os("NEUROBITS_SKIP_DATA").is_some(),
            "Fashion-MNIST missing: `make setup` installs dataset-fashion-mnist (or set NEUROBITS_SKIP_DATA=1 to skip)"
        );
        eprintln!("NEUROBITS_SKIP_DATA set: skipped");
        return;
    }
    let t = data::read(&dir.join("t10k-images-idx3-ubyte.gz")).unwrap();
    assert_eq!((t.rows, t.cols), (10_000, 784));
    assert!(t.data.iter().all(|&v| (0.0..=255.0).contains(&v)));
    let l = data::read(&dir.join("t10k-labels-idx1-ubyte.gz")).unwrap();
    assert_eq!((l.rows, l.cols), (10_000, 1));
}
