//! The memory budget (`--max-memory`, `neurobits::budget`) and inputs/outputs that are not
//! regular files (named pipes): refusals are one line naming the option or file and the sizes,
//! exit code 2; a named pipe is waited for with a note, never silently.

use assert_cmd::Command;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

/// Exit 2 and exactly one `error:` line on stderr holding every one of `needles`.
fn refused(args: &[&str], needles: &[&str]) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in {err}");
    }
}

#[test]
fn max_memory_is_parsed_and_bad_sizes_are_one_line() {
    for bad in ["0", "-5M", "lots", "12Q", "1e3G", ""] {
        refused(&[&format!("--max-memory={bad}"), "man"], &["--max-memory"]);
    }
    nb().args(["--max-memory", "512M", "man"]).assert().success();
    nb().args(["man", "--max-memory=8G"]).assert().success();
}

#[test]
fn inputs_larger_than_the_budget_are_refused_before_reading() {
    let d = tempfile::tempdir().unwrap();
    let pts = d.path().join("p.csv");
    let mut text = String::new();
    for i in 0..3000 {
        text += &format!("{}.5,{}\n", i % 97, i % 89);
    }
    std::fs::write(&pts, &text).unwrap();
    let out = d.path().join("labels.csv");
    let (p, o) = (pts.to_str().unwrap(), out.to_str().unwrap());
    // The file itself (40 KiB) against a 4 KiB budget.
    refused(&["--max-memory", "4K", "ocnn", "cluster", "-i", p, "-o", o], &["p.csv", "--max-memory 4.0 KiB", "needs"]);
    // The file fits; the dense network of 3000 points (~100 MiB) does not.
    refused(
        &["--max-memory", "20M", "ocnn", "cluster", "-i", p, "-o", o],
        &["dense OCNN of 3000 points", "MiB, more than the memory budget of 20.0 MiB (--max-memory"],
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn sizes_from_options_are_checked_before_any_work() {
    let t = Instant::now();
    refused(
        &["cortical", "bench", "--levels", "30", "--device", "cpu"],
        &["--levels 30", "more than the memory budget"],
    );
    refused(&["--max-memory", "1M", "ocnn", "bench", "--sizes", "1000000", "--device", "cpu"], &["--sizes 1000000"]);
    assert!(t.elapsed() < Duration::from_secs(20), "refused at once");
}

#[test]
fn a_retrieval_bigger_than_the_budget_is_refused_and_json_is_streamed() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let msgs = dir.join("m.csv");
    std::fs::write(&msgs, "0,1,2\n2,1,0\n").unwrap();
    let net = dir.join("net.nb");
    nb().args(["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages"])
        .arg(&msgs)
        .arg("--out")
        .arg(&net)
        .assert()
        .success();
    let probes = dir.join("p.csv");
    std::fs::write(&probes, "0,?,2\n".repeat(20_000)).unwrap();
    let out = dir.join("r.json");
    let args = |mem: &str| {
        let mut c = nb();
        c.args(["--max-memory", mem, "gbnn", "retrieve", "--rule", "sum-of-sum", "--format", "json", "--net"])
            .arg(&net)
            .arg("--probes")
            .arg(&probes)
            .arg("--out")
            .arg(&out);
        c
    };
    let o = args("2M").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("p.csv: the results of 20000 probes needs"), "{err}");
    assert!(!out.exists());
    args("64M").assert().success();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["probes"].as_array().unwrap().len(), 20_000);
    assert_eq!(doc["probes"][0]["active"], serde_json::json!([[0], [1], [2]]));
    assert!(doc["meta"]["version"].is_string() && doc["clusters"] == 3);
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Reads `child`'s stderr (on a thread, so that a missing note fails instead of hanging) until
/// `needle` shows, for at most `secs`; returns what was read.
fn wait_for(child: &mut std::process::Child, needle: &str, secs: u64) -> String {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut stderr = child.stderr.take().unwrap();
    let sink = seen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let t = Instant::now();
    while !seen.lock().unwrap().contains(needle) && t.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = seen.lock().unwrap().clone();
    s
}

#[test]
fn a_named_pipe_input_without_writer_waits_with_a_note_and_ends_on_a_signal() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("in.fifo");
    mkfifo(&fifo);
    let out = d.path().join("labels.csv");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neurobits"))
        .args(["ocnn", "cluster", "-i"])
        .arg(&fifo)
        .arg("-o")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut child, "waiting for a writer", 10);
    assert!(seen.contains("note: waiting for a writer of the named pipe"), "{seen}");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(!out.exists());
}

#[test]
fn a_named_pipe_input_with_a_writer_is_read_like_cat_reads_it() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("in.fifo");
    mkfifo(&fifo);
    let out = d.path().join("labels.csv");
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            for i in 0..40 {
                writeln!(f, "{},{}", (i % 2) * 10 + i % 3, (i % 2) * 10).unwrap();
            }
        })
    };
    let o = nb().args(["ocnn", "cluster", "--iters", "50", "-i"]).arg(&fifo).arg("-o").arg(&out).output().unwrap();
    writer.join().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 40);
}

#[test]
fn a_named_pipe_output_without_reader_waits_with_a_note_then_streams() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("out.fifo");
    mkfifo(&fifo);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neurobits"))
        .args(["flyhash", "projection", "--input-dim", "8", "--code-bits", "4", "--ones-per-row", "2", "-o"])
        .arg(&fifo)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = wait_for(&mut child, "waiting for a reader", 10);
    assert!(seen.contains("note: waiting for a reader of the named pipe"), "{seen}");
    let text = std::fs::read_to_string(&fifo).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(text.lines().count(), 4, "{text}");
    // A socket is neither a file nor a stream this program can open: refused.
    let sock = d.path().join("s.sock");
    let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    refused(
        &[
            "flyhash",
            "projection",
            "--input-dim",
            "8",
            "--code-bits",
            "4",
            "--ones-per-row",
            "2",
            "-o",
            sock.to_str().unwrap(),
        ],
        &["s.sock", "socket"],
    );
}
