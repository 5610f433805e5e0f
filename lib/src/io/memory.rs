//! Refuse sizes that cannot fit before allocating them: Linux overcommits, so an allocation
//! that "succeeds" may still kill the process when touched. One budget for every allocation
//! sized by user input: the least of the memory available now, what the process's cgroup still
//! allows, and what its address-space limit (`ulimit -v`) leaves.

use anyhow::{bail, Result};

fn meminfo_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// What the cgroup (v2) still allows: `memory.max − memory.current`, when limited.
fn cgroup_left() -> Option<u64> {
    let rel = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = rel.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max" (no limit) fails to parse: None
    let current: u64 = std::fs::read_to_string(dir.join("memory.current")).ok()?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// What `RLIMIT_AS` leaves: the limit minus the current virtual size, when limited.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let limit: u64 = line.split_whitespace().nth(3)?.parse().ok()?; // "unlimited": None
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let vm = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = vm.split_whitespace().nth(1)?.parse().ok()?;
    Some(limit.saturating_sub(kib.saturating_mul(1024)))
}

/// Bytes this process can still allocate and touch: the least of the limits that apply.
///
/// ```
/// assert!(neurobits::io::memory::available_bytes().is_some_and(|b| b > 0));
/// ```
pub fn available_bytes() -> Option<u64> {
    [meminfo_available(), cgroup_left(), address_space_left()].into_iter().flatten().min()
}

/// Fails with a one-line message when `bytes` of `what` (the peak it adds, all buffers counted)
/// would not fit in the memory budget ([`crate::budget::check`], which this is).
///
/// ```
/// assert!(neurobits::io::memory::ensure_fits("a byte", 1).is_ok());
/// assert!(neurobits::io::memory::ensure_fits("everything", u128::MAX).is_err());
/// ```
pub fn ensure_fits(what: &str, bytes: u128) -> crate::Result<()> {
    crate::budget::check(what, bytes)
}

/// Free bytes for an unprivileged user on the file system holding `dir`, if the system says.
pub fn free_disk_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    (st.f_bavail as u64).checked_mul(st.f_frsize as u64)
}

/// Fails with a one-line message when `bytes` of output would not fit on the disk holding `dir`.
///
/// ```
/// let dir = std::env::temp_dir();
/// assert!(neurobits::io::memory::ensure_disk(&dir, "a byte", 1).is_ok());
/// assert!(neurobits::io::memory::ensure_disk(&dir, "everything", u128::MAX).is_err());
/// ```
pub fn ensure_disk(dir: &std::path::Path, what: &str, bytes: u128) -> Result<()> {
    // The nearest existing ancestor: the directory may not be created yet.
    let existing = dir.ancestors().find(|d| d.is_dir()).unwrap_or(std::path::Path::new("."));
    if let Some(free) = free_disk_bytes(existing) {
        if bytes > free as u128 {
            let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
            bail!(
                "{what} needs {:.2} GiB but only {:.2} GiB is free in {}",
                gib(bytes),
                gib(free as u128),
                dir.display()
            );
        }
    }
    Ok(())
}
