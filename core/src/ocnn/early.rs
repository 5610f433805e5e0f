//! The early stop (off by default): the clustering is read off the hit counts every
//! [`EarlyStop::EVERY`] observed iterations, and the run ends once it has stayed the same for a
//! window of checks. One rule for every target: the CPU and the GPU runs call it at the same
//! iterations with the same hit counts, so they stop at the same iteration.

/// When to stop a run early: after `window` checks in a row whose clustering equals the one
/// before (so the same clustering over `window · EVERY` iterations).
///
/// ```
/// use neurobits_core::ocnn::EarlyStop;
/// let mut stop = EarlyStop::new(2);
/// assert!(!stop.observe(false)); // the first check has nothing to compare with
/// assert!(!stop.observe(true));
/// assert!(!stop.observe(false)); // changed: the window starts again
/// assert!(!stop.observe(true));
/// assert!(stop.observe(true)); // unchanged for two checks in a row
/// assert!(EarlyStop::is_check(64, 1000) && !EarlyStop::is_check(65, 1000) && !EarlyStop::is_check(1024, 1024));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EarlyStop {
    window: u32,
    unchanged: u32,
}

impl EarlyStop {
    /// Observed iterations between checks: one block of packed phase bits (a check sees whole
    /// blocks, so its hit counts are complete on every target).
    pub const EVERY: u32 = 64;

    /// A stop after `window` unchanged checks (at least 1).
    pub const fn new(window: u32) -> Self {
        EarlyStop { window: if window == 0 { 1 } else { window }, unchanged: 0 }
    }

    /// Whether a check follows observed iteration `observed` (counted from 1) of `iters`: every
    /// [`EarlyStop::EVERY`] iterations, never at the last (which ends the run anyway).
    #[inline]
    pub const fn is_check(observed: u32, iters: u32) -> bool {
        observed.is_multiple_of(Self::EVERY) && observed < iters
    }

    /// One check: whether its clustering equals the previous check's. `true`: stop here.
    pub fn observe(&mut self, same_as_before: bool) -> bool {
        self.unchanged = if same_as_before { self.unchanged + 1 } else { 0 };
        self.unchanged >= self.window
    }
}
