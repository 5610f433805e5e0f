//! The Cortex-M firmware (mcu/, run under QEMU by `make mcu-test`) decodes exactly what the host
//! decodes: its digest of all final states, per rule and overall, must equal the host's for the
//! configuration it logged.

use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::workload::ProbePlan;
use neurobits_core::{retrieve, Network, Params, Rule};
use std::collections::HashMap;

/// `key=value` fields of the first log line starting with `prefix`.
fn fields<'a>(log: &'a str, prefix: &str) -> HashMap<&'a str, &'a str> {
    let line = log.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no '{prefix}' line in:\n{log}"));
    line.split_whitespace().filter_map(|f| f.split_once('=')).collect()
}

fn num<T: std::str::FromStr>(f: &HashMap<&str, &str>, k: &str) -> T {
    f.get(k).unwrap_or_else(|| panic!("field {k} missing")).parse().unwrap_or_else(|_| panic!("field {k} not a number"))
}

#[test]
fn firmware_digest_equals_host_digest() {
    let Ok(path) = std::env::var("NEUROBITS_MCU_LOG") else {
        assert!(std::env::var("NEUROBITS_REQUIRE_MCU").is_err(), "NEUROBITS_MCU_LOG is not set");
        eprintln!("NEUROBITS_MCU_LOG not set: skipped (make mcu-test runs it)");
        return;
    };
    let log = std::fs::read_to_string(&path).unwrap();
    let cfg = fields(&log, "config");
    let (c, l): (usize, usize) = (num(&cfg, "C"), num(&cfg, "L"));
    let (stored, probes, erased): (u64, u64, usize) = (num(&cfg, "stored"), num(&cfg, "probes"), num(&cfg, "erased"));
    let (mseed, pseed): (u64, u64) = (num(&cfg, "message_seed"), num(&cfg, "probe_seed"));
    let params = Params { gamma: num(&cfg, "gamma"), max_iter: num(&cfg, "max_iter") };

    let mut net = Network::new(c, l).unwrap();
    net.store_random(mseed, stored);
    let g = *net.geometry();
    let plan = ProbePlan::new(g, mseed, stored, pseed, probes, erased).unwrap();
    let (mut v, mut s, mut m) = (vec![0; g.row_words()], vec![0; g.row_words()], vec![0u16; c]);
    let mut total = FNV_OFFSET;
    for rule in Rule::ALL {
        let (mut d, mut iters) = (FNV_OFFSET, 0u32);
        for p in 0..probes {
            plan.probe(p, &mut m);
            iters += retrieve(&g, net.weights(), &m, rule, &params, &mut v, &mut s).iterations;
            d = fnv1a_words(d, &v);
            total = fnv1a_words(total, &v);
        }
        let f = fields(&log, &format!("rule {} ", rule.name()));
        assert_eq!(num::<u64>(&f, "digest"), d, "{}: firmware and host states differ", rule.name());
        assert_eq!(num::<u32>(&f, "iterations"), iters, "{}: iteration counts differ", rule.name());
    }
    let last = log.lines().rev().find(|l| l.starts_with("digest ")).expect("final digest line");
    let fw: u64 = last["digest ".len()..].trim().parse().unwrap();
    assert_eq!(fw, total, "firmware digest {fw} != host digest {total}");
    println!("firmware digest {fw} equals the host's ({} probes x {} rules)", probes, Rule::ALL.len());
}
