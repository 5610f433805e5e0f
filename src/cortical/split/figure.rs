//! The analogue of the paper's Fig. 26 (profiled vs even split): milliseconds per step of one
//! GPU, the even split, the profiled split and the best split found by trying all, read from the
//! JSON files of `cortical profile` runs.

use anyhow::{anyhow, Context, Result};
use std::path::{Path, PathBuf};

use crate::plot::{bar_chart_log, Bars};

/// What to plot.
#[derive(Clone, Debug, clap::Args)]
pub struct FigureConfig {
    /// JSON files written by `cortical profile --out`.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// The SVG to write.
    #[arg(long)]
    pub out: PathBuf,
}

fn seconds(runs: &[serde_json::Value], kind: &str) -> Option<f64> {
    runs.iter()
        .filter(|r| r["kind"] == kind)
        .filter_map(|r| r["seconds"].as_f64())
        .fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.min(s))))
}

fn column(path: &Path) -> Result<(String, Vec<Option<f64>>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let runs = v["runs"].as_array().ok_or_else(|| anyhow!("{}: not a cortical profile report", path.display()))?;
    let mut name = format!("{} HCs", v["hypercolumns"]);
    if let Some(s) = v["slow"].as_str() {
        name += &format!(", gpu{} capped", s.split(':').next().unwrap_or("?"));
    }
    let all = seconds(runs, "brute force").map(|b| b.min(seconds(runs, "profiled").unwrap_or(f64::INFINITY)));
    let ms = |s: Option<f64>| s.map(|s| s * 1e3);
    Ok((name, vec![ms(seconds(runs, "one gpu")), ms(seconds(runs, "even")), ms(seconds(runs, "profiled")), ms(all)]))
}

/// Writes the figure.
pub fn run(c: &FigureConfig) -> Result<()> {
    let cols = c.runs.iter().map(|p| column(p)).collect::<Result<Vec<_>>>()?;
    let labels = ["one GPU", "even split", "profiled split", "best of all splits"];
    let bars: Vec<Bars> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| Bars { label: (*l).into(), values: cols.iter().map(|(n, v)| (n.clone(), v[i])).collect() })
        .collect();
    bar_chart_log(
        &c.out,
        "cortical network split over GPUs and the CPU",
        "milliseconds per training step (log)",
        &bars,
    )?;
    outln!("wrote {}", c.out.display())?;
    Ok(())
}
