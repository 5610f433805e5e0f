//! The command-line conventions of ARCHITECTURE.md ("CLI conventions"), checked on the whole
//! command tree so that a new command cannot drift from them: short flags mean one thing each,
//! no single-letter long names, lists are comma-separated, `-q` and `--threads` are global,
//! `--json -`/`--out -` give data alone on stdout, and the old spellings still parse.

use assert_cmd::Command;
use clap::{ArgAction, CommandFactory, Parser};
use neurobits_cli::cli::{Cli, Command as Cmd, CorticalCommand, FlyCommand, OcnnCommand};
use std::path::Path;

/// Known departures still to be aligned, `(command, rule, option)`: none now. Each listed must
/// still be a departure (the test fails once it is fixed, so that its line is removed here).
const PENDING: &[(&str, &str, &str)] = &[];

/// Short flags and the one long option each may stand for.
const SHORTS: &[(char, &str)] =
    &[('i', "input"), ('o', "out"), ('q', "quiet"), ('h', "help"), ('V', "version"), ('k', "neighbours")];

fn built() -> clap::Command {
    let mut c = Cli::command();
    c.build();
    c
}

/// Every departure from the conventions in the tree, as `(command, rule, option)`.
fn departures() -> Vec<(String, &'static str, String)> {
    fn walk(cmd: &clap::Command, path: &str, found: &mut Vec<(String, &'static str, String)>) {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let long = a.get_long().unwrap_or(a.get_id().as_str()).to_string();
            let mut bad = |rule| found.push((path.to_string(), rule, long.clone()));
            if a.get_long().is_some_and(|l| l.chars().count() == 1)
                || a.get_visible_aliases().is_some_and(|v| v.iter().any(|l| l.chars().count() == 1))
            {
                bad("single-letter");
            }
            if a.get_long() == Some("out") && a.get_short() != Some('o') {
                bad("out-short");
            }
            if a.get_long() == Some("input") && a.get_short() != Some('i') {
                bad("input-short");
            }
            if let Some(c) = a.get_short() {
                if !SHORTS.iter().any(|&(s, l)| s == c && a.get_long() == Some(l)) {
                    bad("short");
                }
            }
            let many =
                matches!(a.get_action(), ArgAction::Append) || a.get_num_args().is_some_and(|r| r.max_values() > 1);
            if many && !a.is_positional() && a.get_value_delimiter() != Some(',') {
                bad("comma");
            }
            // `--gamma` is the GBNN sum-of-sum factor γ (an integer, 2 by default) everywhere.
            if a.get_long() == Some("gamma")
                && a.get_default_values().first().map(|v| v.to_string_lossy().to_string()).as_deref() != Some("2")
            {
                bad("gamma");
            }
            // An output folder is called a folder in the help, never a directory.
            let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string()).unwrap_or_default();
            if a.get_long() == Some("out") && help.to_lowercase().contains("directory") {
                bad("folder");
            }
        }
        for s in cmd.get_subcommands() {
            let p = if path.is_empty() { s.get_name().to_string() } else { format!("{path} {}", s.get_name()) };
            walk(s, &p, found);
        }
    }
    let mut found = Vec::new();
    walk(&built(), "", &mut found);
    found
}

#[test]
fn the_command_tree_follows_the_conventions() {
    let found = departures();
    let pending = |d: &(String, &str, String)| PENDING.iter().any(|&(c, r, o)| (c, r, o) == (&d.0, d.1, &d.2));
    let new: Vec<_> = found.iter().filter(|d| !pending(d)).collect();
    assert!(new.is_empty(), "departures from ARCHITECTURE.md's CLI conventions:\n{new:#?}");
    let fixed: Vec<_> = PENDING
        .iter()
        .filter(|&&(c, r, o)| !found.iter().any(|d| (d.0.as_str(), d.1, d.2.as_str()) == (c, r, o)))
        .collect();
    assert!(fixed.is_empty(), "fixed, remove from PENDING: {fixed:?}");
}

#[test]
fn global_options_are_global() {
    let c = built();
    for id in ["quiet", "threads", "max_memory"] {
        let a = c.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("no --{id}"));
        assert!(a.is_global_set(), "--{id} must be accepted after the subcommand too");
    }
    let before =
        Cli::try_parse_from(["neurobits", "-q", "--threads", "3", "gbnn", "score", "--result", "r", "--truth", "t"]);
    let after =
        Cli::try_parse_from(["neurobits", "gbnn", "score", "--result", "r", "--truth", "t", "--threads=3", "-q"]);
    for cli in [before.unwrap(), after.unwrap()] {
        assert!(cli.quiet && cli.threads == Some(3));
    }
    let m =
        Cli::try_parse_from(["neurobits", "gbnn", "score", "--result", "r", "--truth", "t", "--max-memory", "1.5G"]);
    assert_eq!(m.unwrap().max_memory, Some(3 << 29));
    assert!(Cli::try_parse_from(["neurobits", "--max-memory", "0", "man"]).is_err());
}

fn parse(args: &[&str]) -> Cmd {
    let mut v = vec!["neurobits"];
    v.extend(args);
    Cli::try_parse_from(v).unwrap_or_else(|e| panic!("{args:?}: {e}")).command
}

#[test]
fn old_spellings_still_parse_and_are_hidden() {
    let hash = |args: &[&str]| match parse(args) {
        Cmd::Flyhash(FlyCommand::Hash(a)) => (a.input, a.m, a.s, a.k, a.out),
        _ => unreachable!(),
    };
    let old = hash(&["flyhash", "hash", "--input", "x", "--m", "10", "--s", "2", "--k", "3", "--out", "o"]);
    let new =
        hash(&["flyhash", "hash", "-i", "x", "--code-bits", "10", "--ones-per-row", "2", "--winners", "3", "-o", "o"]);
    assert_eq!(old, new);
    assert_eq!((new.1, new.2, new.3), (Some(10), Some(2), 3));
    let proj = |args: &[&str]| match parse(args) {
        Cmd::Flyhash(FlyCommand::Projection(a)) => (a.d, a.m, a.s),
        _ => unreachable!(),
    };
    assert_eq!(proj(&["flyhash", "projection", "--d", "30", "--m", "200", "--s", "5", "--out", "p"]), (30, 200, 5));
    assert_eq!(
        proj(&["flyhash", "projection", "--input-dim", "30", "--code-bits", "200", "--ones-per-row", "5", "-o", "p"]),
        (30, 200, 5)
    );
    let search = |args: &[&str]| match parse(args) {
        Cmd::Flyhash(FlyCommand::Search(a)) => a.r,
        _ => unreachable!(),
    };
    assert_eq!(search(&["flyhash", "search", "--db", "d", "--queries", "q", "--r", "7", "--out", "o"]), 7);
    assert_eq!(search(&["flyhash", "search", "--db", "d", "--queries", "q", "--neighbours", "7", "-o", "o"]), 7);
    let eval = |args: &[&str]| match parse(args) {
        Cmd::Flyhash(FlyCommand::Eval(a)) => (a.data, a.ks),
        _ => unreachable!(),
    };
    let e = eval(&["flyhash", "eval", "--data", "f", "--ks", "8,16", "--out", "o"]);
    assert_eq!(e, eval(&["flyhash", "eval", "-i", "f", "--winners", "8,16", "-o", "o"]));
    assert_eq!(e.1, [8, 16]);
    match parse(&["flyhash", "bench", "--data", "f", "--r", "9"]) {
        Cmd::Flyhash(FlyCommand::Bench(a)) => assert_eq!((a.data.to_str(), a.r), (Some("f"), 9)),
        _ => unreachable!(),
    }
    match parse(&["ocnn", "experiment", "--data", "f", "--out", "o"]) {
        Cmd::Ocnn(OcnnCommand::Experiment(a)) => assert_eq!(a.data.to_str(), Some("f")),
        _ => unreachable!(),
    }
    match parse(&["cortical", "features", "--net", "n", "--out", "o"]) {
        Cmd::Cortical(CorticalCommand::Features(a)) => assert_eq!(a.net.to_str(), Some("n")),
        _ => unreachable!(),
    }
    // Hidden: `--help` shows the new names only.
    let help = built().find_subcommand("flyhash").unwrap().find_subcommand("hash").unwrap().clone().render_help();
    let help = help.to_string();
    assert!(help.contains("--code-bits") && !help.contains("--m ") && !help.contains("--k "), "{help}");
}

#[test]
fn space_separated_gammas_still_parse() {
    let g = |args: &[&str]| match parse(args) {
        Cmd::Gbnn(neurobits_cli::cli::GbnnCommand::Experiment(a)) => a.gammas,
        _ => unreachable!(),
    };
    let base = ["gbnn", "experiment", "--scenario", "1", "--out", "o", "--gammas"];
    assert_eq!(g(&[&base[..], &["0,1,2"]].concat()), [0, 1, 2]);
    assert_eq!(g(&[&base[..], &["0", "1", "2"]].concat()), [0, 1, 2]);
    assert_eq!(g(&base), Vec::<u32>::new());
    assert_eq!(g(&base[..6]), [0, 1, 2, 4]);
}

fn nb() -> Command {
    Command::cargo_bin("neurobits").unwrap()
}

/// A tiny `gbnn score` input: the result and the truth agree.
fn score_files(d: &Path) -> [String; 4] {
    std::fs::write(d.join("r.csv"), "1,2,3\n0,1|2,3\n").unwrap();
    std::fs::write(d.join("t.csv"), "1,2,3\n0,1,3\n").unwrap();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    ["--result".into(), p("r.csv"), "--truth".into(), p("t.csv")]
}

#[test]
fn threads_zero_is_one_error_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    for args in [vec!["--threads", "0", "gbnn", "score"], vec!["gbnn", "score", "--threads", "0"]] {
        let o = nb().args(&args).args(score_files(d.path())).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
        assert!(err.starts_with("error: ") && err.contains("--threads"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn threads_sets_the_cpu_pool() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("m.csv"), "0,1,2\n2,1,0\n").unwrap();
    std::fs::write(p("p.csv"), "0,?,2\n").unwrap();
    nb().args(["gbnn", "store", "--clusters", "3", "--neurons", "3", "--messages", &p("m.csv"), "-o", &p("n.nb")])
        .assert()
        .success();
    for n in ["1", "3"] {
        let o = nb()
            .args(["gbnn", "retrieve", "--rule", "joint", "--net", &p("n.nb"), "--probes", &p("p.csv"), "-o", &p("r")])
            .args(["--threads", n])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && err.contains(&format!("cpu ({n} threads)")), "{err}");
    }
}

#[test]
fn quiet_silences_summaries_but_not_errors() {
    let d = tempfile::tempdir().unwrap();
    let loud = nb().args(["gbnn", "score"]).args(score_files(d.path())).output().unwrap();
    assert!(loud.status.success() && String::from_utf8_lossy(&loud.stdout).contains("2 probes"));
    for q in [["-q", "gbnn"], ["gbnn", "--quiet"]] {
        let o = nb().args(q).arg("score").args(score_files(d.path())).output().unwrap();
        assert!(o.status.success());
        assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{:?} {:?}", o.stdout, o.stderr);
    }
    let gen = |quiet: bool| {
        let mut c = nb();
        c.args(["gbnn", "generate", "--clusters", "3", "--neurons", "4", "--messages", "2", "-o"]).arg(d.path());
        if quiet {
            c.arg("-q");
        }
        c.output().unwrap()
    };
    assert!(!gen(false).stderr.is_empty());
    let o = gen(true);
    assert!(o.status.success() && o.stdout.is_empty() && o.stderr.is_empty());
    let o = nb().args(["-q", "gbnn", "score", "--result", "/nonexistent", "--truth", "/nonexistent"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: "));
}

/// Runs `args`, expects success, and returns stdout parsed as one JSON document (nothing else may
/// be there) and stderr.
fn json_on_stdout(args: &[String]) -> (serde_json::Value, String) {
    let o = nb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{args:?}: {err}");
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON alone ({e}): {}", String::from_utf8_lossy(&o.stdout)));
    (v, err)
}

#[test]
fn a_dash_output_gives_json_alone_on_stdout() {
    let d = tempfile::tempdir().unwrap();
    let args: Vec<String> = ["gbnn", "score"].map(String::from).into_iter().chain(score_files(d.path())).collect();
    let (v, err) = json_on_stdout(&[&args[..], &["--json".into(), "-".into()]].concat());
    assert_eq!(v["probes"].as_u64(), Some(2));
    assert!(err.contains("2 probes"), "the summary moves to stderr: {err}");
    let fpga = "fpga --clusters 3 --neurons 3 --messages 4 --probes 4 --erased 1 -o -";
    let (v, err) = json_on_stdout(&fpga.split(' ').map(String::from).collect::<Vec<_>>());
    assert!(v["rules"].is_array());
    assert!(err.contains("cycles"), "the table moves to stderr: {err}");
}
