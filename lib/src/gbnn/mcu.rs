//! Running the Cortex-M firmware (`mcu/`) under QEMU and reading its defmt log.

use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where `make mcu-test` leaves the firmware.
pub const DEFAULT_ELF: &str = "mcu/target/thumbv7m-none-eabi/release/neurobits-mcu";

/// One rule's line of the firmware log.
#[derive(Clone, Debug)]
pub struct FirmwareRule {
    /// Rule name.
    pub rule: String,
    /// FNV-1a digest of the outputs.
    pub digest: u64,
    /// Updates.
    pub iterations: u32,
    /// Instructions per retrieval (QEMU instruction count).
    pub instructions_per_retrieval: u64,
}

/// What the firmware reported.
#[derive(Clone, Debug)]
pub struct FirmwareLog {
    /// Configuration, as key/value strings.
    pub config: HashMap<String, String>,
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
    let config = fields(line("config ")?);
    let mut rules = Vec::new();
    for l in log.lines().filter(|l| l.starts_with("rule ")) {
        let f = fields(l);
        rules.push(FirmwareRule {
            rule: l.split_whitespace().nth(1).unwrap_or_default().to_string(),
            digest: num(&f, "digest")?,
            iterations: num(&f, "iterations")?,
            instructions_per_retrieval: num(&f, "instructions_per_retrieval")?,
        });
    }
    let mem = fields(line("memory ")?);
    let digest = line("digest ")?["digest ".len()..].trim().parse().map_err(|_| anyhow!("firmware log: bad digest"))?;
    Ok(FirmwareLog {
        config,
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

/// Why the firmware cannot be run here, if it cannot.
pub fn unavailable(elf: &Path) -> Option<String> {
    if !elf.is_file() {
        return Some(format!("firmware not built ({}; run make mcu-test)", elf.display()));
    }
    for t in ["qemu-system-arm", "defmt-print"] {
        if tool(t).is_none() {
            return Some(format!("{t} not installed (make setup)"));
        }
    }
    None
}

/// Runs the firmware with a workload; returns its decoded log.
pub fn run(elf: &Path, stored: u64, probes: u64, erased: usize, seed: u64) -> Result<FirmwareLog> {
    let qemu = tool("qemu-system-arm").ok_or_else(|| anyhow!("qemu-system-arm not installed"))?;
    let print = tool("defmt-print").ok_or_else(|| anyhow!("defmt-print not installed"))?;
    let semi = format!("enable=on,target=native,arg=neurobits-mcu,arg=stored={stored},arg=probes={probes},arg=erased={erased},arg=seed={seed}");
    let out = Command::new("timeout")
        .arg("600")
        .arg(qemu)
        .args(["-cpu", "cortex-m3", "-machine", "lm3s6965evb", "-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", &semi, "-icount", "shift=0", "-kernel"])
        .arg(elf)
        .stderr(Stdio::null())
        .output()
        .context("cannot run qemu-system-arm")?;
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
        bail!("the firmware failed under QEMU: {why}");
    }
    parse(&text)
}
