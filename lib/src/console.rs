//! Where human text goes (summaries, tables, notes), kept apart from data so that the CLI's
//! `--quiet` and `--out -`/`--json -` hold for every command without each command checking them.
//!
//! - [`out!`](crate::out)/[`outln!`](crate::outln): tables and summaries, on standard output;
//!   on standard error instead while standard output carries data ([`set_stdout_is_data`]), so
//!   that `--json -` gives JSON alone.
//! - [`noteln!`](crate::noteln): one-line notes and summaries on standard error.
//! - Both print nothing while [`quiet`]; neither do the progress bars. Errors and warnings are
//!   not written through here and are always printed.
//!
//! A program that uses the library and never calls the setters gets the old behaviour: human text
//! on standard output, notes on standard error.

use anyhow::Context as _;
use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);
static STDOUT_IS_DATA: AtomicBool = AtomicBool::new(false);

/// Turns human text and progress bars off (`true`) or on.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether human text and progress bars are off.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Says that standard output carries data (an output path `-`): human text goes to standard
/// error from now on.
pub fn set_stdout_is_data(data: bool) {
    STDOUT_IS_DATA.store(data, Ordering::Relaxed);
}

/// Whether standard output carries data.
pub fn stdout_is_data() -> bool {
    STDOUT_IS_DATA.load(Ordering::Relaxed)
}

/// Writes human text (`out!`, `outln!`): nothing when quiet, else to standard output, or to
/// standard error while standard output carries data. A write that fails is an error (one
/// line), not a panic.
#[doc(hidden)]
pub fn human(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    if quiet() {
        return Ok(());
    }
    crate::progress::suspend(|| {
        if stdout_is_data() {
            std::io::stderr().write_fmt(args).context("cannot write to standard error")
        } else {
            // `context` keeps the system's error in the chain: the CLI exits 1 on it (I/O).
            std::io::stdout().write_fmt(args).context("cannot write to standard output")
        }
    })
}

/// Writes a note (`noteln!`) to standard error unless quiet. A note is never worth failing a
/// run for, so a write error is ignored, as `eprintln!` would panic on it.
#[doc(hidden)]
pub fn note(args: fmt::Arguments<'_>) {
    if !quiet() {
        crate::progress::suspend(|| {
            let _ = std::io::stderr().write_fmt(args);
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quiet_drops_human_text_and_notes() {
        super::set_quiet(true);
        // Standard output is not captured here; the point is that nothing fails or panics.
        assert!(crate::outln!("hidden {}", 1).is_ok());
        crate::noteln!("hidden");
        super::set_quiet(false);
        assert!(!super::quiet());
    }
}
