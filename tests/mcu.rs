//! The Cortex-M firmware (mcu/, under QEMU) decodes exactly what the host decodes: its digest of
//! all final states, per rule and overall, and its iteration counts must equal the host's for the
//! configuration it logged. The log comes from `$NEUROBITS_MCU_LOG` (written by `make mcu-test`)
//! or from running the firmware here; without either the test fails (`make setup` installs QEMU and
//! `make mcu-build` builds the firmware), unless `NEUROBITS_SKIP_MCU` is set to skip it knowingly.

use neurobits::gbnn::mcu::{self, FirmwareLog};
use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{retrieve, Network, Params, Rule};
use std::path::Path;

#[path = "common/cortical.rs"]
mod common;

fn firmware_log() -> Option<FirmwareLog> {
    if let Ok(path) = std::env::var("NEUROBITS_MCU_LOG") {
        return Some(mcu::parse(&std::fs::read_to_string(path).unwrap()).unwrap());
    }
    let elf = Path::new(mcu::DEFAULT_ELF);
    match mcu::unavailable(elf) {
        None => Some(mcu::run(elf, 400, 100, 5, 1).unwrap()),
        Some(why) => {
            assert!(
                std::env::var_os("NEUROBITS_SKIP_MCU").is_some(),
                "the firmware cannot run: {why} (run `make test`, or set NEUROBITS_SKIP_MCU=1 to skip)"
            );
            eprintln!("NEUROBITS_SKIP_MCU set: skipped ({why})");
            None
        }
    }
}

#[test]
fn firmware_digest_equals_host_digest() {
    let Some(log) = firmware_log() else { return };
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
        assert_eq!(fw.digest, d, "{}: firmware and host states differ", rule.name());
        assert_eq!(fw.iterations, iters, "{}: iteration counts differ", rule.name());
        assert!(fw.instructions_per_retrieval > 0);
    }
    assert_eq!(log.digest, total, "firmware digest {} != host digest {total}", log.digest);
    println!("firmware digest {} equals the host's ({probes} probes x {} rules)", log.digest, Rule::ALL.len());
}

/// The firmware trains the cortical network's configuration A (LGN, 2 400 learning steps, the
/// evaluation pass, all by the core) and logs the spec's two SHA-256 digests.
#[test]
fn firmware_reproduces_the_cortical_configuration_a_digests() {
    let Some(log) = firmware_log() else { return };
    let c = log.cortical.expect("the firmware logged no cortical line");
    assert_eq!(c["steps"], "2400");
    assert_eq!(c["weights_sha256"], common::A_WEIGHTS);
    assert_eq!(c["winners_sha256"], common::A_WINNERS);
    println!("firmware: cortical configuration A digests equal the spec's ({} bytes of weights)", c["weights_bytes"]);
}
