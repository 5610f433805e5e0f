//! `flynn export`: the core's read-only classifier over the exported blob's sections predicts
//! what the fitted model predicts, and bad input is one line, exit 2, nothing written.

use assert_cmd::Command;
use neurobits::flyhash::classifier::{FlyNN, FlyNNConfig};
use neurobits::flyhash::cpu::Wta;
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::export::firmware_export;
use neurobits::model::Model;
use neurobits_core::flyhash::{FlyParams, FlynnView};

/// Deterministic rows of `d` values, three classes (labels 0, 10, 20): class c adds 9.5 to the
/// c-th third of the inputs.
fn data(n: usize, d: usize) -> (Matrix, Vec<i64>) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in 0..n {
        let c = i % 3;
        x.extend((0..d).map(|j| ((j * 7 + i * 13) % 5) as f32 + if j / (d / 3) == c { 9.5 } else { 0.0 }));
        y.push(c as i64 * 10);
    }
    (Matrix { rows: n, cols: d, data: x }, y)
}

fn section<T: Copy>(blob: &[u8], off: usize, n: usize, f: impl Fn(&[u8]) -> T) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    blob[off..off + n * size].chunks(size).map(f).collect()
}

fn constant(module: &str, name: &str) -> usize {
    let line = module.lines().find(|l| l.starts_with(&format!("pub const {name}: usize = "))).unwrap();
    line.rsplit(' ').next().unwrap().trim_end_matches(';').parse().unwrap()
}

#[test]
fn the_view_over_the_exported_blob_predicts_what_the_model_predicts() {
    let (x, y) = data(90, 24);
    let mut m = FlyNN::new(FlyNNConfig { centre: false, ..Default::default() });
    m.config.hash.code_bits = Some(256);
    m.config.hash.winners = Some(8);
    m.fit(&x, &y).unwrap();
    let e = firmware_export(&m, "m", "flynn.bin").unwrap();
    let p: FlyParams = m.hasher().unwrap().params().unwrap();
    let (mm, classes) = (p.m as usize, m.classes().unwrap().len());
    let weights =
        section(&e.blob, 0, constant(&e.module, "WEIGHT_ENTRIES"), |b| u64::from_le_bytes(b.try_into().unwrap()));
    let proj = section(&e.blob, constant(&e.module, "PROJECTION_OFFSET"), mm * p.s as usize, |b| {
        u32::from_le_bytes(b.try_into().unwrap())
    });
    let counts = section(&e.blob, constant(&e.module, "COUNTS_OFFSET"), classes * mm, |b| {
        u16::from_le_bytes(b.try_into().unwrap())
    });
    assert_eq!(constant(&e.module, "BLOB_BYTES"), e.blob.len());
    let view = FlynnView::new(p, &proj, &counts, &weights, classes).unwrap();
    let (test, _) = data(40, 24);
    let host = m.predict(&test).unwrap();
    let (mut keys, mut cand, mut code) = (vec![0u32; mm], vec![0u32; mm], vec![0u64; p.code_words()]);
    for (row, want) in test.data.chunks(24).zip(&host) {
        let c = view.predict(row, &mut keys, &mut cand, &mut [0; 256], &mut code).unwrap();
        assert_eq!(m.classes().unwrap()[c], *want);
    }
    // A table cut before the largest count is refused.
    assert!(FlynnView::new(p, &proj, &counts, &weights[..weights.len() - 1], classes).is_err());
}

#[test]
fn flynn_export_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (x, y) = data(30, 12);
    let mut m = FlyNN::new(FlyNNConfig { centre: false, ..Default::default() });
    m.config.hash.wta = Wta::Bisect64;
    m.fit(&x, &y).unwrap();
    let bisect = dir.path().join("bisect.nbm");
    m.save(&bisect).unwrap();
    // The default model centres its inputs, which the firmware does not do yet.
    let mut c = FlyNN::new(FlyNNConfig::default());
    c.fit(&x, &y).unwrap();
    let centred = dir.path().join("centred.nbm");
    c.save(&centred).unwrap();
    let gbnn = dir.path().join("g.nbm");
    let mut g = neurobits::gbnn::model::Gbnn::new(Default::default());
    g.fit(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    g.save(&gbnn).unwrap();
    let out = dir.path().join("flynn.bin");
    for (model, o, needle) in [
        (&bisect, out.to_str().unwrap(), "--wta exact"),
        (&centred, out.to_str().unwrap(), "--centre false"),
        (&gbnn, out.to_str().unwrap(), "g.nbm"),
        (&bisect, "flynn.rs", "names the module"),
    ] {
        let r = Command::cargo_bin("neurobits")
            .unwrap()
            .args(["flynn", "export", "--model", model.to_str().unwrap(), "-o", o])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "'{needle}' not in {err}");
        assert!(!out.exists() && !dir.path().join("flynn.rs").exists());
    }
}
