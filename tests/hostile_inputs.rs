//! Hostile inputs end in an error, never a panic: the crashes the fuzzers found (kept in
//! tests/data/fuzz-crashes/) and hand-made cases of each class (sizes that overflow, headers that
//! end early, padding bits set).

use neurobits::flyhash::data::{idx, npy};
use neurobits::io::{codes, netfile, projection};

fn crash(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/fuzz-crashes/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn fuzz_crashes_are_errors() {
    assert!(idx(&crash("idx-dims-overflow"), "x").is_err());
    assert!(npy(&crash("npy-shape-empty"), "x").is_err());
    // npyz allocates the header length a file claims (2.4 GB here): checked against the size first.
    assert!(npy(&crash("npy-header-length-oom"), "x").unwrap_err().to_string().contains("truncated"));
}

#[test]
fn idx_dimensions_that_overflow_are_refused() {
    // 3 dimensions of 2^32 − 1: the element count overflows 64 bits.
    let mut b = vec![0, 0, 0x08, 3];
    b.extend([0xff; 12]);
    let e = idx(&b, "x").unwrap_err().to_string();
    assert!(e.contains("absurd"), "{e}");
    // Count fits but count × element size does not.
    let mut b = vec![0, 0, 0x0E, 2];
    b.extend(0x8000_0000u32.to_be_bytes());
    b.extend(0x8000_0000u32.to_be_bytes());
    assert!(idx(&b, "x").is_err());
}

#[test]
fn npy_headers_that_end_early_are_refused() {
    for header in [
        "{'descr': '<f4', 'fortran_order': False, 'shape': ), }",
        "{'descr'",
        "{'shape'",
        "{'shape': (99999999999999999999,), 'descr': '<f4', 'fortran_order': False}",
    ] {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((header.len() as u16).to_le_bytes());
        b.extend(header.as_bytes());
        assert!(npy(&b, "x").is_err(), "{header}");
    }
}

#[test]
fn code_files_with_padding_bits_or_bad_sizes_are_refused() {
    let file = |m: u32, n: u64, words: &[u64]| {
        let mut b = b"NBFLYHSH".to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend(m.to_le_bytes());
        b.extend(n.to_le_bytes());
        words.iter().for_each(|w| b.extend(w.to_le_bytes()));
        b
    };
    assert!(codes::decode(&file(70, 1, &[1, 1]), "x").is_ok());
    assert!(codes::decode(&file(70, 1, &[1, 1 << 6]), "x").is_err(), "bit 70 is padding");
    assert!(codes::decode(&file(70, u64::MAX, &[1, 1]), "x").is_err(), "n × words overflows");
    assert!(codes::decode(&file(0, 0, &[]), "x").is_err(), "m = 0");
    assert!(codes::decode(&file(64, 1, &[1])[..20], "x").is_err(), "truncated header");
}

#[test]
fn projection_rows_must_be_ascending_and_in_range() {
    assert!(projection::parse("0,1\n", "x", 2).is_ok());
    for bad in ["1,0\n", "0,2\n", "0,0\n", "0\n0,1\n", "", "a\n", "4294967296\n"] {
        assert!(projection::parse(bad, "x", 2).is_err(), "{bad:?}");
    }
}

#[test]
fn network_files_cut_anywhere_are_refused() {
    let mut net = neurobits_core::gbnn::Network::new(3, 70).unwrap();
    net.store(&[1, 2, 69]).unwrap();
    let mut b = Vec::new();
    netfile::encode(&mut b, &net).unwrap();
    assert_eq!(netfile::decode(&b[..], b.len() as u64, "x").unwrap(), net);
    for cut in [0, 7, 39, 40, 41, b.len() - 1] {
        assert!(netfile::decode(&b[..cut], cut as u64, "x").is_err(), "cut at {cut}");
    }
    // A size that claims more than the bytes there: an error, not a hang or an abort.
    assert!(netfile::decode(&b[..], u64::MAX, "x").is_err());
    let mut flipped = b.clone();
    flipped[100] ^= 1;
    assert!(netfile::decode(&flipped[..], b.len() as u64, "x").is_err(), "checksum");
}

// ---- The command line: each class of defect ends in one line and exit code 2 (or the documented
// behaviour), with no file outside the target changed and no temporary file left.

use assert_cmd::Command;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

/// Exit 2 and exactly one `error:` line on stderr mentioning `needle`.
fn fails(args: &[&str], needle: &str) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: '{needle}' not in {err}");
}

/// No temporary file of ours in `dir`.
fn no_leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(!n.starts_with(".neurobits-") && !n.starts_with(".tmp"), "leftover {n} in {}", dir.display());
    }
}

fn network(dir: &Path) -> String {
    let msgs = dir.join("m.csv");
    std::fs::write(&msgs, "0,0,0\n").unwrap();
    let net = dir.join("net.nb");
    nb().args(["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages"])
        .arg(&msgs)
        .arg("--out")
        .arg(&net)
        .assert()
        .success();
    net.to_str().unwrap().to_string()
}

#[test]
fn huge_gamma_ranks_as_the_largest_meaningful_one() {
    let d = tempfile::tempdir().unwrap();
    let net = network(d.path());
    std::fs::write(d.path().join("p.csv"), "0,0,?\n").unwrap();
    let p = d.path().join("p.csv");
    let run = |gamma: &str| {
        let out = d.path().join(format!("r{gamma}.csv"));
        nb().args(["gbnn", "retrieve", "--net", &net, "--rule", "sum-of-sum", "--gamma", gamma, "--probes"])
            .arg(&p)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out).unwrap()
    };
    let small = run("2");
    assert_eq!(small, run("4294967294"), "a u32 score used to wrap and lose the known symbols");
    assert_eq!(small, run("4294967295"));
    // The FPGA report sizes its score registers for the γ it effectively uses.
    let json = d.path().join("f.json");
    nb().args([
        "fpga",
        "--clusters",
        "3",
        "--neurons",
        "3",
        "--messages",
        "4",
        "--probes",
        "4",
        "--erased",
        "1",
        "--gamma",
        "4294967294",
        "--out",
    ])
    .arg(&json)
    .assert()
    .success();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert!(v["resources_formula"]["score_bits"].as_u64().unwrap() <= 4, "{}", v["resources_formula"]);
}

#[test]
fn sizes_that_cannot_fit_are_refused_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("gen");
    let o = out.to_str().unwrap();
    fails(
        &["gbnn", "generate", "--clusters", "8", "--neurons", "128", "--messages", "2305843009213693957", "--out", o],
        "free",
    );
    fails(
        &["gbnn", "generate", "--clusters", "8", "--neurons", "128", "--messages", "1000000000000", "--out", o],
        "free",
    );
    assert!(!out.exists(), "nothing is created for a refused request");
}

#[test]
fn nonsense_arguments_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().to_str().unwrap();
    fails(&["hwcost", "--probes", "0", "--out", o], "--probes");
    fails(&["hwcost", "--fpga-clock-mhz", "1e-310", "--out", o], "--fpga-clock-mhz");
    fails(&["fpga", "--clock-mhz", "inf"], "--clock-mhz");
    fails(&["flyhash", "eval", "--neighbours", "0", "--out", o], "--neighbours");
    fails(&["flyhash", "eval", "--queries", "0", "--out", o], "--queries");
    fails(&["flyhash", "eval", "--ks", "0", "--out", o], "--winners");
    fails(&["flyhash", "bench", "--config", "batch", "--max-exp", "40"], "--max-exp");
    fails(&["gbnn", "bench", "--repeats", "0"], "--repeats");
    fails(&["gbnn", "bench-gpus", "--probes", "0"], "--probes");
    fails(&["gbnn", "bench-gpus", "--stored", "0"], "--stored");
    fails(&["gbnn", "bench-gpus", "--gpus", "0"], "--gpus");
    fails(&["gbnn", "bench-gpus", "--clusters", "0"], "cluster");
    fails(&["gbnn", "bench-gpus", "--stored", "10", "--probes", "11"], "probes");
    fails(&["gbnn", "bench-gpus", "--erased", "33"], "erase");
    if neurobits_gpu_host::Gpu::count() == 0 {
        fails(&["gbnn", "bench-gpus", "--stored", "100", "--probes", "10"], "no CUDA GPU");
    }
    fails(&["gbnn", "experiment", "--scenario", "1", "--probes", "0", "--out", o], "--probes");
    let net = network(d.path());
    std::fs::write(d.path().join("p.csv"), "?,?,0\n").unwrap();
    let p = d.path().join("p.csv");
    fails(
        &[
            "gbnn",
            "retrieve",
            "--net",
            &net,
            "--rule",
            "sum-of-sum",
            "--max-iter",
            "4294967295",
            "--probes",
            p.to_str().unwrap(),
            "--out",
            o,
        ],
        "--max-iter",
    );
}

#[test]
fn outputs_keep_modes_write_through_links_and_spare_special_files() {
    let d = tempfile::tempdir().unwrap();
    let net = network(d.path());
    std::fs::write(d.path().join("p.csv"), "0,0,?\n").unwrap();
    let p = d.path().join("p.csv");
    let retrieve = |out: &Path| {
        nb().args(["gbnn", "retrieve", "--net", &net, "--rule", "joint", "--probes"])
            .arg(&p)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    // An existing file keeps its mode.
    let kept = d.path().join("kept.csv");
    std::fs::write(&kept, "old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(retrieve(&kept).status.success());
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o640);
    assert_ne!(std::fs::read_to_string(&kept).unwrap(), "old");
    // A new file honours the umask (the test process's, inherited).
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:").map(|v| u32::from_str_radix(v.trim(), 8).unwrap()))
        .unwrap();
    let fresh = d.path().join("fresh.csv");
    assert!(retrieve(&fresh).status.success());
    assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o666 & !umask);
    // A link is written through: it stays a link, its target gets the output.
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    std::fs::write(&kept, "old").unwrap();
    assert!(retrieve(&link).status.success());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_ne!(std::fs::read_to_string(&kept).unwrap(), "old");
    // A device node is written to, not replaced.
    assert!(retrieve(Path::new("/dev/null")).status.success());
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // `-` is standard output.
    let o = retrieve(Path::new("-"));
    assert!(o.status.success() && !o.stdout.is_empty());
    // A directory as the target: one line, exit 2, nothing left behind.
    let o = retrieve(d.path());
    assert_eq!(o.status.code(), Some(2));
    let o = retrieve(&d.path().join("newdir/"));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    no_leftovers(d.path());
}

#[test]
fn standard_output_errors_are_one_line_and_a_closed_pipe_ends_quietly() {
    // A full device: an I/O failure, exit 1 and one line, not a panic.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("neurobits"))
        .args(["fpga", "--clusters", "3", "--neurons", "3", "--messages", "4", "--probes", "4", "--erased", "1"])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("standard output") && !err.contains("panicked"), "{err}");
    // A closed pipe: the process ends by SIGPIPE, as `… | head -1` expects, never by a panic.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neurobits"))
        .args(["fpga", "--clusters", "3", "--neurons", "3", "--messages", "4", "--probes", "4", "--erased", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert!(o.status.code() != Some(101), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() || o.status.signal() == Some(13), "{:?}", o.status);
}

#[test]
fn an_interrupted_store_leaves_no_temporary_file() {
    // Every terminating signal a user, a terminal or a scheduler sends.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1, libc::SIGALRM] {
        let d = tempfile::tempdir().unwrap();
        // 200 messages of 32 × 2048: W is 512 MiB, a second or more to build and write.
        let msgs = d.path().join("m.csv");
        let line: String = (0..32).map(|i| (i * 61 % 2048).to_string()).collect::<Vec<_>>().join(",") + "\n";
        std::fs::write(&msgs, line.repeat(200)).unwrap();
        let out = d.path().join("net.nb");
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neurobits"))
            .args(["gbnn", "store", "--clusters", "32", "--neurons", "2048", "--messages"])
            .arg(&msgs)
            .arg("--out")
            .arg(&out)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        no_leftovers(d.path());
        // Either it was interrupted (no output) or it had already finished (a whole output).
        if !status.success() {
            assert!(!out.exists());
            assert_eq!(status.code(), Some(128 + sig), "signal {sig}: {status:?}");
        }
    }
}

/// The NPY and CSV variants users write: Fortran order, big-endian, half floats, small integers,
/// a CSV header row — all read as the same matrix.
#[test]
fn npy_and_csv_variants() {
    let npy_of = |descr: &str, fortran: bool, shape: &str, body: Vec<u8>| {
        let mut h = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((h.len() as u16).to_le_bytes());
        b.extend(h.as_bytes());
        b.extend(body);
        b
    };
    let want = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3, row-major
    let c_le: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
    let f_le: Vec<u8> = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let c_be: Vec<u8> = want.iter().flat_map(|v| v.to_be_bytes()).collect();
    let f16: Vec<u8> =
        [0x3c00u16, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600].iter().flat_map(|v| v.to_le_bytes()).collect();
    let i2: Vec<u8> = [1i16, 2, 3, 4, 5, 6].iter().flat_map(|v| v.to_be_bytes()).collect();
    for (what, b) in [
        ("<f4 C", npy_of("<f4", false, "(2, 3)", c_le)),
        ("<f4 Fortran", npy_of("<f4", true, "(2, 3)", f_le)),
        (">f4", npy_of(">f4", false, "(2, 3)", c_be)),
        ("<f2", npy_of("<f2", false, "(2, 3)", f16)),
        (">i2", npy_of(">i2", false, "(2, 3)", i2)),
    ] {
        let m = npy(&b, "x").unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!((m.rows, m.cols, &m.data[..]), (2, 3, &want[..]), "{what}");
    }
    let neg = npy_of("<i1", false, "(2,)", vec![0xff, 0x7f]);
    assert_eq!(npy(&neg, "x").unwrap().data, [-1.0, 127.0]);
    let m = neurobits::flyhash::data::csv("a,b,c\n1,2,3\n4,5,6\n", "x").unwrap();
    assert_eq!((m.rows, m.cols, &m.data[..]), (2, 3, &want[..]));
    assert!(neurobits::flyhash::data::csv("1,2,3\na,b,c\n", "x").is_err(), "a non-numeric row after data");
}
