//! Checks shared by every configuration: the library's `validate()` methods and the CLI's flag
//! parsers call the same functions, so a value refused on the command line is refused in a
//! program too, with the same words.

/// A count of at least 1 (`--probes`, `--neighbours`, …): 0 would divide by zero or do nothing.
///
/// ```
/// assert_eq!(neurobits::validate::positive("3"), Ok(3));
/// assert!(neurobits::validate::positive("0").is_err());
/// ```
pub fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A clock frequency in MHz between 0.001 and 10⁶ (a subnormal clock made the chart loop forever).
pub fn clock_mhz(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (1e-3..=1e6).contains(&f) => Ok(f),
        Ok(_) => Err("must be between 0.001 and 1000000 MHz".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A fraction in [0, 1] (FlyNN's decay).
pub fn unit_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(g) if (0.0..=1.0).contains(&g) => Ok(g),
        _ => Err(format!("{s} is not a number in [0, 1]")),
    }
}

/// FlyNN's error-driven rounds, 0 to `classifier::MAX_ROUNDS`.
pub fn rounds(s: &str) -> Result<u32, String> {
    let most = crate::flyhash::classifier::MAX_ROUNDS;
    match s.parse::<u32>() {
        Ok(r) if r <= most => Ok(r),
        _ => Err(format!("{s} is not a whole number of rounds in 0..={most}")),
    }
}

/// Most sum-of-sum updates `--max-iter` accepts: an oscillating probe runs them all.
pub const MAX_ITER: u32 = 10_000;

/// The most random messages `fpga` and `hwcost` store: each is a loop over the clusters' pairs,
/// and a GBNN is saturated (every weight set) long before; `--messages 10^18` once ran for ever.
pub const MAX_MESSAGES: u64 = 10_000_000;
