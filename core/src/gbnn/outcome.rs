//! Scoring a retrieved state against the true message.

use super::{Geometry, SILENT};
use crate::Word;

/// How a retrieval went, per probe.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, outcome::outcome};
/// let g = Geometry::new(2, 4).unwrap();
/// let o = outcome(&g, &[0b0010, 0b1100], &[1, 2]);
/// assert!(!o.strict && o.contains);
/// assert_eq!(o.choices, 2);
/// assert_eq!(o.expected(), 0.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Outcome {
    /// Every cluster has exactly its true neuron on.
    pub strict: bool,
    /// The true neuron is on in every cluster.
    pub contains: bool,
    /// `Π_c |active_c|` (saturating): the number of equally likely picks when one active neuron
    /// per cluster is chosen uniformly at random.
    pub choices: u64,
}

impl Outcome {
    /// Probability that a uniform pick among the active neurons of each cluster is the message.
    pub fn expected(&self) -> f64 {
        if self.contains {
            1.0 / self.choices as f64
        } else {
            0.0
        }
    }
}

/// Scores state `v` against the true message `truth`. A [`SILENT`] cluster of a sparse message
/// is right when no neuron of it is on (a pick among its active neurons could only be wrong).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, SILENT, outcome::outcome};
/// let g = Geometry::new(3, 4).unwrap();
/// assert!(outcome(&g, &[0b0010, 0, 0b0001], &[1, SILENT, 0]).strict);
/// assert!(!outcome(&g, &[0b0010, 0b0100, 0b0001], &[1, SILENT, 0]).contains);
/// ```
pub fn outcome(geom: &Geometry, v: &[Word], truth: &[u16]) -> Outcome {
    let wpc = geom.words_per_cluster();
    let (mut contains, mut choices) = (true, 1u64);
    for (c, &t) in truth.iter().enumerate().take(geom.clusters()) {
        let on: u64 = v[c * wpc..(c + 1) * wpc].iter().map(|x| x.count_ones() as u64).sum();
        if t == SILENT {
            contains &= on == 0;
            continue;
        }
        let (wi, bit) = geom.bit(c, t as usize);
        contains &= v[wi] & bit != 0;
        choices = choices.saturating_mul(on);
    }
    Outcome { strict: contains && choices == 1, contains, choices }
}
