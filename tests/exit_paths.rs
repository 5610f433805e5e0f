//! Every exit path (issue 31): bad input is exit code 2, a runtime or I/O failure 1, a bug 101;
//! each is exactly one line on standard error naming the file or option and the value seen,
//! never a panic message.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Output, Stdio};

fn nb() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("neurobits"));
    c.stdin(Stdio::null());
    c
}

/// Exit `code`, exactly one `error:` line holding every needle, no panic text.
fn one_line(o: &Output, code: i32, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    for n in needles {
        assert!(err.contains(n), "'{n}' not in {err}");
    }
}

fn full() -> std::fs::File {
    std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap()
}

#[test]
fn help_and_version_to_a_full_device_exit_1() {
    for arg in ["--help", "--version", "help"] {
        let o = nb().arg(arg).stdout(full()).output().unwrap();
        one_line(&o, 1, &["standard output", "No space left"]);
    }
    // Still 0 when the write works.
    assert!(nb().arg("--help").output().unwrap().status.success());
}

#[test]
fn a_panic_is_one_line_and_exit_101() {
    let o = nb().arg("--help").env("NEUROBITS_TEST_PANIC", "1").output().unwrap();
    one_line(&o, 101, &["internal error (a bug)", "NEUROBITS_TEST_PANIC", "src/main.rs:"]);
}

#[test]
fn a_missing_input_is_bad_input_and_a_failed_write_an_io_failure() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.csv");
    let o = nb().args(["ocnn", "cluster", "-i", "/nonexistent/p.csv", "-o"]).arg(&out).output().unwrap();
    one_line(&o, 2, &["/nonexistent/p.csv", "No such file"]);
    // A table to standard output on a full device: the system failed, exit 1.
    let p = d.path().join("p.csv");
    std::fs::write(&p, "0,0\n0,1\n5,5\n5,6\n").unwrap();
    let o = nb().args(["ocnn", "cluster", "-i"]).arg(&p).args(["-o", "-"]).stdout(full()).output().unwrap();
    one_line(&o, 1, &["standard output"]);
}

/// `-o -` on a device that refuses every write (`/dev/full`) is refused before the work: a run
/// of a million iterations ends at once, exit 1, one line, no file made. Standard output that
/// carries no data (`-q`, outputs in files) is not probed: such a run still works.
#[test]
fn a_data_output_on_a_full_device_is_refused_before_the_work() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.csv");
    // 40 points of two groups: a million iterations take over 10 s (release build).
    let pts: String = (0..40).map(|i| format!("{},{}\n", (i % 2) * 10 + i % 7, (i % 2) * 10 + i % 5)).collect();
    std::fs::write(&p, pts).unwrap();
    let t = std::time::Instant::now();
    let o = nb()
        .current_dir(d.path())
        .args(["ocnn", "cluster", "--iters", "1000000", "-i"])
        .arg(&p)
        .args(["-o", "-", "--json", "l.json"])
        .stdout(full())
        .output()
        .unwrap();
    one_line(&o, 1, &["standard output", "No space left"]);
    assert!(t.elapsed() < std::time::Duration::from_secs(5), "refused after {:?}: not before the work", t.elapsed());
    assert!(!d.path().join("l.json").exists(), "no output made");
    // Files only, quiet: standard output is never written, so /dev/full does not matter.
    let mut c = nb();
    c.args(["-q", "ocnn", "cluster", "--iters", "30", "-i"]).arg(&p).arg("-o").arg(d.path().join("l.csv"));
    let o = c.stdout(full()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.path().join("l.csv").exists());
    // /dev/null takes the data as ever.
    let o =
        nb().args(["ocnn", "cluster", "--iters", "30", "-i"]).arg(&p).args(["-o", "-"]).stdout(Stdio::null()).output();
    assert!(o.unwrap().status.success());
}

#[test]
fn arguments_that_are_not_utf8_are_refused_in_one_line() {
    let bad = || OsString::from_vec(b"\xff".to_vec());
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.csv");
    // As a path: any bytes are a path; this one does not exist.
    let o = nb().args(["ocnn", "cluster", "-i"]).arg(bad()).arg("-o").arg(&out).output().unwrap();
    one_line(&o, 2, &["\u{fffd}", "No such file"]);
    // As a number, in several commands: clap refuses; the line names the option.
    for args in [
        vec!["flyhash", "eval", "--neighbours"],
        vec!["ocnn", "bench", "--sizes"],
        vec!["gbnn", "generate", "--clusters"],
        vec!["ocnn", "cluster", "--threads"],
    ] {
        let o = nb().args(&args).arg(bad()).args(["-o", "x"]).output().unwrap();
        one_line(&o, 2, &["not UTF-8", args.last().unwrap(), "\\xFF"]);
    }
    // The deprecated-spelling check of `fpga` reads every argument (`env::args` panicked here).
    let mut path = bad();
    path.push("/r.json");
    let o = nb()
        .args(["fpga", "--clusters", "3", "--neurons", "3", "--messages", "4", "--probes", "4", "--erased", "1"])
        .arg("--out")
        .arg(path)
        .output()
        .unwrap();
    one_line(&o, 2, &["r.json"]);
}

#[test]
fn thread_counts_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.csv");
    std::fs::write(&p, "0,0\n0,1\n5,5\n5,6\n").unwrap();
    let max = neurobits::device::max_cpu_threads();
    let run = |env: Option<&str>, threads: Option<&str>| {
        let mut c = nb();
        c.args(["ocnn", "cluster", "-i"]).arg(&p).arg("-o").arg(d.path().join("o.csv"));
        if let Some(n) = env {
            c.env("RAYON_NUM_THREADS", n);
        }
        if let Some(n) = threads {
            c.args(["--threads", n]);
        }
        let start = std::time::Instant::now();
        let o = c.output().unwrap();
        assert!(start.elapsed().as_secs() < 20, "too slow: {:?}", start.elapsed());
        o
    };
    for (env, threads, what) in
        [(Some("100000"), None, "RAYON_NUM_THREADS = 100000"), (None, Some("4096"), "--threads = 4096")]
    {
        let o = run(env, threads);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains(&format!("warning: {what} is more than {max}")), "{err}");
    }
    // Within the bound: no warning.
    let o = run(Some("2"), None);
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// An NPY file whose header nests `open`…`close` `depth` times at `field`.
fn deep_npy(depth: usize, descr: bool) -> Vec<u8> {
    let nest = |inner: &str, open: &str, close: &str| format!("{}{inner}{}", open.repeat(depth), close.repeat(depth));
    let mut h = if descr {
        format!("{{'descr': {}, 'fortran_order': False, 'shape': (2, 2), }}", nest("'<f4'", "[", "]"))
    } else {
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", nest("", "(", ")"))
    };
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    b.extend([0u8; 16]);
    b
}

#[test]
fn endless_devices_and_deep_headers_end_quickly_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.csv");
    let quick = |input: &std::path::Path, needles: &[&str]| {
        let start = std::time::Instant::now();
        let o = nb().args(["ocnn", "cluster", "-i"]).arg(input).arg("-o").arg(&out).output().unwrap();
        assert!(start.elapsed().as_secs() < 10, "{}: {:?}", input.display(), start.elapsed());
        one_line(&o, 2, needles);
    };
    quick("/dev/zero".as_ref(), &["/dev/zero", "byte 1 is NUL"]);
    quick("/dev/urandom".as_ref(), &["/dev/urandom", "is NUL"]);
    for (depth, descr) in [(300, true), (5000, false), (33, true)] {
        let p = d.path().join(format!("deep{depth}.npy"));
        std::fs::write(&p, deep_npy(depth, descr)).unwrap();
        quick(&p, &[&format!("deep{depth}.npy"), "nests brackets more than 32"]);
    }
    // As deep as numpy goes is read as before (here: a dtype numpy nests, refused for its kind).
    let p = d.path().join("deep3.npy");
    std::fs::write(&p, deep_npy(3, true)).unwrap();
    let o = nb().args(["ocnn", "cluster", "-i"]).arg(&p).arg("-o").arg(&out).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("nests"), "{}", String::from_utf8_lossy(&o.stderr));
    // Standard input that never ends: the same refusal, from its first bytes.
    let o = nb()
        .args(["ocnn", "cluster", "-i", "-", "-o"])
        .arg(&out)
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    one_line(&o, 2, &["standard input", "is NUL"]);
}
