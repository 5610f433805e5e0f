//! Running the firmware (`mcu/`) under QEMU on each board it is built for, and reading its defmt
//! log.

use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where `make mcu-test` leaves the Cortex-M3 firmware.
pub const DEFAULT_ELF: &str = "mcu/target/thumbv7m-none-eabi/release/neurobits-mcu";

/// A board the firmware runs on under QEMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// QEMU's machine name.
    pub machine: &'static str,
    /// The core, as the tables name it.
    pub core: &'static str,
    /// Rust target triple.
    pub target: &'static str,
    /// The QEMU system emulator.
    pub qemu: &'static str,
    /// QEMU arguments before the common ones (`-cpu` where the machine needs it).
    pub qemu_args: &'static [&'static str],
    /// RAM in bytes.
    pub ram: u64,
    /// Flash in bytes (as `mcu/memory/<target>.x` declares it).
    pub flash: u64,
}

impl Board {
    /// The release ELF `make mcu-build` leaves for this board.
    pub fn elf(&self) -> PathBuf {
        PathBuf::from(format!("mcu/target/{}/release/neurobits-mcu", self.target))
    }
}

const KIB: u64 = 1024;

/// Every board of `make mcu-test`, smallest core first.
pub const BOARDS: [Board; 5] = [
    Board {
        machine: "microbit",
        core: "cortex-m0",
        target: "thumbv6m-none-eabi",
        qemu: "qemu-system-arm",
        qemu_args: &[],
        ram: 16 * KIB,
        flash: 256 * KIB,
    },
    Board {
        machine: "lm3s6965evb",
        core: "cortex-m3",
        target: "thumbv7m-none-eabi",
        qemu: "qemu-system-arm",
        qemu_args: &["-cpu", "cortex-m3"],
        ram: 64 * KIB,
        flash: 256 * KIB,
    },
    Board {
        machine: "mps2-an386",
        core: "cortex-m4f",
        target: "thumbv7em-none-eabihf",
        qemu: "qemu-system-arm",
        qemu_args: &[],
        ram: 4096 * KIB,
        flash: 4096 * KIB,
    },
    Board {
        machine: "mps2-an505",
        core: "cortex-m33",
        target: "thumbv8m.main-none-eabihf",
        qemu: "qemu-system-arm",
        qemu_args: &[],
        ram: 4096 * KIB,
        flash: 4096 * KIB,
    },
    Board {
        machine: "sifive_e",
        core: "rv32imac",
        target: "riscv32imac-unknown-none-elf",
        qemu: "qemu-system-riscv32",
        qemu_args: &[],
        ram: 16 * KIB,
        flash: 4096 * KIB,
    },
];

/// One rule's line of the firmware log.
#[derive(Clone, Debug)]
pub struct FirmwareRule {
    /// Rule name.
    pub rule: String,
    /// FNV-1a digest of the outputs.
    pub digest: u64,
    /// Updates.
    pub iterations: u32,
    /// Retrievals.
    pub retrievals: u64,
    /// Instructions per retrieval (QEMU instruction count).
    pub instructions_per_retrieval: u64,
}

/// One probe's line of the exported-network mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirmwareResult {
    /// Rule name.
    pub rule: String,
    /// Probe index (line order of the probe stream, blank lines skipped).
    pub probe: u64,
    /// Updates.
    pub iterations: u32,
    /// Per cluster, the one active symbol, −1 where none or several are.
    pub symbols: Vec<i64>,
}

/// What the firmware reported.
#[derive(Clone, Debug)]
pub struct FirmwareLog {
    /// The board line (`board NAME CORE flash= ram=`).
    pub board: String,
    /// Configuration, as key/value strings: the self-test's `config` line, or the exported
    /// network's `network` line.
    pub config: HashMap<String, String>,
    /// Whether this is the exported-network mode (a `network` line) rather than the self-test.
    pub exported: bool,
    /// Per-probe results of the exported-network mode.
    pub results: Vec<FirmwareResult>,
    /// Per-rule results.
    pub rules: Vec<FirmwareRule>,
    /// FNV-1a digest of the outputs.
    pub digest: u64,
    /// Peak stack use in bytes.
    pub stack_peak: u64,
    /// Bytes of W on the target.
    pub weights_bytes: u64,
    /// The cortical network's configuration A line (`steps`, `weights_bytes`,
    /// `weights_sha256`, `winners_sha256`), if the firmware logged one.
    pub cortical: Option<HashMap<String, String>>,
}

fn fields(line: &str) -> HashMap<String, String> {
    line.split_whitespace().filter_map(|f| f.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn num<T: std::str::FromStr>(f: &HashMap<String, String>, k: &str) -> Result<T> {
    f.get(k)
        .ok_or_else(|| anyhow!("firmware log: field {k} missing"))?
        .parse()
        .map_err(|_| anyhow!("firmware log: field {k} is not a number"))
}

/// Parses the text `defmt-print` decoded.
pub fn parse(log: &str) -> Result<FirmwareLog> {
    let line = |prefix: &str| {
        log.lines().find(|l| l.starts_with(prefix)).ok_or_else(|| anyhow!("firmware log: no '{prefix}' line"))
    };
    let exported = log.lines().any(|l| l.starts_with("network "));
    let config = fields(line(if exported { "network " } else { "config " })?);
    let mut results = Vec::new();
    for l in log.lines().filter(|l| l.starts_with("result ")) {
        let f = fields(l);
        let list = l.split_once("symbols=[").and_then(|(_, r)| r.split_once(']')).map(|(x, _)| x);
        let symbols = list
            .ok_or_else(|| anyhow!("firmware log: a result line without symbols"))?
            .split(',')
            .map(|x| x.trim().parse().map_err(|_| anyhow!("firmware log: bad symbol {x:?}")))
            .collect::<Result<Vec<i64>>>()?;
        results.push(FirmwareResult {
            rule: f.get("rule").cloned().unwrap_or_default(),
            probe: num(&f, "probe")?,
            iterations: num(&f, "iterations")?,
            symbols,
        });
    }
    let mut rules = Vec::new();
    for l in log.lines().filter(|l| l.starts_with("rule ")) {
        let f = fields(l);
        rules.push(FirmwareRule {
            rule: l.split_whitespace().nth(1).unwrap_or_default().to_string(),
            digest: num(&f, "digest")?,
            iterations: num(&f, "iterations")?,
            retrievals: num(&f, "retrievals")?,
            instructions_per_retrieval: num(&f, "instructions_per_retrieval")?,
        });
    }
    let mem = fields(line("memory ")?);
    let digest = line("digest ")?["digest ".len()..].trim().parse().map_err(|_| anyhow!("firmware log: bad digest"))?;
    Ok(FirmwareLog {
        board: line("board ")?["board ".len()..].to_string(),
        config,
        exported,
        results,
        rules,
        digest,
        stack_peak: num(&mem, "stack_peak")?,
        weights_bytes: num(&mem, "weights")?,
        cortical: log.lines().find(|l| l.starts_with("cortical ")).map(fields),
    })
}

fn tool(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/bin").join(name));
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(home)
        .find(|p| p.is_file())
}

/// Why `board`'s firmware cannot be run here, if it cannot.
pub fn unavailable_on(board: &Board, elf: &Path) -> Option<String> {
    if !elf.is_file() {
        return Some(format!("firmware not built ({}; run make mcu-build)", elf.display()));
    }
    for t in [board.qemu, "defmt-print"] {
        if tool(t).is_none() {
            return Some(format!("{t} not installed (make setup)"));
        }
    }
    None
}

/// Why the Cortex-M3 firmware cannot be run here, if it cannot.
pub fn unavailable(elf: &Path) -> Option<String> {
    unavailable_on(&BOARDS[1], elf)
}

/// Runs `board`'s firmware `elf` under QEMU with the semihosting command-line words `args`
/// (`mode=selftest`, `probes=PATH`, `rule=all`, …); returns its decoded log and the text.
pub fn run_on(board: &Board, elf: &Path, args: &[String]) -> Result<(FirmwareLog, String)> {
    let text = run_text(board, elf, args)?;
    Ok((parse(&text)?, text))
}

/// [`run_on`] without parsing: the decoded text (the FlyNN mode's log has its own lines).
pub fn run_text(board: &Board, elf: &Path, args: &[String]) -> Result<String> {
    let qemu = tool(board.qemu).ok_or_else(|| anyhow!("{} not installed", board.qemu))?;
    let print = tool("defmt-print").ok_or_else(|| anyhow!("defmt-print not installed"))?;
    let mut semi = String::from("enable=on,target=native,arg=neurobits-mcu");
    for a in args {
        semi += &format!(",arg={}", a.replace(',', ",,"));
    }
    let out = Command::new("timeout")
        .arg("300")
        .arg(qemu)
        .args(board.qemu_args)
        .args(["-machine", board.machine, "-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", &semi, "-icount", "shift=0", "-kernel"])
        .arg(elf)
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", board.qemu))?;
    let mut child = Command::new(print)
        .arg("-e")
        .arg(elf)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run defmt-print")?;
    child.stdin.take().expect("piped").write_all(&out.stdout)?;
    let decoded = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&decoded.stdout).to_string();
    if !out.status.success() {
        let why = text.lines().find(|l| l.contains("ERROR")).unwrap_or("no log").to_string();
        bail!("the firmware failed under QEMU ({}): {why}", board.machine);
    }
    Ok(text)
}

/// Runs the Cortex-M3 firmware's PRNG self-test with a workload; returns its decoded log.
pub fn run(elf: &Path, stored: u64, probes: u64, erased: usize, seed: u64) -> Result<FirmwareLog> {
    let args = [
        "mode=selftest".to_string(),
        format!("stored={stored}"),
        format!("probes={probes}"),
        format!("erased={erased}"),
        format!("seed={seed}"),
    ];
    Ok(run_on(&BOARDS[1], elf, &args)?.0)
}
