//! Progress bars for long runs (drawn on stderr only when it is a terminal).
//!
//! Two kinds, so that what is shown is always true: [`bar`] for work measured in units of equal
//! cost (probes, operations), with an ETA; [`stages`] for a sequence of unequal steps (the rows of
//! a benchmark table), which shows the step running and the elapsed time but no ETA, because the
//! next step's cost is not known. Both tick on their own, so the clock never freezes.
//!
//! Under `--quiet` ([`crate::console::quiet`]) both are hidden bars: the same calls, nothing drawn.
//!
//! Without the `progress` feature (a program using the library) nothing is drawn: the same calls
//! go to a bar that does nothing, so the drivers need no feature checks of their own.

#[cfg(not(feature = "progress"))]
pub use quiet::*;

#[cfg(not(feature = "progress"))]
mod quiet {
    /// A bar that draws nothing (the `progress` feature is off).
    pub struct ProgressBar;

    impl ProgressBar {
        /// Does nothing.
        pub fn inc(&self, _: u64) {}
        /// Does nothing.
        pub fn set_message(&self, _: impl Into<std::borrow::Cow<'static, str>>) {}
        /// Does nothing.
        pub fn finish_and_clear(&self) {}
    }

    /// Runs `f`.
    pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    /// A bar that draws nothing.
    pub fn bar(_len: u64, _msg: &str) -> ProgressBar {
        ProgressBar
    }

    /// A bar that draws nothing.
    pub fn stages(_len: u64) -> ProgressBar {
        ProgressBar
    }
}

#[cfg(feature = "progress")]
pub use drawn::*;

#[cfg(feature = "progress")]
mod drawn {

    use indicatif::{ProgressBar, ProgressStyle, WeakProgressBar};
    use std::sync::Mutex;
    use std::time::Duration;

    /// The bar drawn now, so that table lines written meanwhile (`outln!`) clear it first instead of
    /// landing in the middle of it.
    static ACTIVE: Mutex<Option<WeakProgressBar>> = Mutex::new(None);

    fn register(pb: &ProgressBar) {
        if let Ok(mut a) = ACTIVE.lock() {
            *a = Some(pb.downgrade());
        }
    }

    /// Runs `f` with the active bar (if any) cleared from the terminal, then redraws it.
    pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
        let pb = ACTIVE.lock().ok().and_then(|a| a.as_ref().and_then(WeakProgressBar::upgrade));
        match pb {
            Some(pb) if !pb.is_finished() => pb.suspend(f),
            _ => f(),
        }
    }

    const TICK: Duration = Duration::from_millis(250);

    /// A bar of `len` equal-cost units labelled `msg`, ticking.
    pub fn bar(len: u64, msg: &str) -> ProgressBar {
        if crate::console::quiet() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        pb.set_style(
            ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
                .expect("static template")
                .progress_chars("=> "),
        );
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(TICK);
        register(&pb);
        pb
    }

    /// A ticking spinner over `len` unequal stages; set the message to the stage that runs.
    pub fn stages(len: u64) -> ProgressBar {
        if crate::console::quiet() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        pb.set_style(
            ProgressStyle::with_template("{spinner} step {pos}/{len} [{elapsed}] {wide_msg}").expect("static template"),
        );
        pb.enable_steady_tick(TICK);
        pb
    }
}
