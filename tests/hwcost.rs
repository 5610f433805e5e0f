//! `neurobits hwcost`: every available target decodes the same states (the digest column), and
//! targets that cannot hold the network say so.

use assert_cmd::Command;
use serde_json::Value;

fn run(args: &[&str]) -> Vec<Value> {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("neurobits").unwrap();
    cmd.arg("hwcost").args(args).arg("--out").arg(d.path());
    if std::env::var_os("NEUROBITS_SKIP_MCU").is_none() {
        cmd.arg("--require-mcu");
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["hwcost.md", "hwcost.csv", "hwcost.svg"] {
        assert!(d.path().join(f).is_file(), "{f}");
    }
    serde_json::from_str::<Value>(&std::fs::read_to_string(d.path().join("hwcost.json")).unwrap()).unwrap()["rows"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn digests_agree_across_cpu_fpga_model_and_firmware() {
    let rows = run(&[
        "--clusters",
        "8",
        "--neurons",
        "50",
        "--messages",
        "300",
        "--probes",
        "60",
        "--erased",
        "4",
        "--latency-probes",
        "10",
    ]);
    for rule in ["sum-of-sum", "sum-of-max", "bail-out-early", "joint"] {
        let digests: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r["rule"] == rule && !r["digest"].is_null())
            .map(|r| (r["target"].as_str().unwrap(), r["digest"].as_str().unwrap()))
            .collect();
        let targets: Vec<&str> = digests.iter().map(|d| d.0).collect();
        assert!(targets.iter().any(|t| t.starts_with("cpu 1 core")), "{targets:?}");
        assert!(targets.iter().any(|t| t.starts_with("fpga model")), "{targets:?}");
        if std::env::var_os("NEUROBITS_SKIP_MCU").is_none() {
            assert!(targets.iter().any(|t| t.starts_with("cortex-m3")), "{targets:?}");
        }
        assert!(digests.windows(2).all(|w| w[0].1 == w[1].1), "{rule}: {digests:?}");
    }
}

#[test]
fn small_targets_say_when_the_network_does_not_fit() {
    let rows = run(&[
        "--clusters",
        "16",
        "--neurons",
        "64",
        "--messages",
        "2000",
        "--probes",
        "20",
        "--erased",
        "7",
        "--rules",
        "joint",
        "--latency-probes",
        "5",
    ]);
    let cell = |prefix: &str| rows.iter().find(|r| r["target"].as_str().unwrap().starts_with(prefix)).unwrap().clone();
    assert_eq!(cell("fpga model")["kind"], "does not fit");
    assert!(cell("fpga model")["note"].as_str().unwrap().contains("1024 neurons > the 400-neuron"));
    assert_eq!(cell("cortex-m3")["kind"], "does not fit");
    assert!(cell("cortex-m3")["note"].as_str().unwrap().contains("KiB RAM"));
    assert_eq!(cell("cpu 1 core")["kind"], "measured");
}
