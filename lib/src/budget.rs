//! The memory budget: the one number every allocation sized from input is checked against
//! *before* it is made. Linux overcommits, so an allocation that "succeeds" can still kill the
//! process when its pages are touched; and a 2 GiB request on a 64 GiB machine shared with other
//! jobs is a hostile input there too. So the library refuses, with one line naming what needed
//! how much against which budget, instead of allocating.
//!
//! The budget is, by default, [`DEFAULT_PERCENT`] % of what the process can still touch
//! ([`crate::io::memory::available_bytes`]: the least of `MemAvailable`, the cgroup's headroom and
//! `ulimit -v`'s), at most [`DEFAULT_CAP`]: the rest is left to the system, the page cache and
//! the buffers nobody counts (a formatter's strings, a thread's stack). A program sets its own
//! with [`set_max`] (the CLI's global `--max-memory SIZE`, parsed by [`parse_size`]); it is still
//! cut to what is available, since more would be killed, not refused.
//!
//! The budget is a plain process-wide value, like the CPU thread count: the library never sees
//! the command line; the CLI (or a Python program) sets it once, and the name of the knob that
//! set it goes into the messages so the user knows what to change.

use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The default budget's share of the available memory, in percent.
pub const DEFAULT_PERCENT: u64 = 80;
/// The default budget's ceiling, in bytes (1 TiB): a machine with more still gets a finite one.
pub const DEFAULT_CAP: u64 = 1 << 40;

/// The user's maximum in bytes; 0 = not set (the default applies).
static MAX: AtomicU64 = AtomicU64::new(0);
/// What set [`MAX`] (`--max-memory`, `max_memory`), for the messages.
static KNOB: Mutex<&'static str> = Mutex::new("--max-memory");

/// Sets the budget to `bytes` (`None`: back to the default); `knob` is how the user sets it
/// (the CLI's `--max-memory`), named in every refusal.
///
/// ```
/// use neurobits::budget;
/// budget::set_max(Some(1 << 20), "--max-memory");
/// let e = budget::check("the test's table", 2 << 20).unwrap_err().to_string();
/// assert!(e.starts_with("the test's table needs 2.0 MiB, more than the memory budget of 1.0 MiB (--max-memory"), "{e}");
/// budget::set_max(None, "--max-memory");
/// assert!(budget::check("a byte", 1).is_ok());
/// ```
pub fn set_max(bytes: Option<u64>, knob: &'static str) {
    MAX.store(bytes.unwrap_or(0), Ordering::Relaxed);
    if let Ok(mut k) = KNOB.lock() {
        *k = knob;
    }
}

/// The budget now, in bytes, and where it comes from (for messages).
pub fn limit() -> (u64, String) {
    let avail = crate::io::memory::available_bytes();
    let max = MAX.load(Ordering::Relaxed);
    let knob = KNOB.lock().map(|k| *k).unwrap_or("--max-memory");
    match (max, avail) {
        (0, Some(a)) => {
            let b = (a / 100).saturating_mul(DEFAULT_PERCENT).min(DEFAULT_CAP);
            (b, format!("{DEFAULT_PERCENT}% of the {} available; {knob} sets it", size(a as u128)))
        }
        (0, None) => (DEFAULT_CAP, format!("the default; {knob} sets it")),
        (m, Some(a)) if m > a => (a, format!("{knob} {}, cut to the {} available", size(m as u128), size(a as u128))),
        (m, _) => (m, format!("{knob} {}", size(m as u128))),
    }
}

/// The budget now, in bytes.
pub fn bytes() -> u64 {
    limit().0
}

/// Fails unless `bytes` of `what` (the peak it adds, all its buffers counted) fit in the
/// budget. `what` names the data and, where they come from the user, the file or the options
/// that sized it (`"W of --clusters 8 x --neurons 100000"`).
///
/// ```
/// assert!(neurobits::budget::check("a byte", 1).is_ok());
/// let e = neurobits::budget::check("everything", u128::MAX).unwrap_err();
/// assert!(matches!(e, neurobits::Error::Memory { .. }) && !e.is_io());
/// ```
pub fn check(what: impl std::fmt::Display, bytes: u128) -> Result<()> {
    let (budget, from) = limit();
    if bytes > budget as u128 {
        return Err(Error::Memory { what: what.to_string(), needed: bytes, budget, from });
    }
    Ok(())
}

/// [`check`] for `count` items of `each` bytes (the product cannot overflow: `u128`).
pub fn check_items(what: impl std::fmt::Display, count: u128, each: u128) -> Result<()> {
    check(what, count.saturating_mul(each))
}

/// A size for messages: `512 B`, `3.0 KiB`, `1.5 GiB`, `2.0 PiB`.
///
/// ```
/// assert_eq!(neurobits::budget::size(1536), "1.5 KiB");
/// assert_eq!(neurobits::budget::size(5 << 30), "5.0 GiB");
/// ```
pub fn size(b: u128) -> String {
    const UNITS: [&str; 7] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Parses a size as `--max-memory` takes it: a number of bytes with an optional binary unit
/// `K`, `M`, `G`, `T` (also `KiB`, `KB`, …: all powers of 1024, as `ulimit` and `docker --memory`
/// read them), a fraction allowed (`1.5G`). Zero and more than 2⁶³ bytes are refused.
///
/// ```
/// use neurobits::budget::parse_size;
/// assert_eq!(parse_size("512M").unwrap(), 512 << 20);
/// assert_eq!(parse_size("8g").unwrap(), 8 << 30);
/// assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
/// assert_eq!(parse_size("4096").unwrap(), 4096);
/// assert!(parse_size("0").is_err() && parse_size("-1G").is_err() && parse_size("lots").is_err());
/// assert!(parse_size("99999999T").is_err() && parse_size("nanG").is_err());
/// ```
pub fn parse_size(s: &str) -> Result<u64> {
    let bad = |why: &str| Error::config("max-memory", s, why);
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad("must be a number of bytes with an optional unit K, M, G or T (e.g. 512M, 8G)")),
    };
    let v: f64 = num.parse().map_err(|_| bad("must be a number of bytes with an optional unit K, M, G or T"))?;
    let bytes = v * (1u64 << shift) as f64;
    if bytes < 1.0 {
        return Err(bad("must be at least 1 byte"));
    }
    if bytes > (1u64 << 63) as f64 {
        return Err(bad("must be at most 8388608T"));
    }
    Ok(bytes as u64)
}
