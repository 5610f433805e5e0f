//! The GBNN on the host: device-resident networks ([`backend`]), file formats in [`crate::io`],
//! the dense-float baseline, the paper's scenarios and experiments, benches, the FPGA model and
//! firmware runs, and the cross-target `hwcost` comparison.

pub mod backend;
#[cfg(feature = "cli")]
pub mod bench;
#[cfg(feature = "cli")]
mod bench_config;
pub mod capacity;
pub mod dense;
#[cfg(feature = "cli")]
pub mod experiment;
/// `gbnn export`.
pub mod export;
pub mod fpga;
/// `gbnn generate`.
pub mod generate;
pub mod gpus;
#[cfg(feature = "cli")]
pub mod hwcost;
#[cfg(feature = "cli")]
mod hwcost_mcu;
pub mod mcu;
pub mod model;
pub mod ranks;
/// `gbnn retrieve`.
pub mod retrieve;
pub mod scenario;
pub mod score;
/// `gbnn store`.
pub mod store;
pub mod synth;
pub mod synth_report;
pub mod theory;

use anyhow::{anyhow, Result};
use neurobits_core::gbnn::Geometry;

/// Geometry from command-line sizes, with the memory check for W.
pub fn geometry(clusters: usize, neurons: usize) -> Result<Geometry> {
    let g = Geometry::new(clusters, neurons).map_err(|e| anyhow!("{e}"))?;
    crate::io::memory::ensure_fits(&format!("W of {clusters}x{neurons} neurons"), g.weight_words() as u128 * 8)?;
    Ok(g)
}

/// Retrieval rates of a batch: fractions of probes with strict success, containing the truth,
/// and the expected success of a uniform pick among ambiguous neurons.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rates {
    /// Fraction of probes with exactly the true neuron on in every cluster.
    pub strict: f64,
    /// Fraction of probes whose true neurons are all on.
    pub contains: f64,
    /// Expected success of a uniform pick among the active neurons.
    pub expected: f64,
}

/// Scores `K` states against their true messages.
pub fn rates(g: &Geometry, states: &[neurobits_core::Word], truth: &[u16]) -> Rates {
    let mut r = Rates::default();
    let k = truth.len() / g.clusters();
    for (v, t) in states.chunks(g.row_words()).zip(truth.chunks(g.clusters())) {
        let o = neurobits_core::gbnn::outcome::outcome(g, v, t);
        r.strict += o.strict as u8 as f64;
        r.contains += o.contains as u8 as f64;
        r.expected += o.expected();
    }
    let k = k.max(1) as f64;
    Rates { strict: r.strict / k, contains: r.contains / k, expected: r.expected / k }
}

/// Fraction of `K` decoded results that are exactly their true messages (every cluster one
/// active neuron, the true one): the strict rate of [`rates`], from compact results.
pub fn strict_rate_decoded(c: usize, decoded: &[neurobits_core::gbnn::decode::Decoded], truth: &[u16]) -> f64 {
    let k = truth.len() / c;
    let ok = decoded
        .chunks(c)
        .zip(truth.chunks(c))
        .filter(|(d, t)| d.iter().zip(*t).all(|(d, &t)| d.unique() == Some(t)))
        .count();
    ok as f64 / k.max(1) as f64
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
/// A retrieval rule (of the command line and of [`model::GbnnConfig`]).
pub enum RuleArg {
    /// Sum-of-sum (Eq. 3–5).
    SumOfSum,
    /// Sum-of-max (Eq. 6–7).
    SumOfMax,
    /// Bail-out-early (Section IV-D).
    BailOutEarly,
    /// Joint (Algorithm 2).
    #[default]
    Joint,
}

impl From<RuleArg> for neurobits_core::gbnn::Rule {
    fn from(r: RuleArg) -> Self {
        use neurobits_core::gbnn::Rule;
        match r {
            RuleArg::SumOfSum => Rule::SumOfSum,
            RuleArg::SumOfMax => Rule::SumOfMax,
            RuleArg::BailOutEarly => Rule::BailOutEarly,
            RuleArg::Joint => Rule::Joint,
        }
    }
}
