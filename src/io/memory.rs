//! Refuse sizes that cannot fit before allocating them: Linux overcommits, so an allocation
//! that "succeeds" may still kill the process when touched.

use anyhow::{bail, Result};

/// Bytes of memory available now (`MemAvailable`), if the system says.
pub fn available_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Fails with a one-line message when `bytes` of `what` would not fit in memory.
pub fn ensure_fits(what: &str, bytes: u128) -> Result<()> {
    let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
    if let Some(avail) = available_bytes() {
        if bytes > avail as u128 {
            bail!("{what} needs {:.2} GiB but only {:.2} GiB of memory is available", gib(bytes), gib(avail as u128));
        }
    } else if bytes > isize::MAX as u128 {
        bail!("{what} needs {:.2} GiB, more than this machine can address", gib(bytes));
    }
    Ok(())
}
