//! How the process ends (ARCHITECTURE.md, "CLI conventions", "Exit codes"): every error is one
//! line on standard error; the exit code says whose fault it was. 2: the input or the request
//! (a malformed file, an option out of range, a path that does not exist or is a directory);
//! 1: the system failed a request that was fine (permission denied, a full disk, an I/O error,
//! a thread that could not start, a CUDA error); 101: a bug (a panic), in one line too.

use std::io::ErrorKind;
use std::sync::Mutex;

/// Exit code of bad input or a bad request.
pub const BAD_INPUT: i32 = 2;
/// Exit code of a runtime or I/O failure.
pub const FAILURE: i32 = 1;
/// Exit code of a panic (Rust's own), kept so that a bug is told apart from both.
pub const BUG: i32 = 101;

/// Whether a system error is the user's (a path named wrong, data malformed: 2) rather than a
/// failure of the system on a sound request (1).
fn os_failure(e: &std::io::Error) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::NotFound
            | ErrorKind::IsADirectory
            | ErrorKind::NotADirectory
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidData
            | ErrorKind::InvalidFilename
            | ErrorKind::UnexpectedEof
            | ErrorKind::AlreadyExists
    )
}

/// Whether one error of a chain is a runtime failure. The library's [`neurobits::Error`] keeps
/// the system's error inside its variant (not as a source, so that it is printed once): it is
/// looked into here.
fn failure(e: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        return os_failure(io);
    }
    match e.downcast_ref::<neurobits::Error>() {
        Some(neurobits::Error::Io { error, .. } | neurobits::Error::Write(error)) => os_failure(error),
        Some(neurobits::Error::Other(inner)) => inner.chain().any(failure),
        // Not a missing GPU or one too small for the request (the request's fault), but a
        // driver error during the work.
        Some(neurobits::Error::Gpu(g)) => matches!(g, neurobits_gpu_host::GpuError::Cuda(_)),
        _ => e
            .downcast_ref::<neurobits_gpu_host::GpuError>()
            .is_some_and(|g| matches!(g, neurobits_gpu_host::GpuError::Cuda(_))),
    }
}

/// The exit code of a command's error: [`FAILURE`] when any error of its chain is a runtime or
/// I/O failure, else [`BAD_INPUT`].
pub fn code(e: &anyhow::Error) -> i32 {
    if e.chain().any(failure) {
        FAILURE
    } else {
        BAD_INPUT
    }
}

/// The last panic's line, kept by the hook for `main` (which prints it once the panic reached
/// it: a panic that a library catches on purpose, such as cudarc's loader probe, prints nothing).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The one line a panic becomes.
pub fn panic_line(message: &str, location: Option<(&str, u32)>) -> String {
    let at = location.map_or(String::new(), |(file, line)| format!(" at {file}:{line}"));
    // One line, whatever the message holds.
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("error: internal error (a bug): {message}{at}")
}

/// Replaces the default panic message (several lines, a backtrace hint) by a record of the one
/// line; [`take_panic_line`] gives it to `main`.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let line = panic_line(&message, info.location().map(|l| (l.file(), l.line())));
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(line);
        }
    }));
}

/// The line of the panic that unwound to `main`.
pub fn take_panic_line() -> String {
    let line = LAST_PANIC.lock().ok().and_then(|mut l| l.take());
    line.unwrap_or_else(|| panic_line("a panic without a message", None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_failures_exit_1_and_bad_input_2() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(code(&anyhow::Error::new(full).context("cannot write x")), FAILURE);
        let denied = neurobits::Error::io(std::path::Path::new("x"), ErrorKind::PermissionDenied.into());
        assert_eq!(code(&denied.into()), FAILURE);
        let missing = neurobits::Error::io(std::path::Path::new("x"), ErrorKind::NotFound.into());
        assert_eq!(code(&missing.into()), BAD_INPUT);
        let wrapped = neurobits::Error::Other(anyhow::Error::new(std::io::Error::other("EIO")).context("reading"));
        assert_eq!(code(&wrapped.into()), FAILURE);
        assert_eq!(code(&neurobits::Error::input("x", "bad").into()), BAD_INPUT);
        assert_eq!(code(&anyhow::anyhow!("cannot write x: is a directory")), BAD_INPUT);
        let cuda = neurobits::Error::Gpu(neurobits_gpu_host::GpuError::Cuda("launch failed".into()));
        assert_eq!(code(&cuda.into()), FAILURE);
        let none = neurobits::Error::Gpu(neurobits_gpu_host::GpuError::NoDriver);
        assert_eq!(code(&none.into()), BAD_INPUT);
    }

    #[test]
    fn a_panic_is_one_line_naming_where() {
        assert_eq!(
            panic_line("index out of bounds:\n the len is 0", Some(("src/x.rs", 7))),
            "error: internal error (a bug): index out of bounds: the len is 0 at src/x.rs:7"
        );
    }
}
