//! The firmware (mcu/) on every board under QEMU decodes exactly what the host decodes, in both
//! of its modes:
//! * the exported network (`make mcu-build` stores generated messages with `gbnn store`, exports
//!   the network with `gbnn export` into the firmware's flash): for every rule and probe of the
//!   stream the symbols and updates, each rule's digest of all final states, and the digest of W
//!   read back from flash must equal the host's for the same network file and probe file;
//! * the FlyNN classifier (`flynn fit` on sklearn's digits, exported by `flynn export`): every
//!   input vector of the stream gets the host's class;
//! * the PRNG self-test: per rule and overall digests and iteration counts must equal the
//!   host's for the configuration it logged; where RAM holds it, the cortical network's
//!   configuration A must give the spec's SHA-256 digests.
//!
//! The network and probes are `$NEUROBITS_MCU_NET` and `$NEUROBITS_MCU_PROBES` (default: what
//! `make mcu-build` writes under out/mcu/); the logs go to `$NEUROBITS_MCU_LOGS` when set.
//! A missing QEMU, defmt-print, firmware or input fails the test (`make setup`, `make
//! mcu-build`), unless `NEUROBITS_SKIP_MCU` is set to skip it knowingly.

use neurobits::flyhash::{classifier::FlyNN, data::Matrix};
use neurobits::gbnn::mcu::{self, Board, FirmwareLog, BOARDS};
use neurobits::gbnn::model::Gbnn;
use neurobits::model::Model;
use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::gbnn::decode::decode_cluster;
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{retrieve, retrieve_in, Mode, Network, Params, Rule};
use std::path::{Path, PathBuf};

#[path = "common/cortical.rs"]
mod common;

fn env_path(key: &str, default: &str) -> PathBuf {
    std::env::var_os(key).map_or_else(|| PathBuf::from(default), PathBuf::from)
}

/// Runs `board`'s firmware with `args`; `None` only when skipping knowingly.
fn firmware_log(board: &Board, args: &[String], name: &str) -> Option<FirmwareLog> {
    let elf = board.elf();
    if let Some(why) = mcu::unavailable_on(board, &elf) {
        assert!(
            std::env::var_os("NEUROBITS_SKIP_MCU").is_some(),
            "{}: the firmware cannot run: {why} (run `make mcu-test`, or set NEUROBITS_SKIP_MCU=1 to skip)",
            board.machine
        );
        eprintln!("NEUROBITS_SKIP_MCU set: skipped ({why})");
        return None;
    }
    let (log, text) = mcu::run_on(board, &elf, args).unwrap();
    if let Some(dir) = std::env::var_os("NEUROBITS_MCU_LOGS") {
        std::fs::write(PathBuf::from(dir).join(format!("{name}.log")), text).unwrap();
    }
    Some(log)
}

fn exported_network_equals_host(board: &Board) {
    let probes_file = env_path("NEUROBITS_MCU_PROBES", "out/mcu/data/probes.csv");
    exported_mode_equals_host(board, Mode::Erasure, &probes_file, board.machine);
}

/// The noisy and sparse modes (issue 36) on `board`: the same messages probed with wrong symbols
/// (`make mcu-net` writes out/mcu/noisy) and with silent clusters (out/mcu/sparse), every rule
/// the mode defines, state for state against the host.
fn exported_modes_equal_host(board: &Board) {
    let noisy = env_path("NEUROBITS_MCU_NOISY", "out/mcu/noisy/probes.csv");
    exported_mode_equals_host(board, Mode::Noisy, &noisy, &format!("{}-noisy", board.machine));
    let sparse = env_path("NEUROBITS_MCU_SPARSE", "out/mcu/sparse/probes.csv");
    exported_mode_equals_host(board, Mode::Sparse, &sparse, &format!("{}-sparse", board.machine));
}

/// The exported network retrieving `probes_file` in `mode` with every rule the mode defines:
/// each probe's symbols and updates, each rule's digest and the overall digest equal the host's.
fn exported_mode_equals_host(board: &Board, mode: Mode, probes_file: &Path, log_name: &str) {
    let net_file = env_path("NEUROBITS_MCU_NET", "out/mcu/net.nbg");
    for f in [net_file.as_path(), probes_file] {
        assert!(f.is_file(), "{} is missing: run `make mcu-build` (it exports the network)", f.display());
    }
    let probes_abs = std::fs::canonicalize(probes_file).unwrap();
    let args = [format!("probes={}", probes_abs.display()), "rule=all".to_string(), format!("mode={}", mode.name())];
    let Some(log) = firmware_log(board, &args, log_name) else { return };
    assert!(log.exported);
    let model = Gbnn::load(&net_file).unwrap();
    let net = model.network().unwrap();
    let g = *net.geometry();
    let cfg = |k: &str| log.config.get(k).unwrap_or_else(|| panic!("network line: {k} missing")).clone();
    assert_eq!(
        cfg("weights_fnv").parse::<u64>().unwrap(),
        fnv1a_words(FNV_OFFSET, net.weights()),
        "{}: the firmware's W differs from {} (rebuild with `make mcu-build`)",
        board.machine,
        net_file.display()
    );
    assert_eq!((cfg("C"), cfg("L")), (g.clusters().to_string(), g.neurons_per_cluster().to_string()));
    assert_eq!(cfg("mode"), mode.name());
    let params = Params { gamma: cfg("gamma").parse().unwrap(), max_iter: cfg("max_iter").parse().unwrap() };
    let probes = neurobits::io::symbols::read(probes_file, &g, true).unwrap();
    let k = probes.len() / g.clusters();
    let (mut v, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()]);
    let mut total = FNV_OFFSET;
    let rules: Vec<Rule> = Rule::ALL.into_iter().filter(|r| r.supports(mode)).collect();
    assert_eq!(log.rules.len(), rules.len());
    assert_eq!(log.results.len(), k * rules.len(), "one result line per probe and rule");
    let mut results = log.results.iter();
    for (&rule, fw) in rules.iter().zip(&log.rules) {
        assert_eq!(fw.rule, rule.name());
        let (mut d, mut iters) = (FNV_OFFSET, 0u32);
        for (p, probe) in probes.chunks(g.clusters()).enumerate() {
            let st = retrieve_in(&g, net.weights(), probe, rule, mode, &params, &mut v, &mut s);
            let symbols: Vec<i64> =
                (0..g.clusters()).map(|c| decode_cluster(&g, &v, c).unique().map_or(-1, i64::from)).collect();
            let r = results.next().unwrap();
            assert_eq!((r.rule.as_str(), r.probe), (rule.name(), p as u64));
            assert_eq!((r.iterations, &r.symbols), (st.iterations, &symbols), "{} probe {p}", rule.name());
            iters += st.iterations;
            d = fnv1a_words(d, &v);
            total = fnv1a_words(total, &v);
        }
        assert_eq!(
            (fw.digest, fw.iterations, fw.retrievals),
            (d, iters, k as u64),
            "{}: {}",
            board.machine,
            rule.name()
        );
        assert!(fw.instructions_per_retrieval > 0);
    }
    assert_eq!(log.digest, total, "{}: firmware digest {} != host digest {total}", board.machine, log.digest);
    println!(
        "{}: exported network, {k} {} probes x {} rules: digest {total} equals the host's",
        board.machine,
        mode.name(),
        rules.len()
    );
}

fn selftest_equals_host(board: &Board) {
    let Some(log) = firmware_log(board, &["mode=selftest".to_string()], &format!("{}-selftest", board.machine)) else {
        return;
    };
    assert!(!log.exported);
    let cfg = |k: &str| log.config.get(k).unwrap_or_else(|| panic!("config {k} missing")).clone();
    let n = |k: &str| cfg(k).parse::<u64>().unwrap_or_else(|_| panic!("config {k} not a number"));
    let (c, l, stored, probes, erased) =
        (n("C") as usize, n("L") as usize, n("stored"), n("probes"), n("erased") as usize);
    let params = Params { gamma: n("gamma") as u32, max_iter: n("max_iter") as u32 };
    let mut net = Network::new(c, l).unwrap();
    net.store_random(n("message_seed"), stored);
    let g = *net.geometry();
    let plan = ProbePlan::new(g, n("message_seed"), stored, n("probe_seed"), probes, erased).unwrap();
    let (mut v, mut s, mut m) = (vec![0; g.row_words()], vec![0; g.row_words()], vec![0u16; c]);
    let mut total = FNV_OFFSET;
    assert_eq!(log.rules.len(), Rule::ALL.len());
    for (rule, fw) in Rule::ALL.into_iter().zip(&log.rules) {
        assert_eq!(fw.rule, rule.name());
        let (mut d, mut iters) = (FNV_OFFSET, 0u32);
        for p in 0..probes {
            plan.probe(p, &mut m);
            iters += retrieve(&g, net.weights(), &m, rule, &params, &mut v, &mut s).iterations;
            d = fnv1a_words(d, &v);
            total = fnv1a_words(total, &v);
        }
        assert_eq!(fw.digest, d, "{}: {}: firmware and host states differ", board.machine, rule.name());
        assert_eq!(fw.iterations, iters, "{}: {}: iteration counts differ", board.machine, rule.name());
        assert!(fw.instructions_per_retrieval > 0);
    }
    assert_eq!(log.digest, total, "{}: firmware digest {} != host digest {total}", board.machine, log.digest);
    println!("{}: self-test {c}x{l}: digest {} equals the host's", board.machine, log.digest);
    // The cortical network's configuration A (LGN, 2 400 learning steps, the evaluation pass,
    // all by the core) needs more than the 16 KiB boards' RAM.
    if board.ram >= 64 * 1024 {
        let c = log.cortical.expect("the firmware logged no cortical line");
        assert_eq!(c["steps"], "2400");
        assert_eq!(c["weights_sha256"], common::A_WEIGHTS);
        assert_eq!(c["winners_sha256"], common::A_WINNERS);
        println!("{}: cortical configuration A digests equal the spec's", board.machine);
    } else {
        assert!(log.cortical.is_none());
    }
}

/// The FlyNN mode: the classifier `flynn export` wrote into flash gives every input vector the
/// host's class.
fn flynn_equals_host(board: &Board) {
    let model_file = env_path("NEUROBITS_MCU_FLYNN", "out/mcu/digits/flynn.nbm");
    let inputs_file = env_path("NEUROBITS_MCU_FLYNN_INPUTS", "out/mcu/digits/test-x.csv");
    for f in [&model_file, &inputs_file] {
        assert!(f.is_file(), "{} is missing: run `make mcu-build` (it exports the classifier)", f.display());
    }
    let elf = board.elf();
    if let Some(why) = mcu::unavailable_on(board, &elf) {
        assert!(std::env::var_os("NEUROBITS_SKIP_MCU").is_some(), "{}: {why}", board.machine);
        return;
    }
    let args = ["mode=flynn".to_string(), format!("inputs={}", std::fs::canonicalize(&inputs_file).unwrap().display())];
    let text = mcu::run_text(board, &elf, &args).unwrap();
    if let Some(dir) = std::env::var_os("NEUROBITS_MCU_LOGS") {
        std::fs::write(PathBuf::from(dir).join(format!("{}-flynn.log", board.machine)), &text).unwrap();
    }
    let model = FlyNN::load(&model_file).unwrap();
    let rows: Vec<Vec<f32>> = std::fs::read_to_string(&inputs_file)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect();
    let x = Matrix { rows: rows.len(), cols: rows[0].len(), data: rows.concat() };
    let host = model.predict(&x).unwrap();
    let fw: Vec<i64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("class input="))
        .map(|l| l.split_once(" class=").unwrap().1.trim().parse().unwrap())
        .collect();
    assert_eq!(fw, host, "{}: firmware and host classes differ", board.machine);
    assert!(text.contains(&format!("flynn inputs={} ", host.len())), "{text}");
    println!("{}: FlyNN classes of {} inputs equal the host's", board.machine, host.len());
}

macro_rules! boards {
    ($($name:ident $selftest:ident $flynn:ident = $i:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(BOARDS[$i].machine.replace('-', "_"), stringify!($name).trim_end_matches("_exported"));
            exported_network_equals_host(&BOARDS[$i]);
        }
        #[test]
        fn $selftest() {
            selftest_equals_host(&BOARDS[$i]);
        }
        #[test]
        fn $flynn() {
            flynn_equals_host(&BOARDS[$i]);
        }
    )*};
}

boards! {
    microbit_exported microbit_selftest microbit_flynn = 0;
    lm3s6965evb_exported lm3s6965evb_selftest lm3s6965evb_flynn = 1;
    mps2_an386_exported mps2_an386_selftest mps2_an386_flynn = 2;
    mps2_an505_exported mps2_an505_selftest mps2_an505_flynn = 3;
    sifive_e_exported sifive_e_selftest sifive_e_flynn = 4;
}

// Two boards, one of each instruction set: the modes add no code of their own to the firmware
// (the core's rules), so the other boards' erasure runs cover their builds.
#[test]
fn lm3s6965evb_noisy_and_sparse() {
    exported_modes_equal_host(&BOARDS[1]);
}

#[test]
fn sifive_e_noisy_and_sparse() {
    exported_modes_equal_host(&BOARDS[4]);
}

/// A malformed probe stream stops the firmware with one error naming the line and the fault.
#[test]
fn firmware_refuses_a_malformed_probe_line() {
    let board = &BOARDS[1];
    if mcu::unavailable_on(board, &board.elf()).is_some() && std::env::var_os("NEUROBITS_SKIP_MCU").is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (text, why) in [
        ("1,2,3,4,5,6,7,8\n\n1,2,3\n", "probes line 3: fewer fields than clusters"),
        ("1,2,3,4,5,6,7,x\n", "probes line 1: a byte other than a digit"),
        ("1,2,3,4,5,6,7,50\n", "probes line 1: a symbol not below L"),
        ("1,2,3,4,5,6,7,8,9\n", "probes line 1: more fields than clusters"),
        ("1,2,3,4,5,6,7,-?\n", "probes line 1: a byte other than a digit, '?', '-'"),
        // A silent cluster outside the sparse mode: the core's check refuses the probe.
        ("1,2,3,4,5,6,7,-\n", "core error"),
    ] {
        let p = dir.path().join("bad.csv");
        std::fs::write(&p, text).unwrap();
        let e = mcu::run_on(board, &board.elf(), &[format!("probes={}", p.display())]).unwrap_err().to_string();
        assert!(e.contains(why), "{text:?}: {e}");
    }
}
