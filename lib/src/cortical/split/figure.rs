//! The analogue of the paper's Fig. 26 (profiled vs even split): milliseconds per step of one
//! GPU, the even split, the profiled split and the best split found by trying all, read from the
//! JSON files of `cortical profile` runs; and, with `--levels-out`, the analogue of its Fig. 9:
//! the time of each level on each device, from the first run's profile.

use anyhow::{anyhow, Context, Result};
use std::path::{Path, PathBuf};

use crate::plot::{bar_chart_log, line_chart, Bars, Labels, Series};

/// What to plot.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FigureConfig {
    /// JSON files written by `cortical profile --out`.
    #[cfg_attr(feature = "cli", arg(required = true))]
    pub runs: Vec<PathBuf>,
    /// The SVG file to write.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
    /// Also write the time per level of every device profiled in the first run (Fig. 9) here.
    #[cfg_attr(feature = "cli", arg(long))]
    pub levels_out: Option<PathBuf>,
}

/// Fig. 9: microseconds per level (log) against the level's size (each device's sample network
/// has its own number of levels, so sizes, not level numbers, line them up), a curve per device.
fn levels_figure(run: &Path, out: &Path) -> Result<()> {
    let text = std::fs::read_to_string(run).with_context(|| format!("cannot read {}", run.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", run.display()))?;
    let devices = v["profile"]["devices"]
        .as_array()
        .ok_or_else(|| anyhow!("{}: not a cortical profile report", run.display()))?;
    let series: Vec<Series> = devices
        .iter()
        .map(|d| {
            let dev = match &d["dev"] {
                serde_json::Value::Object(o) if o.contains_key("Gpu") => format!("gpu{}", o["Gpu"]),
                _ => "cpu".to_string(),
            };
            let pts = d["levels"]
                .as_array()
                .map(|ls| {
                    ls.iter()
                        .filter_map(|l| Some(((l["hypercolumns"].as_f64()?).log2(), l["seconds"].as_f64()? * 1e6)))
                        .filter(|p| p.1 > 0.0)
                        .collect()
                })
                .unwrap_or_default();
            Series::new(format!("{dev} ({})", d["name"].as_str().unwrap_or("?")), pts)
        })
        .collect();
    line_chart(
        out,
        &Labels {
            title: "time of one level against its size, per device (cf. the paper's Fig. 9)",
            x: "log2 of the level's hypercolumns",
            y: "microseconds per step (log)",
        },
        &series,
        true,
    )
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
    if let Some(out) = &c.levels_out {
        levels_figure(&c.runs[0], out)?;
        outln!("wrote {}", out.display())?;
    }
    Ok(())
}
