//! The command-line tool end to end: round trips, and every bad-input case ending in one line
//! on stderr, exit code 2, and no output file.

use assert_cmd::Command;
use neurobits_core::gbnn::{Network, Params, Rule};
use std::path::{Path, PathBuf};

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs and expects failure: exit 2, a single `error:` line mentioning `needle`, no `out`.
fn fails(args: &[&str], needle: &str, out: &Path) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "{} must not be written", out.display());
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn store(dir: &Path, msgs: &str) -> PathBuf {
    let m = write(dir, "m.csv", msgs);
    let net = dir.join("net.nb");
    nb().args(["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages", s(&m), "--out", s(&net)])
        .assert()
        .success();
    net
}

#[test]
fn paper_example_round_trip_csv_and_json() {
    let d = tempfile::tempdir().unwrap();
    let net = store(d.path(), "0,0,0\n1,1,0\n2,1,0\n0,2,0\n");
    let probes = write(d.path(), "p.csv", "?,?,0\n0,?,0\n");
    let out = d.path().join("r.csv");
    nb().args(["gbnn", "retrieve", "--net", s(&net), "--probes", s(&probes), "--rule", "sum-of-max", "--out", s(&out)])
        .assert()
        .success();
    // (?,?,0): every stored message matches; (0,?,0): messages (0,0,0) and (0,2,0).
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0|1|2,0|1|2,0\n0,0|2,0\n");

    let out = d.path().join("r.json");
    nb().args(["gbnn", "retrieve", "--net", s(&net), "--probes", s(&probes), "--rule", "sum-of-sum", "--gamma", "1"])
        .args(["--format", "json", "--out", s(&out)])
        .assert()
        .success();
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // The oscillating probe of Section V-A stops at t_max = 20 without converging.
    assert_eq!(j["probes"][0]["converged"], false);
    assert_eq!(j["probes"][0]["iterations"], 20);
    assert_eq!(j["probes"][0]["active"], serde_json::json!([[0], [1], [0]]));
    // Machine-readable outputs say what wrote them and how.
    assert!(j["meta"]["version"].as_str().unwrap().contains('('), "{}", j["meta"]);
    assert!(j["meta"]["command_line"].as_array().unwrap().iter().any(|a| a == "sum-of-sum"));
}

#[test]
fn generated_workload_round_trips_through_files_for_every_rule() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("w");
    nb().args(["gbnn", "generate", "--clusters", "8", "--neurons", "50", "--messages", "300", "--probes", "200"])
        .args(["--erased", "4", "--seed", "9", "--out", s(&dir)])
        .assert()
        .success();
    let net = d.path().join("net.nb");
    nb().args([
        "gbnn",
        "store",
        "--clusters",
        "8",
        "--neurons",
        "50",
        "--messages",
        s(&dir.join("messages.csv")),
        "--out",
        s(&net),
    ])
    .assert()
    .success();
    let mut lib = Network::new(8, 50).unwrap();
    lib.store_random(9, 300);
    let loaded = neurobits::io::netfile::load(&net).unwrap();
    assert_eq!(loaded, lib);
    let probes = neurobits::io::symbols::read(&dir.join("probes.csv"), lib.geometry(), true).unwrap();
    for rule in Rule::ALL {
        let out = d.path().join(format!("{}.csv", rule.name()));
        nb().args([
            "gbnn",
            "retrieve",
            "--net",
            s(&net),
            "--probes",
            s(&dir.join("probes.csv")),
            "--rule",
            rule.name(),
        ])
        .args(["--gamma", "2", "--out", s(&out)])
        .assert()
        .success();
        let g = *lib.geometry();
        let mut want = String::new();
        let (mut v, mut sc) = (vec![0; g.row_words()], vec![0; g.row_words()]);
        for p in probes.chunks(8) {
            lib.retrieve(p, rule, Params { gamma: 2, max_iter: 20 }, &mut v, &mut sc).unwrap();
            want += &neurobits::io::output::csv(&[neurobits::io::output::active_symbols(&g, &v)]);
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), want, "{rule:?}");
    }
}

#[test]
fn bad_messages_are_rejected_with_the_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("net.nb");
    let cases = [
        ("0,1,2\n0,1\n", "m.csv:2: expected 3 fields, found 2"),
        ("0,1,2\n\n0,1,3\n", "m.csv:3: field 3: symbol 3 is out of range"),
        ("0,x,2\n", "m.csv:1: field 2: 'x' is not a symbol"),
        ("0,-1,2\n", "m.csv:1: field 2: '-1' is not a symbol"),
        ("0,?,2\n", "m.csv:1: field 2: '?' is not a symbol"),
        ("", "no messages (the file is empty)"),
        ("\n\n", "no messages (the file is empty)"),
    ];
    for (text, needle) in cases {
        let m = write(d.path(), "m.csv", text);
        fails(
            &["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages", s(&m), "--out", s(&out)],
            needle,
            &out,
        );
    }
    let m = write(d.path(), "m.csv", "0,1,2\n");
    let base = |c: &'static str, l: &'static str| {
        ["gbnn", "store", "--clusters", c, "--neurons", l, "--messages", s(&m), "--out", s(&out)].map(String::from)
    };
    let run =
        |args: [String; 10], needle: &str| fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle, &out);
    run(base("0", "3"), "clusters must be at least 1");
    run(base("3", "0"), "neurons per cluster must be at least 1");
    run(base("64", "60000"), "GiB");
    run(base("65", "3"), "65 clusters is more than the supported 64");
    run(base("3", "70000"), "70000 neurons per cluster is more than the supported");
    fails(
        &["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages", "/nonexistent.csv", "--out", s(&out)],
        "cannot read /nonexistent.csv",
        &out,
    );
    fails(
        &["gbnn", "store", "--clusters", "x", "--neurons", "3", "--messages", s(&m), "--out", s(&out)],
        "invalid value 'x'",
        &out,
    );
}

#[test]
fn bad_probes_and_network_files_are_rejected() {
    let d = tempfile::tempdir().unwrap();
    let net = store(d.path(), "0,0,0\n1,1,0\n");
    let out = d.path().join("r.csv");
    let retrieve = |net: &Path, probes: &Path| {
        ["gbnn", "retrieve", "--net", s(net), "--probes", s(probes), "--rule", "joint", "--out", s(&out)]
            .map(String::from)
    };
    let fails_v =
        |args: [String; 10], needle: &str| fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle, &out);
    for (text, needle) in [
        ("?,?,0\n?,0\n", "p.csv:2: expected 3 fields, found 2"),
        ("?,?,3\n", "p.csv:1: field 3: symbol 3 is out of range 0..2"),
        ("?,??,0\n", "p.csv:1: field 2: '??' is not a symbol or '?'"),
        ("NaN,0,0\n", "p.csv:1: field 1: 'NaN' is not a symbol or '?'"),
        ("", "no probes"),
    ] {
        let p = write(d.path(), "p.csv", text);
        fails_v(retrieve(&net, &p), needle);
    }
    let p = write(d.path(), "p.csv", "?,?,0\n");
    let bytes = std::fs::read(&net).unwrap();
    let truncated = write(d.path(), "t.nb", "");
    std::fs::write(&truncated, &bytes[..bytes.len() - 9]).unwrap();
    fails_v(retrieve(&truncated, &p), "truncated network file");
    std::fs::write(&truncated, &bytes[..20]).unwrap();
    fails_v(retrieve(&truncated, &p), "truncated network file");
    let mut corrupt = bytes.clone();
    corrupt[45] ^= 0x10;
    std::fs::write(&truncated, &corrupt).unwrap();
    fails_v(retrieve(&truncated, &p), "checksum mismatch");
    let mut header = bytes.clone();
    header[12] = 200; // C = 200
    std::fs::write(&truncated, &header).unwrap();
    fails_v(retrieve(&truncated, &p), "corrupt header");
    std::fs::write(&truncated, b"0,1,2\n3,4,5\n0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n").unwrap();
    fails_v(retrieve(&truncated, &p), "not a neurobits network file");
    let mut long = bytes.clone();
    long.push(0);
    std::fs::write(&truncated, &long).unwrap();
    fails_v(retrieve(&truncated, &p), "corrupt network file");
    fails(
        &["gbnn", "retrieve", "--net", s(&net), "--probes", s(&p), "--rule", "best", "--out", s(&out)],
        "invalid value 'best'",
        &out,
    );
}

#[test]
fn failed_write_leaves_the_previous_output_intact() {
    let d = tempfile::tempdir().unwrap();
    let net = store(d.path(), "0,0,0\n");
    let out = d.path().join("r.csv");
    std::fs::write(&out, "previous\n").unwrap();
    let p = write(d.path(), "p.csv", "?,?,0\n?,?\n");
    nb().args(["gbnn", "retrieve", "--net", s(&net), "--probes", s(&p), "--rule", "joint", "--out", s(&out)])
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous\n");
}

#[test]
fn experiment_writes_table_csv_json_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("exp");
    let o = nb()
        .args([
            "gbnn",
            "experiment",
            "--scenario",
            "1",
            "--erased",
            "4..5",
            "--probes",
            "300",
            "--gammas",
            "1",
            "--out",
            s(&dir),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(table.contains("joint") && table.contains("sum-of-sum g=1"), "{table}");
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 5, "{csv}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    // joint and sum-of-max agree on probes of stored messages, point by point.
    for e in [4, 5] {
        let rate = |rule: &str| {
            rows["rows"].as_array().unwrap().iter().find(|r| r["rule"] == rule && r["erased"] == e).unwrap()["strict"]
                .as_f64()
                .unwrap()
        };
        assert_eq!(rate("joint"), rate("sum-of-max"));
        assert!(rate("joint") > 0.8);
    }
    for f in ["retrieval.svg", "gamma.svg", "time.svg"] {
        assert!(std::fs::read_to_string(dir.join(f)).unwrap().starts_with("<svg"), "{f}");
    }
    fails(
        &["gbnn", "experiment", "--scenario", "1", "--erased", "5..9", "--out", s(&d.path().join("x"))],
        "need a <= b <= 8",
        &d.path().join("x"),
    );
}

#[test]
fn fpga_reports_cycles_and_rejects_oversized_circuits() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("f.json");
    let o = nb()
        .args(["fpga", "--clusters", "8", "--neurons", "50", "--messages", "200", "--probes", "100", "--erased", "4"])
        .args(["--json", s(&json)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["store_cycles"], 200);
    // The seed is recorded though it was not given (the default), and the device by name.
    assert_eq!(j["meta"]["seeds"]["seed"], 1, "{}", j["meta"]);
    assert!(j["meta"]["device"]["cpu"].as_str().is_some_and(|c| !c.is_empty()), "{}", j["meta"]);
    for r in j["rules"].as_array().unwrap() {
        assert_eq!(r["identical_to_cpu"], true);
        assert!(r["mean_cycles"].as_f64().unwrap() >= 3.0);
    }
    assert_eq!(j["resources_formula"]["weight_ffs"], 28 * 2500);
    // The RTL's synthesis runs are reported beside the formula; 8x50 has no place-and-route, so
    // its clock is the assumed one, and says so.
    let hier = j["resources_measured"].as_array().unwrap().iter().find(|z| z["mode"] == "hierarchical");
    assert_eq!(hier.unwrap()["synth"].as_array().unwrap().len(), 3, "{}", j["resources_measured"]);
    assert!(j["clock"].as_str().unwrap().contains("assumed"), "{}", j["clock"]);
    let mut cmd = nb();
    cmd.args(["fpga", "--clusters", "3", "--neurons", "3", "--messages", "4", "--probes", "4", "--erased", "1"]);
    let o = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("measured Fmax, iCE40 HX8K"), "{text}");
    assert!(
        text.contains("resources, formula")
            && text.contains(
                "full build, hierarchical: ice40 yosys synth_ice40 -noflatten (post-synthesis estimate): LUT"
            ),
        "{text}"
    );
    let none = d.path().join("none.json");
    fails(
        &["fpga", "--clusters", "21", "--neurons", "20", "--out", s(&none)],
        "420 neurons exceeds the 400-neuron",
        &none,
    );
    fails(&["fpga", "--clusters", "5", "--neurons", "20", "--out", s(&none)], "no circuit is compiled for 5x20", &none);
    fails(&["fpga", "--clock-mhz", "NaN", "--out", s(&none)], "--clock-mhz", &none);
    fails(&["fpga", "--probes", "500", "--messages", "300", "--out", s(&none)], "500 distinct probes", &none);
}
