//! The model verbs from the command line: `flynn fit|predict` agrees with the `flyhash flynn`
//! experiment, an index built from half the data plus `add` of the rest answers as one built from
//! all of it, a cortical model evaluated twice gives the same figures, `ocnn cluster` gives the
//! same labels from a header CSV, an NPY file and standard input, and every bad model file ends
//! with exit code 2 and one line naming it.

use assert_cmd::Command;
use std::io::Read;
use std::path::{Path, PathBuf};

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn run(args: &[&str]) -> String {
    let out = nb().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The first `n` items of a gzipped IDX file, written as a plain IDX file.
fn idx_head(src: &Path, n: u32, dst: &Path) {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(src).unwrap()).read_to_end(&mut raw).unwrap();
    let nd = raw[3] as usize;
    let per: usize =
        (1..nd).map(|i| u32::from_be_bytes(raw[4 + 4 * i..8 + 4 * i].try_into().unwrap()) as usize).product();
    raw[4..8].copy_from_slice(&n.to_be_bytes());
    raw.truncate(4 + 4 * nd + n as usize * per);
    std::fs::write(dst, raw).unwrap();
}

const FMNIST: &str = "/usr/share/datasets/fashion-mnist";

#[test]
fn flynn_fit_then_predict_equals_the_experiment() {
    let d = Path::new(FMNIST);
    assert!(d.join("train-images-idx3-ubyte.gz").exists(), "Fashion-MNIST is missing: run `make setup`");
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n);
    idx_head(&d.join("train-images-idx3-ubyte.gz"), 3000, &p("train-images-idx3-ubyte"));
    idx_head(&d.join("train-labels-idx1-ubyte.gz"), 3000, &p("train-labels-idx1-ubyte"));
    idx_head(&d.join("t10k-images-idx3-ubyte.gz"), 500, &p("t10k-images-idx3-ubyte"));
    idx_head(&d.join("t10k-labels-idx1-ubyte.gz"), 500, &p("t10k-labels-idx1-ubyte"));
    let s = |n: &str| p(n).display().to_string();
    let exp = run(&[
        "flyhash",
        "flynn",
        "--train",
        &s("train-images-idx3-ubyte"),
        "--test",
        &s("t10k-images-idx3-ubyte"),
        "--code-bits",
        "2048",
        "--no-knn",
    ]);
    let line = exp.lines().find(|l| l.starts_with("FlyNN, cpu")).unwrap();
    let exp_acc: f64 = line.split_whitespace().rev().nth(2).unwrap().parse().unwrap();
    run(&[
        "flynn",
        "fit",
        "-i",
        &s("train-images-idx3-ubyte"),
        "--labels",
        &s("train-labels-idx1-ubyte"),
        "--code-bits",
        "2048",
        "-o",
        &s("m.nbm"),
    ]);
    let out = run(&[
        "flynn",
        "predict",
        "--model",
        &s("m.nbm"),
        "-i",
        &s("t10k-images-idx3-ubyte"),
        "--labels",
        &s("t10k-labels-idx1-ubyte"),
        "-o",
        &s("pred.npy"),
    ]);
    let acc: f64 = out.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(format!("{acc:.4}"), format!("{exp_acc:.4}"), "{out} vs {line}");
    assert!(acc > 0.5, "accuracy {acc}");
    // The predictions: an int64 NPY of one label per test vector, the same as the text output.
    let y: Vec<i64> = npyz::NpyFile::new(&std::fs::read(p("pred.npy")).unwrap()[..]).unwrap().into_vec().unwrap();
    run(&["flynn", "predict", "--model", &s("m.nbm"), "-i", &s("t10k-images-idx3-ubyte"), "-o", &s("pred.txt")]);
    let text: Vec<i64> = std::fs::read_to_string(p("pred.txt")).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!((y.len(), &y), (500, &text));
}

fn csv(rows: &[Vec<f32>]) -> String {
    rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",") + "\n").collect()
}

#[test]
fn an_index_built_from_half_plus_add_answers_as_one_built_from_all() {
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n).display().to_string();
    let rows: Vec<Vec<f32>> = (0..120).map(|r| (0..24).map(|c| ((r * 7 + c * 13) % 29) as f32).collect()).collect();
    std::fs::write(p("all.csv"), csv(&rows)).unwrap();
    std::fs::write(p("a.csv"), csv(&rows[..70])).unwrap();
    std::fs::write(p("b.csv"), csv(&rows[70..])).unwrap();
    std::fs::write(p("q.csv"), csv(&rows[..15])).unwrap();
    let opts = ["--code-bits", "256", "--winners", "16"];
    run(&[&["flyhash", "index", "build", "-i", &p("all.csv"), "-o", &p("all.nbi")][..], &opts].concat());
    run(&[&["flyhash", "index", "build", "-i", &p("a.csv"), "-o", &p("half.nbi")][..], &opts].concat());
    run(&["flyhash", "index", "add", "--index", &p("half.nbi"), "-i", &p("b.csv")]);
    run(&["flyhash", "index", "search", "--index", &p("all.nbi"), "-i", &p("q.csv"), "-k", "5", "-o", &p("r1.csv")]);
    run(&["flyhash", "index", "search", "--index", &p("half.nbi"), "-i", &p("q.csv"), "-k", "5", "-o", &p("r2.csv")]);
    let (r1, r2) = (std::fs::read_to_string(p("r1.csv")).unwrap(), std::fs::read_to_string(p("r2.csv")).unwrap());
    assert_eq!(r1, r2);
    assert_eq!(r1.lines().count(), 1 + 15 * 5);
    assert!(r1.lines().nth(1).unwrap().starts_with("0,0,"), "{r1}");
    // A query of another width is refused with one line.
    std::fs::write(p("bad.csv"), "1,2,3\n").unwrap();
    let out = nb()
        .args(["flyhash", "index", "search", "--index", &p("all.nbi"), "-i", &p("bad.csv"), "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().count() == 1 && err.contains("3 features per row") && err.contains("fitted on 24"), "{err}");
}

#[test]
fn a_cortical_model_fitted_once_predicts_the_same_twice() {
    let digits = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/digits/digits.csv.gz");
    assert!(digits.exists(), "the digits are missing: run `make setup`");
    let t = tempfile::tempdir().unwrap();
    let m = t.path().join("c.nbm").display().to_string();
    let d = digits.display().to_string();
    run(&["cortical", "fit", "-i", &d, "--per-class", "1", "--epochs", "10", "-o", &m]);
    let args = [
        "cortical",
        "predict",
        "--model",
        &m,
        "-i",
        &d,
        "--skip-per-class",
        "1",
        "--per-class",
        "20",
        "-o",
        "/dev/null",
    ];
    let (a, b) = (run(&args), run(&args));
    assert_eq!(a, b);
    assert!(a.starts_with("accuracy ") && a.contains("on 200 images"), "{a}");
}

#[test]
fn ocnn_clusters_a_header_csv_an_npy_file_and_standard_input_alike() {
    let lsun = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/fcps/Lsun.data");
    assert!(lsun.exists(), "FCPS is missing: run `make setup`");
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n).display().to_string();
    let text = std::fs::read_to_string(&lsun).unwrap();
    let pts: Vec<Vec<f64>> =
        text.lines().skip(3).map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect()).collect();
    let header: String =
        std::iter::once("x,y\n".to_string()).chain(pts.iter().map(|r| format!("{},{}\n", r[0], r[1]))).collect();
    std::fs::write(p("lsun.csv"), &header).unwrap();
    let flat: Vec<f64> = pts.iter().flatten().copied().collect();
    let mut npy = Vec::new();
    {
        use npyz::WriterBuilder;
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[pts.len() as u64, 2])
            .writer(&mut npy)
            .begin_nd()
            .unwrap();
        w.extend(flat.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(p("lsun.npy"), npy).unwrap();
    let cluster = |input: &str, out: &str, stdin: Option<&str>| {
        let mut c = nb();
        c.args(["ocnn", "cluster", "-i", input, "-o", out, "--iters", "300"]);
        if let Some(s) = stdin {
            c.write_stdin(s.to_string());
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{input}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out).unwrap()
    };
    let from_csv = cluster(&p("lsun.csv"), &p("l1.txt"), None);
    let from_npy = cluster(&p("lsun.npy"), &p("l2.txt"), None);
    let from_stdin = cluster("-", &p("l3.txt"), Some(&header));
    // The raw FCPS file with its 3 rows of debris skipped.
    let mut c = nb();
    c.args([
        "ocnn",
        "cluster",
        "-i",
        &lsun.display().to_string(),
        "--skip-rows",
        "3",
        "-o",
        &p("l4.txt"),
        "--iters",
        "300",
    ]);
    assert!(c.output().unwrap().status.success());
    assert_eq!(from_csv.lines().count(), 400);
    assert_eq!(from_csv, from_npy);
    assert_eq!(from_csv, from_stdin);
    assert_eq!(from_csv, std::fs::read_to_string(p("l4.txt")).unwrap());
}

#[test]
fn bad_model_files_exit_2_with_one_line_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n).display().to_string();
    std::fs::write(p("x.csv"), "1,2,3,4\n4,3,2,1\n2,2,2,2\n").unwrap();
    std::fs::write(p("y.csv"), "0\n1\n0\n").unwrap();
    run(&["flynn", "fit", "-i", &p("x.csv"), "--labels", &p("y.csv"), "-o", &p("m.nbm")]);
    run(&[
        "ocnn",
        "cluster",
        "-i",
        &p("x.csv"),
        "-o",
        &p("l.txt"),
        "--iters",
        "50",
        "--scale",
        "1",
        "--model",
        &p("o.nbm"),
    ]);
    let good = std::fs::read(p("m.nbm")).unwrap();
    let mut flipped = good.clone();
    let at = good.len() - 40;
    flipped[at] ^= 0x10;
    let mut newer = good.clone();
    newer[8] = 2;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        ("flipped", flipped, "checksum mismatch"),
        ("newer", newer, "version 2 is newer"),
        ("text", b"not a model\n".to_vec(), "bad magic"),
        ("ocnn", std::fs::read(p("o.nbm")).unwrap(), "holds a ocnn model, not a flynn model"),
    ];
    for (name, bytes, want) in cases {
        let f = p(&format!("{name}.nbm"));
        std::fs::write(&f, bytes).unwrap();
        let out =
            nb().args(["flynn", "predict", "--model", &f, "-i", &p("x.csv"), "-o", &p("pred.txt")]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.lines().count() == 1 && err.contains(&f) && err.contains(want), "{name}: {err}");
        assert!(!Path::new(&p("pred.txt")).exists(), "{name}: no output after a refusal");
    }
}
