//! `gbnn generate --substituted/--active`, `gbnn store` of sparse messages and `gbnn retrieve
//! --mode noisy|sparse` end to end (issue 36), and their bad input: one line, exit 2, no output.

use assert_cmd::Command;
use neurobits_core::gbnn::{Mode, Network, Params, Rule, ERASED, SILENT};
use std::path::{Path, PathBuf};

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fails(args: &[&str], needle: &str, out: &Path) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "'{needle}' not in: {err}");
    assert!(!out.exists(), "{} must not be written", out.display());
}

fn parse(text: &str) -> Vec<u16> {
    let field = |f: &str| match f {
        "?" => ERASED,
        "-" => SILENT,
        x => x.parse().unwrap(),
    };
    text.lines().flat_map(|l| l.split(',').map(field).collect::<Vec<_>>()).collect()
}

fn generate(dir: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join("w");
    nb().args(["gbnn", "generate", "--clusters", "8", "--neurons", "16", "--messages", "40", "--probes", "10"])
        .args(extra)
        .args(["-o", s(&out)])
        .assert()
        .success();
    out
}

/// Stores the generated messages through the CLI and retrieves in `mode`; compares each probe's
/// active symbols with the core's `retrieve_in` on a network built here.
fn round_trip(dir: &Path, w: &Path, rule: &str, mode: Mode) {
    let net = dir.join("net.nb");
    nb().args(["gbnn", "store", "--clusters", "8", "--neurons", "16", "--messages"])
        .args([s(&w.join("messages.csv")), "-o", s(&net)])
        .assert()
        .success();
    let out = dir.join(format!("{rule}-{}.csv", mode.name()));
    nb().args(["gbnn", "retrieve", "--net", s(&net), "--probes", s(&w.join("probes.csv")), "--rule", rule])
        .args(["--mode", mode.name(), "--gamma", "1", "-o", s(&out)])
        .assert()
        .success();
    let mut core = Network::new(8, 16).unwrap();
    for m in parse(&std::fs::read_to_string(w.join("messages.csv")).unwrap()).chunks(8) {
        core.store(m).unwrap();
    }
    let probes = parse(&std::fs::read_to_string(w.join("probes.csv")).unwrap());
    let got = std::fs::read_to_string(&out).unwrap();
    let (mut v, mut sc) = (vec![0; 8], vec![0; 8]);
    let r = Rule::from_name(rule).unwrap();
    for (p, line) in probes.chunks(8).zip(got.lines()) {
        core.retrieve_in(p, r, mode, Params { gamma: 1, max_iter: 20 }, &mut v, &mut sc).unwrap();
        let want: Vec<String> = (0..8)
            .map(|c| (0..16).filter(|&l| v[c] >> l & 1 == 1).map(|l| l.to_string()).collect::<Vec<_>>().join("|"))
            .collect();
        assert_eq!(line, want.join(","), "{rule} {mode:?} probe {p:?}");
    }
    assert_eq!(got.lines().count(), 10);
}

#[test]
fn noisy_probes_substitute_exactly_n_known_symbols_and_retrieve() {
    let d = tempfile::tempdir().unwrap();
    let w = generate(d.path(), &["--erased", "1", "--substituted", "2"]);
    let probes = parse(&std::fs::read_to_string(w.join("probes.csv")).unwrap());
    let truth = parse(&std::fs::read_to_string(w.join("truth.csv")).unwrap());
    for (p, t) in probes.chunks(8).zip(truth.chunks(8)) {
        assert_eq!(p.iter().filter(|&&x| x == ERASED).count(), 1);
        assert_eq!(p.iter().zip(t).filter(|(a, b)| **a != ERASED && a != b).count(), 2, "{p:?} {t:?}");
    }
    for rule in ["sum-of-sum", "sum-of-max"] {
        round_trip(d.path(), &w, rule, Mode::Noisy);
    }
}

#[test]
fn sparse_messages_have_c_active_clusters_and_retrieve() {
    let d = tempfile::tempdir().unwrap();
    let w = generate(d.path(), &["--active", "4", "--erased", "1"]);
    let msgs = parse(&std::fs::read_to_string(w.join("messages.csv")).unwrap());
    assert!(msgs.chunks(8).all(|m| m.iter().filter(|&&x| x != SILENT).count() == 4));
    let probes = parse(&std::fs::read_to_string(w.join("probes.csv")).unwrap());
    assert!(probes.chunks(8).all(|p| p.iter().filter(|&&x| x == SILENT).count() == 4));
    for rule in ["sum-of-sum", "sum-of-max"] {
        round_trip(d.path(), &w, rule, Mode::Sparse);
    }
    // Scoring against a truth with silent clusters: a silent cluster is right when empty.
    let r = d.path().join("sum-of-max-sparse.csv");
    let o = nb().args(["gbnn", "score", "--result", s(&r), "--truth", s(&w.join("truth.csv"))]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("10 probes: strict"));
}

#[test]
fn full_messages_are_unchanged_by_the_new_flags() {
    let d = tempfile::tempdir().unwrap();
    let a = generate(d.path(), &["--erased", "2"]);
    let before = std::fs::read_to_string(a.join("probes.csv")).unwrap();
    let b = d.path().join("b");
    std::fs::rename(&a, &b).unwrap();
    let a = generate(d.path(), &["--erased", "2", "--active", "8", "--substituted", "0"]);
    assert_eq!(std::fs::read_to_string(a.join("probes.csv")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(a.join("messages.csv")).unwrap(),
        std::fs::read_to_string(b.join("messages.csv")).unwrap()
    );
}

#[test]
fn bad_mode_input_is_one_line_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("never");
    let gen = |extra: &[&str]| {
        let mut a = vec!["gbnn", "generate", "--clusters", "8", "--neurons", "16", "--messages", "40", "--probes", "5"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["-o", s(&out)]);
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>, needle: &str| fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), needle, &out);
    run(gen(&["--active", "9"]), "--active 9");
    run(gen(&["--active", "0"]), "--active 0");
    run(gen(&["--active", "3", "--erased", "2", "--substituted", "2"]), "--substituted 2");
    run(gen(&["--substituted", "x"]), "--substituted");

    let w = generate(d.path(), &["--active", "4", "--erased", "1"]);
    let net = d.path().join("net.nb");
    nb().args(["gbnn", "store", "--clusters", "8", "--neurons", "16", "--messages"])
        .args([s(&w.join("messages.csv")), "-o", s(&net)])
        .assert()
        .success();
    let probes = w.join("probes.csv");
    let r = |rule: &str, mode: &str, needle: &str| {
        fails(
            &[
                "gbnn",
                "retrieve",
                "--net",
                s(&net),
                "--probes",
                s(&probes),
                "--rule",
                rule,
                "--mode",
                mode,
                "-o",
                s(&out),
            ],
            needle,
            &out,
        )
    };
    r("sum-of-sum", "erasure", "needs --mode sparse");
    r("sum-of-max", "noisy", "needs --mode sparse");
    r("joint", "sparse", "--rule joint");
    r("bail-out-early", "noisy", "--rule bail-out-early");
    r("sum-of-sum", "dense", "--mode");
    // A '?' in a message file is still refused; '-' is a silent cluster.
    let m = d.path().join("m.csv");
    std::fs::write(&m, "1,?,3,-,1,2,3,4\n").unwrap();
    fails(&["gbnn", "store", "--clusters", "8", "--neurons", "16", "--messages", s(&m), "-o", s(&out)], "'?'", &out);
}

/// `fpga --mode noisy|sparse`: the cycle model runs the rules the mode defines, equal to the CPU,
/// two clocks per update; refusals are one line, exit 2, no report.
#[test]
fn fpga_runs_the_noisy_and_sparse_modes() {
    let d = tempfile::tempdir().unwrap();
    for (mode, extra) in [("noisy", ["--substituted", "2"]), ("sparse", ["--active", "5"])] {
        let json = d.path().join(format!("{mode}.json"));
        nb().args(["fpga", "--messages", "200", "--probes", "100", "--erased", "1", "--mode", mode])
            .args(extra)
            .args(["-o", s(&json)])
            .assert()
            .success();
        let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(j["mode"], mode);
        let rules = j["rules"].as_array().unwrap();
        let names: Vec<&str> = rules.iter().map(|r| r["rule"].as_str().unwrap()).collect();
        assert_eq!(names, ["sum-of-sum", "sum-of-max"]);
        for r in rules {
            assert_eq!(r["identical_to_cpu"], true, "{mode}: {r}");
            let (cycles, iters) = (r["total_cycles"].as_u64().unwrap(), r["mean_iterations"].as_f64().unwrap());
            assert_eq!(cycles as f64, 100.0 * (2.0 + 2.0 * iters), "{mode}: load, 2 clocks per update, unload");
        }
    }
    let none = d.path().join("none.json");
    fails(&["fpga", "--mode", "noisy", "--rules", "joint", "-o", s(&none)], "not defined for --mode noisy", &none);
    fails(&["fpga", "--active", "5", "-o", s(&none)], "--active 5: silent clusters need --mode sparse", &none);
    fails(&["fpga", "--substituted", "1", "-o", s(&none)], "--substituted 1: needs --mode noisy or sparse", &none);
}
