//! The cortical network's configuration, apart from any file or flag: the shape, the training
//! protocol of spec §3–4 and the input scaling.

use serde::{Deserialize, Serialize};

use super::{ScheduleArg, VariantArg};
use crate::error::{Error, Result};

/// The network's shape, the training protocol and the LGN's input scaling.
///
/// ```
/// let c = neurobits::cortical::Config::default();
/// assert_eq!((c.levels, c.minicolumns, c.epochs), (3, 16, 60));
/// assert!(neurobits::cortical::Config { beta: 2.0, ..c }.validate().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Levels L of the tree (2^L − 1 hypercolumns), 1..=40.
    pub levels: u32,
    /// Minicolumns M per hypercolumn (2M inputs each), 1..=128.
    pub minicolumns: usize,
    /// Passes over the training list.
    pub epochs: u32,
    /// Consecutive learning steps per image.
    pub exposure: u32,
    /// Seed of the initial weights, random firing and shuffles.
    pub seed: u64,
    /// LTD step β in [0, 1] (0.5 canonical).
    pub beta: f64,
    /// Level schedule.
    pub schedule: ScheduleArg,
    /// Pixel replication per axis before the LGN (2 turns 8×8 digits into 16×16).
    pub upsample: usize,
    /// The GPU variant of the synchronous schedule (per-level launches, a work queue or a graph).
    pub variant: VariantArg,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            levels: 3,
            minicolumns: 16,
            epochs: 60,
            exposure: 4,
            seed: 1,
            beta: 0.5,
            schedule: ScheduleArg::Synchronous,
            upsample: 1,
            variant: VariantArg::PerLevel,
        }
    }
}

impl Config {
    /// Checks every field.
    pub fn validate(&self) -> Result<()> {
        if !(1..=40).contains(&self.levels) {
            return Err(Error::config("levels", self.levels, "must be in 1..=40"));
        }
        if !(1..=128).contains(&self.minicolumns) {
            return Err(Error::config("minicolumns", self.minicolumns, "must be in 1..=128"));
        }
        if !(0.0..=1.0).contains(&self.beta) {
            return Err(Error::config("beta", self.beta, "must be in [0, 1]"));
        }
        if !(1..=1 << 12).contains(&self.upsample) {
            return Err(Error::config("upsample", self.upsample, "must be in 1..=4096"));
        }
        Ok(())
    }

    /// β in Q0.16.
    pub fn ltd(&self) -> u16 {
        (self.beta * 65536.0).round().min(65535.0) as u16
    }
}
