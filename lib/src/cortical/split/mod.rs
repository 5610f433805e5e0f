//! Several devices (spec §6): the profiler measures each device's time per level
//! ([`profile`]), the partitioner deals the lower levels' subtrees in proportion and places the
//! upper levels ([`plan`]), and [`run::SplitNet`] runs any split with the single device's bits.

pub mod cmd;
#[cfg(feature = "cli")]
pub mod figure;
pub mod plan;
pub mod profile;
pub mod run;

pub use plan::{partition, Choice, Costs, Dev, Plan, Slot};
pub use run::{PartState, SplitNet};
