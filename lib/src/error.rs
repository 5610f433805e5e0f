//! The library's one error type. Every message is one line that names what was wrong and the
//! value seen (the file, the option or field, the number), so the CLI prints it as it is and a
//! Python binding raises it as it is.

use std::path::Path;

/// Everything the model API, the readers and the saved-model format can refuse.
///
/// ```
/// use neurobits::Error;
/// let e = Error::config("code_bits", 0, "must be at least 1");
/// assert_eq!(e.to_string(), "code_bits = 0: must be at least 1");
/// assert!(!e.is_io());
/// ```
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value out of its range: `field = value: why`.
    #[error("{field} = {value}: {why}")]
    Config {
        /// The field (or option) refused.
        field: &'static str,
        /// The value seen, as text.
        value: String,
        /// What it must be.
        why: String,
    },
    /// Input data that cannot be used: a malformed file, a shape that does not fit the model.
    /// `name` is the file (or `standard input`, or what the data is).
    #[error("{name}: {why}")]
    Input {
        /// The file or the data's name.
        name: String,
        /// What is wrong, with the value seen.
        why: String,
    },
    /// A file could not be read or written.
    // The system's error is part of the one line, not a separate source (which would print it
    // twice in a `{:#}` chain).
    #[error("{name}: {error}")]
    Io {
        /// The file.
        name: String,
        /// The system's error.
        error: std::io::Error,
    },
    /// The call was stopped through its [`crate::cancel::Cancel`] token; nothing was changed.
    #[error("interrupted")]
    Interrupted,
    /// An allocation sized from input that does not fit in the memory budget
    /// ([`crate::budget`]): refused before it is made.
    #[error("{what} needs {}, more than the memory budget of {} ({from})", crate::budget::size(*.needed), crate::budget::size(*.budget as u128))]
    Memory {
        /// What needed the memory, with the file or options that sized it.
        what: String,
        /// Bytes it needs.
        needed: u128,
        /// The budget in bytes.
        budget: u64,
        /// Where the budget comes from (`--max-memory 1.0 GiB`, `80% of the … available`).
        from: String,
    },
    /// `predict`, `transform`, `search`, `save` … before `fit`.
    #[error("this {0} is not fitted yet: call fit first")]
    NotFitted(&'static str),
    /// The core refused sizes or symbols.
    #[error(transparent)]
    Core(#[from] neurobits_core::Error),
    /// The GPU could not be used or refused the work.
    #[error(transparent)]
    Gpu(#[from] neurobits_gpu_host::GpuError),
    /// A write to memory or a stream that failed.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// An error of the older command layer, passed through unchanged.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl Error {
    /// A configuration error.
    pub fn config(field: &'static str, value: impl std::fmt::Display, why: impl Into<String>) -> Error {
        Error::Config { field, value: value.to_string(), why: why.into() }
    }

    /// Bad input data in `name`.
    pub fn input(name: impl std::fmt::Display, why: impl Into<String>) -> Error {
        Error::Input { name: name.to_string(), why: why.into() }
    }

    /// An I/O failure on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io { name: path.display().to_string(), error: source }
    }

    /// Whether the call was stopped by its cancel token (also when an older layer carried it).
    pub fn is_interrupted(&self) -> bool {
        match self {
            Error::Interrupted => true,
            Error::Other(a) => a.downcast_ref::<Error>().is_some_and(Error::is_interrupted),
            _ => false,
        }
    }

    /// Whether this is an I/O failure (exit code 1 in the CLI) rather than bad input (exit 2).
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io { .. } | Error::Write(_))
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
