//! The cortical network's configuration, apart from any file or flag: the shape, the training
//! protocol of spec §3–4 and the input scaling.

use serde::{Deserialize, Serialize};

use super::{ScheduleArg, VariantArg};
use neurobits_core::cortical::rules::Rule;

/// Which learning rule (the manual's "Quality" chapter says why the default changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum RuleArg {
    /// Lateral inhibition always picks a winner among the minicolumns holding a feature, ranked
    /// by the normalised drive; learning rate 2^-rate (generalises to unseen images).
    #[default]
    Competitive,
    /// The spec's D-3 … D-6: only firing minicolumns compete, one-shot α = β-saturating learning
    /// (reproduces the spec's digests; memorises, answers almost no unseen image).
    Spec,
}
use crate::error::{Error, Result};

/// The network's shape, the training protocol and the LGN's input scaling.
///
/// ```
/// let c = neurobits::cortical::Config::default();
/// assert_eq!((c.levels, c.minicolumns, c.epochs, c.upsample), (5, 16, 20, 2));
/// assert!(neurobits::cortical::Config { beta: 2.0, ..c }.validate().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Levels L of the tree (2^L − 1 hypercolumns), 1..=40.
    pub levels: u32,
    /// Minicolumns M per hypercolumn (2M inputs each), 1..=128.
    pub minicolumns: usize,
    /// Passes over the training list, at most [`MAX_EPOCHS`].
    pub epochs: u32,
    /// Consecutive learning steps per image, 1..=[`MAX_EXPOSURE`]; `epochs · exposure` at most
    /// [`MAX_STEPS_PER_IMAGE`].
    pub exposure: u32,
    /// Seed of the initial weights, random firing and shuffles.
    pub seed: u64,
    /// LTD step β in [0, 1] (0.5 canonical) of the spec's rule.
    pub beta: f64,
    /// The learning rule.
    pub rule: RuleArg,
    /// The competitive rule's learning rate 2^−rate, 1..=15.
    pub rate: u32,
    /// Level schedule.
    pub schedule: ScheduleArg,
    /// Pixel replication per axis before the LGN (2 turns 8×8 digits into 16×16).
    pub upsample: usize,
    /// The LGN cells' threshold θ (an on-off cell fires iff its centre–surround contrast
    /// `d > θ`, an off-on cell iff `−d > θ`), 0..=[`MAX_LGN_THRESHOLD`]; `None`: the rule's
    /// ([`RuleArg::lgn_threshold`]).
    pub lgn_threshold: Option<i32>,
    /// The GPU variant of the synchronous schedule (per-level launches, a work queue or a graph).
    pub variant: VariantArg,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            levels: 5,
            minicolumns: 16,
            epochs: 20,
            exposure: 1,
            seed: 1,
            beta: 0.5,
            rule: RuleArg::Competitive,
            rate: 2,
            schedule: ScheduleArg::Synchronous,
            upsample: 2,
            lgn_threshold: None,
            variant: VariantArg::PerLevel,
        }
    }
}

/// The largest LGN threshold: pixels reach the LGN as 0…16 (8-bit images are scaled first), so
/// the largest contrast is `8 · 16`, and from that threshold on no cell could ever fire.
pub const MAX_LGN_THRESHOLD: i32 = 8 * 16 - 1;

/// The competitive rule's LGN threshold, chosen on the validation list (manual, "The cortical
/// network: quality on held-out digits"): the best mean readout over 1 … all training images per
/// class of the thresholds 0 … 16, and the smallest shortfall against k-means transfer.
pub const LGN_THRESHOLD_COMPETITIVE: i32 = 12;

impl RuleArg {
    /// The LGN threshold a network under this rule gets by default: the spec's θ = 16 (D-10,
    /// its digests) or [`LGN_THRESHOLD_COMPETITIVE`].
    pub const fn lgn_threshold(self) -> i32 {
        match self {
            RuleArg::Spec => neurobits_core::cortical::lgn::THETA,
            RuleArg::Competitive => LGN_THRESHOLD_COMPETITIVE,
        }
    }
}

/// The most passes over the training list (the paper trains 20; every pass is a loop over the
/// images, so an unbounded count ran for ever).
pub const MAX_EPOCHS: u32 = 10_000;
/// The most consecutive learning steps per image.
pub const MAX_EXPOSURE: u32 = 1_000;
/// The most learning steps per image over the whole training (`epochs · exposure`).
pub const MAX_STEPS_PER_IMAGE: u64 = 100_000;

/// The training loop's bounds, shared by `cortical fit` and `cortical train`: one line naming the
/// option and the value.
pub fn check_training(epochs: u32, exposure: u32) -> Result<()> {
    if epochs > MAX_EPOCHS {
        return Err(Error::config("epochs", epochs, format!("must be at most {MAX_EPOCHS}")));
    }
    if !(1..=MAX_EXPOSURE).contains(&exposure) {
        return Err(Error::config("exposure", exposure, format!("must be in 1..={MAX_EXPOSURE}")));
    }
    if epochs as u64 * exposure as u64 > MAX_STEPS_PER_IMAGE {
        return Err(Error::config(
            "epochs",
            format!("{epochs} x --exposure {exposure}"),
            format!("at most {MAX_STEPS_PER_IMAGE} learning steps per image"),
        ));
    }
    Ok(())
}

/// Refuses an LGN threshold outside 0..=[`MAX_LGN_THRESHOLD`] (one line naming the option).
pub fn check_lgn_threshold(t: Option<i32>) -> Result<()> {
    match t {
        Some(t) if !(0..=MAX_LGN_THRESHOLD).contains(&t) => {
            Err(Error::config("lgn_threshold", t, format!("must be in 0..={MAX_LGN_THRESHOLD}")))
        }
        _ => Ok(()),
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
        if !(1..=15).contains(&self.rate) {
            return Err(Error::config("rate", self.rate, "must be in 1..=15"));
        }
        check_training(self.epochs, self.exposure)?;
        if !(1..=1 << 12).contains(&self.upsample) {
            return Err(Error::config("upsample", self.upsample, "must be in 1..=4096"));
        }
        check_lgn_threshold(self.lgn_threshold)
    }

    /// The LGN threshold these fields ask for (the rule's when none is given).
    pub fn lgn_threshold(&self) -> i32 {
        self.lgn_threshold.unwrap_or(self.rule.lgn_threshold())
    }

    /// β in Q0.16.
    pub fn ltd(&self) -> u16 {
        (self.beta * 65536.0).round().min(65535.0) as u16
    }

    /// The core's rule these fields ask for.
    pub fn rule(&self) -> Rule {
        match self.rule {
            RuleArg::Spec => Rule::spec(self.ltd()),
            RuleArg::Competitive => Rule::competitive(self.rate),
        }
    }
}
