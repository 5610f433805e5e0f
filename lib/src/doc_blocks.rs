//! The README's and the manual's Rust blocks as doctests: `cargo test --doc -p neurobits`
//! compiles and runs every ```` ```rust ```` block of these files as written (a block that needs
//! files or a GPU says `no_run`). `python/tests/test_docs.py` checks that every Markdown file with
//! a Rust block is listed here, and runs the Python and console blocks.

#[doc = include_str!("../../README.md")]
pub struct Readme;

#[doc = include_str!("../../docs/manual/src/library.md")]
pub struct ManualLibrary;

#[doc = include_str!("../../docs/manual/src/gpu-pinned.md")]
pub struct ManualGpuPinned;
