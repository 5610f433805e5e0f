//! `gbnn score`: scores a `retrieve` output against the true messages (`truth.csv` of
//! `generate`), with the core's outcome rules and a Wilson 95 % interval on the strict rate.

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::gbnn::Geometry;
use std::path::PathBuf;

use crate::io::symbols;

/// `gbnn score`: a retrieval output against the truth.
#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ScoreConfig {
    /// Output of `gbnn retrieve --format csv` (each cluster's active symbols joined by `|`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub result: PathBuf,
    /// The true messages, one per line (`truth.csv` of `gbnn generate`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub truth: PathBuf,
    /// Also write the scores as JSON.
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: Option<PathBuf>,
}

/// Rates of a scored batch.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Score {
    /// Probes scored.
    pub probes: usize,
    /// Fraction retrieved exactly (one active neuron per cluster, the true one).
    pub strict: f64,
    /// Wilson 95 % interval of `strict`.
    pub strict_95: (f64, f64),
    /// Fraction whose true neurons are all active.
    pub contains: f64,
    /// Expected success of a uniform pick among the active neurons.
    pub expected: f64,
}

/// The Wilson score interval (95 %) of `k` successes in `n` trials.
///
/// ```
/// let (lo, hi) = neurobits::gbnn::score::wilson95(50, 100);
/// assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3);
/// assert_eq!(neurobits::gbnn::score::wilson95(0, 0), (0.0, 1.0));
/// ```
pub fn wilson95(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (z, n, p) = (1.959963984540054f64, n as f64, k as f64 / n as f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Parses a retrieval CSV into per-probe, per-cluster active symbols.
fn parse_result(text: &str, name: &str) -> Result<Vec<Vec<Vec<u16>>>> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields = line
            .split(',')
            .map(|f| {
                f.split('|')
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| s.trim().parse::<u16>().map_err(|_| anyhow!("{name}:{}: '{s}' is not a symbol", i + 1)))
                    .collect::<Result<Vec<u16>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        rows.push(fields);
    }
    Ok(rows)
}

/// Runs `gbnn score`.
pub fn run(a: &ScoreConfig) -> Result<()> {
    if let Some(j) = &a.json {
        crate::io::atomic::check_writable(j)?;
    }
    let name = a.result.display().to_string();
    let result =
        parse_result(&std::fs::read_to_string(&a.result).with_context(|| format!("cannot read {name}"))?, &name)?;
    let c = result.first().map_or(0, |r| r.len());
    if c == 0 {
        bail!("{name}: no results");
    }
    if let Some(i) = result.iter().position(|r| r.len() != c) {
        bail!("{name}:{}: expected {c} clusters, found {}", i + 1, result[i].len());
    }
    // L just large enough for every symbol of both files; scoring does not depend on it.
    let tname = a.truth.display().to_string();
    let ttext = std::fs::read_to_string(&a.truth).with_context(|| format!("cannot read {tname}"))?;
    let max_sym = |s: &str| s.split([',', '|', '\n']).filter_map(|x| x.trim().parse::<u32>().ok()).max().unwrap_or(0);
    let l = (max_sym(&ttext).max(max_sym(&std::fs::read_to_string(&a.result)?)) as usize + 1).max(1);
    let g = Geometry::new(c, l).map_err(|e| anyhow!("{name}: {e}"))?;
    let truth = symbols::parse(&ttext, &tname, &g, false)?;
    if truth.len() / c != result.len() {
        bail!("{name} has {} results but {tname} has {} messages", result.len(), truth.len() / c);
    }
    // Back to bit-packed states, then the core's outcome rules (the same as `experiment`).
    let mut states = vec![0u64; result.len() * g.row_words()];
    for (p, row) in result.iter().enumerate() {
        for (cl, syms) in row.iter().enumerate() {
            for &s in syms {
                let (wi, bit) = g.bit(cl, s as usize);
                states[p * g.row_words() + wi] |= bit;
            }
        }
    }
    let r = super::rates(&g, &states, &truth);
    let k = (r.strict * result.len() as f64).round() as usize;
    let score = Score {
        probes: result.len(),
        strict: r.strict,
        strict_95: wilson95(k, result.len()),
        contains: r.contains,
        expected: r.expected,
    };
    crate::outln!(
        "{} probes: strict {:.2} % (95 % interval {:.2}–{:.2} %), contains the truth {:.2} %, expected {:.2} %",
        score.probes,
        100.0 * score.strict,
        100.0 * score.strict_95.0,
        100.0 * score.strict_95.1,
        100.0 * score.contains,
        100.0 * score.expected
    )?;
    if let Some(j) = &a.json {
        crate::io::json::write(j, &score)?;
    }
    Ok(())
}
