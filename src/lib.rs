//! The `neurobits` command line as a library, so that tests can walk its command tree. Everything
//! it runs is in the `neurobits` library crate; this crate only parses flags into its
//! configurations (see ARCHITECTURE.md, "Crates").
#![warn(missing_docs)]

pub mod cli;
pub mod commands;
pub mod exit;
