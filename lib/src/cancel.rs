//! Stopping a long call from outside it (Ctrl-C in Python, where the interpreter cannot
//! interrupt native code): the caller hands the call a [`Cancel`] token, and the library's long
//! loops (cortical training per image, OCNN iterations) ask [`check`] at points where stopping
//! leaves nothing half-done — the model is only replaced when its call returns `Ok`.
//!
//! The token lives in a thread-local of the calling thread and follows the work onto the CPU
//! pool ([`crate::device::Cpu::install`]), so concurrent calls from several threads each see
//! their own token, and a call without one never stops.
//!
//! ```
//! use neurobits::cancel::{self, Cancel};
//! let token = Cancel::new();
//! assert!(cancel::with(&token, cancel::check).is_ok());
//! token.cancel();
//! assert!(matches!(cancel::with(&token, cancel::check), Err(neurobits::Error::Interrupted)));
//! assert!(cancel::check().is_ok()); // outside `with`: no token, never stops
//! ```

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag one thread sets and a running call reads.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A token not yet cancelled.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks the call running with this token to stop at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

/// Runs `f` with `token` as this thread's token (the previous one restored after).
pub fn with<T>(token: &Cancel, f: impl FnOnce() -> T) -> T {
    with_opt(Some(token.clone()), f)
}

/// Runs `f` with `token` (or none) as this thread's token.
pub fn with_opt<T>(token: Option<Cancel>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Cancel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), token)));
    f()
}

/// This thread's token, if it runs under one.
pub fn current() -> Option<Cancel> {
    CURRENT.with(|c| c.borrow().clone())
}

/// `Err(Error::Interrupted)` once this thread's token is cancelled.
pub fn check() -> crate::Result<()> {
    match CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled)) {
        true => Err(crate::Error::Interrupted),
        false => Ok(()),
    }
}
