//! `hwcost`'s microcontroller rows: the firmware's PRNG self-test on every board of
//! [`super::mcu::BOARDS`] under QEMU, with the hwcost workload. The figures are instruction
//! counts under emulation (`-icount shift=0`), not cycles of a chip; the time beside them
//! assumes one instruction per cycle at `--mcu-clock-mhz`.

use anyhow::{anyhow, bail, Result};
use neurobits_core::gbnn::Rule;

use super::hwcost::{missing, HwcostConfig, Row};
use super::mcu::{self, BOARDS};

/// One row per board and rule; boards whose RAM cannot hold the self-test's W, or whose
/// firmware is built for another shape, say so.
pub(super) fn mcu_rows(a: &HwcostConfig, rules: &[Rule], w_bytes: u64) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for board in &BOARDS {
        let target = format!("{} {} (QEMU) @{} MHz", board.core, board.machine, a.mcu_clock_mhz);
        if w_bytes > board.ram {
            let note = format!(
                "W needs {:.1} KiB > the {} KiB RAM of the {} (the self-test builds W in RAM; an exported W lives in flash: manual, Microcontrollers)",
                w_bytes as f64 / 1024.0,
                board.ram / 1024,
                board.machine
            );
            rows.extend(missing(&target, rules, "does not fit", &note));
            continue;
        }
        if (a.clusters, a.neurons) != (8, 50) {
            rows.extend(missing(&target, rules, "not available", "the firmware's self-test is built for 8x50"));
            continue;
        }
        let elf = match (&a.firmware, board.target) {
            (Some(f), "thumbv7m-none-eabi") => f.clone(),
            _ => board.elf(),
        };
        if let Some(why) = mcu::unavailable_on(board, &elf) {
            if a.require_mcu {
                bail!("cannot run the firmware on {}: {why}", board.machine);
            }
            rows.extend(missing(&target, rules, "not available", &why));
            continue;
        }
        let log = mcu::run_on(board, &elf, &workload(a))?.0;
        for &rule in rules {
            let fw = log
                .rules
                .iter()
                .find(|r| r.rule == rule.name())
                .ok_or_else(|| anyhow!("{}: firmware log has no {} line", board.machine, rule.name()))?;
            let secs = fw.instructions_per_retrieval as f64 / (a.mcu_clock_mhz * 1e6);
            rows.push(Row {
                target: target.clone(),
                rule: rule.name(),
                kind: "instructions under emulation".into(),
                latency_us: Some(secs * 1e6),
                throughput_per_s: Some(1.0 / secs),
                w_bytes: Some(log.weights_bytes),
                state_bytes: Some(log.stack_peak.saturating_sub(log.weights_bytes)),
                digest: Some(format!("{:016x}", fw.digest)),
                note: format!(
                    "{} instructions per retrieval counted by QEMU (-icount shift=0), not cycles; time assumes 1 instruction per cycle at {} MHz; state = measured stack peak less W",
                    fw.instructions_per_retrieval, a.mcu_clock_mhz
                ),
            });
        }
    }
    Ok(rows)
}

/// The self-test's semihosting words for the hwcost workload.
fn workload(a: &HwcostConfig) -> Vec<String> {
    vec![
        "mode=selftest".into(),
        format!("stored={}", a.messages),
        format!("probes={}", a.probes),
        format!("erased={}", a.erased),
        format!("seed={}", a.seed),
    ]
}
