//! The output rules of `neurobits::io::atomic` that protect what a user already has (issue 31):
//! read-only files are refused, chains of links are followed, and sets of files (`generate`,
//! `experiment`, `hwcost`) keep their members' modes, write through links, refuse before any
//! work, and are never a mix of two runs.

use assert_cmd::Command;
use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn generate(dir: &Path, seed: u64) -> std::process::Output {
    nb().args(["-q", "gbnn", "generate", "--clusters", "4", "--neurons", "16", "--messages", "200", "--probes"])
        .args(["50", "--erased", "1", "--seed", &seed.to_string(), "-o"])
        .arg(dir)
        .output()
        .unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_read_only_output_is_refused_and_left_as_it_is() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ro.csv");
    std::fs::write(&out, "mine").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).unwrap();
    let gen = d.path().join("gen");
    assert!(generate(&gen, 1).status.success());
    let o = nb()
        .args(["gbnn", "store", "--clusters", "4", "--neurons", "16", "--messages"])
        .arg(gen.join("messages.csv"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("ro.csv") && err.contains("read-only"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    assert_eq!(mode(&out), 0o444);
}

#[test]
fn a_chain_of_links_ending_nowhere_is_followed_to_its_end() {
    let d = tempfile::tempdir().unwrap();
    let gen = d.path().join("gen");
    assert!(generate(&gen, 1).status.success());
    let (a, b, end) = (d.path().join("a.nb"), d.path().join("b.nb"), d.path().join("end.nb"));
    std::os::unix::fs::symlink("b.nb", &a).unwrap();
    std::os::unix::fs::symlink("end.nb", &b).unwrap();
    let o = nb()
        .args(["-q", "gbnn", "store", "--clusters", "4", "--neurons", "16", "--messages"])
        .arg(gen.join("messages.csv"))
        .arg("-o")
        .arg(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&a).unwrap().file_type().is_symlink());
    assert!(std::fs::symlink_metadata(&b).unwrap().file_type().is_symlink());
    assert!(std::fs::metadata(&end).unwrap().is_file(), "the network went to the end of the chain");
}

#[test]
fn a_set_keeps_modes_writes_through_links_and_refuses_before_any_change() {
    let d = tempfile::tempdir().unwrap();
    let gen = d.path().join("gen");
    assert!(generate(&gen, 1).status.success());
    // A private member stays private; a linked member is written through.
    std::fs::set_permissions(gen.join("messages.csv"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let elsewhere = d.path().join("truth-kept-elsewhere.csv");
    std::fs::rename(gen.join("truth.csv"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, gen.join("truth.csv")).unwrap();
    assert!(generate(&gen, 2).status.success());
    assert_eq!(mode(&gen.join("messages.csv")), 0o600);
    assert!(std::fs::symlink_metadata(gen.join("truth.csv")).unwrap().file_type().is_symlink());
    let truth2 = std::fs::read_to_string(&elsewhere).unwrap();
    // A read-only member: refused, and no member changes.
    std::fs::set_permissions(gen.join("probes.csv"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let before: Vec<String> =
        ["messages.csv", "probes.csv"].iter().map(|n| std::fs::read_to_string(gen.join(n)).unwrap()).collect();
    let o = generate(&gen, 3);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let after: Vec<String> =
        ["messages.csv", "probes.csv"].iter().map(|n| std::fs::read_to_string(gen.join(n)).unwrap()).collect();
    assert_eq!(before, after);
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), truth2);
    for e in std::fs::read_dir(d.path()).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(!n.starts_with(".neurobits-"), "leftover {n}");
    }
}

/// Rows of a CSV file as a set of lines.
fn rows(p: &Path) -> HashSet<String> {
    std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn two_runs_writing_one_set_leave_one_runs_set() {
    let d = tempfile::tempdir().unwrap();
    let gen = d.path().join("gen");
    for round in 0..8u64 {
        let runs: Vec<_> = (0..2u64)
            .map(|i| {
                let gen = gen.clone();
                std::thread::spawn(move || generate(&gen, 10 + 2 * round + i))
            })
            .collect();
        for r in runs {
            assert!(r.join().unwrap().status.success());
        }
        // The truth rows are stored messages of the same run: a mix would break that.
        let (msgs, truth) = (rows(&gen.join("messages.csv")), rows(&gen.join("truth.csv")));
        assert!(truth.is_subset(&msgs), "round {round}: truth.csv and messages.csv come from different runs");
    }
}

#[test]
fn a_folder_output_is_not_standard_output() {
    let d = tempfile::tempdir().unwrap();
    let o = nb()
        .current_dir(d.path())
        .args(["gbnn", "generate", "--clusters", "3", "--neurons", "4", "--messages", "3", "-o", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("-o -"), "{err}");
    assert!(!d.path().join("-").exists(), "a folder named '-' was made");
}
