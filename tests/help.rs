//! The command line as a new user meets it: every option of every subcommand has a help
//! sentence, defaults agree across commands, `--version` names the commit, and a bare command
//! prints its help rather than an error folded onto one line.

use clap::CommandFactory;
use neurobits_cli::cli::Cli;

fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
    for a in cmd.get_arguments() {
        let id = a.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        if a.get_help().is_none() && a.get_long_help().is_none() {
            missing.push(format!("{path} --{}", a.get_long().unwrap_or(id)));
        }
    }
    for s in cmd.get_subcommands() {
        if s.get_about().is_none() {
            missing.push(format!("{path} {} (no about)", s.get_name()));
        }
        walk(s, &format!("{path} {}", s.get_name()), missing);
    }
}

#[test]
fn every_option_has_help() {
    let mut missing = Vec::new();
    walk(&Cli::command(), "neurobits", &mut missing);
    assert!(missing.is_empty(), "options without help text:\n{}", missing.join("\n"));
}

fn default_of(path: &[&str], long: &str) -> Option<String> {
    let mut cmd = Cli::command();
    for p in path {
        cmd = cmd.find_subcommand(p).unwrap_or_else(|| panic!("no subcommand {p}")).clone();
    }
    let a =
        cmd.get_arguments().find(|a| a.get_long() == Some(long)).unwrap_or_else(|| panic!("{path:?} has no --{long}"));
    a.get_default_values().first().map(|v| v.to_string_lossy().to_string())
}

#[test]
fn gamma_defaults_agree() {
    let gammas: Vec<Option<String>> =
        [&["gbnn", "retrieve"][..], &["fpga"], &["hwcost"]].iter().map(|p| default_of(p, "gamma")).collect();
    assert!(gammas.iter().all(|g| g.as_deref() == Some("2")), "{gammas:?}");
}

#[test]
fn version_names_the_commit_and_bare_commands_print_help() {
    let o = assert_cmd::Command::cargo_bin("neurobits").unwrap().arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && v.starts_with("neurobits 0.1.0 (") && v.trim_end().ends_with(')'), "{v}");
    for args in [&[][..], &["gbnn"][..], &["ocnn"][..]] {
        let o = assert_cmd::Command::cargo_bin("neurobits").unwrap().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err.contains("Usage:") && err.lines().count() > 3, "{args:?}: help expected, got {err}");
    }
}

#[test]
fn score_rates_a_retrieval_against_the_truth() {
    let d = tempfile::tempdir().unwrap();
    let nb = || assert_cmd::Command::cargo_bin("neurobits").unwrap();
    let p = |n: &str| d.path().join(n);
    nb().args([
        "gbnn",
        "generate",
        "--clusters",
        "4",
        "--neurons",
        "16",
        "--messages",
        "3",
        "--probes",
        "3",
        "--erased",
        "1",
        "--out",
    ])
    .arg(d.path())
    .assert()
    .success();
    nb().args(["gbnn", "store", "--clusters", "4", "--neurons", "16", "--messages"])
        .arg(p("messages.csv"))
        .arg("--out")
        .arg(p("net.nb"))
        .assert()
        .success();
    nb().args(["gbnn", "retrieve", "--rule", "joint", "--net"])
        .arg(p("net.nb"))
        .arg("--probes")
        .arg(p("probes.csv"))
        .arg("--out")
        .arg(p("out.csv"))
        .assert()
        .success();
    nb().args(["gbnn", "score", "--result"])
        .arg(p("out.csv"))
        .arg("--truth")
        .arg(p("truth.csv"))
        .arg("--json")
        .arg(p("s.json"))
        .assert()
        .success();
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p("s.json")).unwrap()).unwrap();
    // 3 messages in a 4×16 network, one cluster erased: each is retrieved exactly.
    assert_eq!((s["probes"].as_u64(), s["strict"].as_f64(), s["contains"].as_f64()), (Some(3), Some(1.0), Some(1.0)));
    // A result that misses the truth everywhere scores 0; a truth of other length is an error.
    std::fs::write(p("bad.csv"), "15,15,15,15\n15,15,15,15\n15,15,15,15\n").unwrap();
    nb().args(["gbnn", "score", "--result"])
        .arg(p("bad.csv"))
        .arg("--truth")
        .arg(p("truth.csv"))
        .arg("--json")
        .arg(p("b.json"))
        .assert()
        .success();
    let b: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p("b.json")).unwrap()).unwrap();
    assert_eq!(b["contains"].as_f64(), Some(0.0));
    std::fs::write(p("short.csv"), "1,2,3,4\n").unwrap();
    nb().args(["gbnn", "score", "--result"]).arg(p("short.csv")).arg("--truth").arg(p("truth.csv")).assert().code(2);
}

#[test]
fn search_results_are_plain_csv() {
    let d = tempfile::tempdir().unwrap();
    let codes = d.path().join("c.bin");
    let mut b = b"NBFLYHSH".to_vec();
    b.extend(1u32.to_le_bytes());
    b.extend(8u32.to_le_bytes());
    b.extend(3u64.to_le_bytes());
    for w in [0b0000_0001u64, 0b0000_0011, 0b1111_0000] {
        b.extend(w.to_le_bytes());
    }
    std::fs::write(&codes, b).unwrap();
    let out = d.path().join("hits.csv");
    assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["flyhash", "search", "--r", "2", "--db"])
        .arg(&codes)
        .arg("--queries")
        .arg(&codes)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "query,rank,index,distance");
    assert_eq!(&lines[1..3], ["0,0,0,0", "0,1,1,1"]);
    assert_eq!(lines.len(), 1 + 3 * 2);
}

#[test]
fn completions_and_man_page() {
    let run = |args: &[&str]| {
        let o = assert_cmd::Command::cargo_bin("neurobits").unwrap().args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    assert!(run(&["completions", "bash"]).contains("neurobits__subcmd__ocnn__subcmd__cluster"));
    assert!(run(&["completions", "zsh"]).contains("#compdef neurobits"));
    let man = run(&["man"]);
    assert!(man.starts_with(".ie") && man.contains(".TH neurobits 1"));
}

#[test]
fn an_interrupted_experiment_resumes_from_its_finished_points() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("exp");
    std::fs::create_dir_all(&out).unwrap();
    // What an interrupted run left: its journal with one finished point (a marker value), the
    // same point again, and a point made up by hand (no valid checksum: computed again).
    let key = "scenario=1 seed=1 probes=100 erased=1..2 configs=[(Joint, 2)] device=Cpu";
    let done = r#"{"scenario":1,"rule":"joint","gamma":2,"erased":1,"probes":100,"strict":0.125,"contains":1.0,"expected":0.5,"mean_iterations":2.0,"seconds":0.1}"#;
    let (journal, _) = neurobits::io::journal::Journal::open(&out, key).unwrap();
    journal.append(done).unwrap();
    journal.append(done).unwrap();
    let forged = done.replace("0.125", "0.777").replace(r#""erased":1"#, r#""erased":2"#);
    let mut f = std::fs::OpenOptions::new().append(true).open(out.join("partial.jsonl")).unwrap();
    std::io::Write::write_all(&mut f, format!("{} {forged}\n", "0".repeat(64)).as_bytes()).unwrap();
    let o = assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args([
            "gbnn",
            "experiment",
            "--scenario",
            "1",
            "--rules",
            "joint",
            "--gammas",
            "--erased",
            "1..2",
            "--probes",
            "100",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("resuming: 1 of 2 points"), "{err}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.contains("0.125"), "the finished point is reused, not recomputed: {csv}");
    assert!(!csv.contains("0.777"), "a point without a valid checksum is computed again: {csv}");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!out.join("partial.jsonl").exists(), "removed once the run is complete");
}

#[test]
fn search_simd_path_equals_the_portable_path() {
    // Random 2048-bit codes from the portable PRNG; the same search with and without SIMD.
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, n: u64, seed: u64| {
        let p = d.path().join(name);
        let mut b = b"NBFLYHSH".to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend(2048u32.to_le_bytes());
        b.extend(n.to_le_bytes());
        for i in 0..n * 32 {
            b.extend(neurobits_core::prng::draw(seed, i).to_le_bytes());
        }
        std::fs::write(&p, b).unwrap();
        p
    };
    let (db, q) = (write("db.bin", 700, 1), write("q.bin", 50, 2));
    let run = |level: &str, out: &str| {
        let mut c = assert_cmd::Command::cargo_bin("neurobits").unwrap();
        c.env("NEUROBITS_SIMD", level);
        c.args(["flyhash", "search", "--r", "30", "--db"])
            .arg(&db)
            .arg("--queries")
            .arg(&q)
            .arg("--out")
            .arg(d.path().join(out))
            .assert()
            .success();
        std::fs::read_to_string(d.path().join(out)).unwrap()
    };
    let portable = run("portable", "portable.csv");
    assert_eq!(portable, run("avx2", "avx2.csv"));
    assert_eq!(portable, run("avx512", "avx512.csv"));
}

#[test]
fn fpga_takes_rules_and_out_and_warns_on_the_old_spellings() {
    let d = tempfile::tempdir().unwrap();
    let base = ["fpga", "--clusters", "3", "--neurons", "3", "--messages", "4", "--probes", "4", "--erased", "1"];
    let run =
        |extra: &[&str]| assert_cmd::Command::cargo_bin("neurobits").unwrap().args(base).args(extra).output().unwrap();
    let new = d.path().join("new.json");
    let o = run(&["--rules", "joint,sum-of-max", "--out", new.to_str().unwrap()]);
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("deprecated"));
    let old = d.path().join("old.json");
    let o = run(&["--rule", "joint,sum-of-max", "--json", old.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success()
            && err.contains("`fpga --rule` is deprecated")
            && err.contains("`fpga --json` is deprecated"),
        "{err}"
    );
    let rules = |p: &std::path::Path| {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["rules"].as_array().unwrap().iter().map(|r| r["rule"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(rules(&new), ["joint", "sum-of-max"]);
    assert_eq!(rules(&new), rules(&old));
}

#[test]
fn experiment_erased_takes_a_number_or_a_range() {
    assert_eq!(neurobits::gbnn::experiment::parse_range("3", 8).unwrap(), (3, 3));
    assert_eq!(neurobits::gbnn::experiment::parse_range("2..5", 8).unwrap(), (2, 5));
    assert!(neurobits::gbnn::experiment::parse_range("9", 8).is_err());
    assert!(neurobits::gbnn::experiment::parse_range("5..2", 8).is_err());
}
