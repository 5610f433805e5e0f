//! The analogues of the paper's Fig. 7 (speed-up over one CPU thread against network size) and
//! Figs. 14–17 (the GPU variants compared), read from the JSON of `cortical bench`: one chart per
//! minicolumn count, x = levels `L` (2^L − 1 hypercolumns).

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

use crate::plot::{line_chart, Labels, Series};

/// What to plot.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct BenchFigureConfig {
    /// The JSON written by `cortical bench --out`.
    pub bench: PathBuf,
    /// A folder for `speedup-m<M>.svg` and `variants-m<M>.svg`.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

/// `(minicolumns, levels, cpu1, cpu_all, [(variant, seconds)])` of each row.
type Row = (u64, f64, Option<f64>, Option<f64>, Vec<(String, f64)>);

/// Reads one CPU time of a row.
type Seconds = fn(&Row) -> Option<f64>;

fn rows(path: &Path) -> Result<Vec<Row>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let rows = v["rows"].as_array().ok_or_else(|| anyhow!("{}: not a cortical bench report", path.display()))?;
    rows.iter()
        .map(|r| {
            let m =
                r["minicolumns"].as_u64().ok_or_else(|| anyhow!("{}: a row without minicolumns", path.display()))?;
            let l = r["levels"].as_f64().ok_or_else(|| anyhow!("{}: a row without levels", path.display()))?;
            let gpu = r["gpu"]
                .as_array()
                .map(|g| {
                    g.iter().filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_f64()?))).collect::<Vec<_>>()
                })
                .unwrap_or_default();
            Ok((m, l, r["cpu1"].as_f64(), r["cpu_all"].as_f64(), gpu))
        })
        .collect()
}

/// Writes the figures; returns their paths.
pub fn run(c: &BenchFigureConfig) -> Result<Vec<PathBuf>> {
    crate::io::atomic::check_folder(&c.out)?;
    let rows = rows(&c.bench)?;
    if rows.is_empty() {
        bail!("{}: no rows", c.bench.display());
    }
    std::fs::create_dir_all(&c.out).with_context(|| format!("cannot create {}", c.out.display()))?;
    let mut ms: Vec<u64> = rows.iter().map(|r| r.0).collect();
    ms.sort_unstable();
    ms.dedup();
    let mut written = vec![];
    for m in ms {
        let of_m: Vec<&Row> = rows.iter().filter(|r| r.0 == m).collect();
        let mut variants: Vec<String> = of_m.iter().flat_map(|r| r.4.iter().map(|v| v.0.clone())).collect();
        variants.sort();
        variants.dedup();
        // Fig. 7: speed-up over one CPU thread.
        let mut speed = vec![];
        let cpu_all: Vec<(f64, f64)> = of_m.iter().filter_map(|r| Some((r.1, r.2? / r.3?))).collect();
        if !cpu_all.is_empty() {
            speed.push(Series::new("CPU, all cores", cpu_all));
        }
        for v in &variants {
            let pts: Vec<(f64, f64)> =
                of_m.iter().filter_map(|r| Some((r.1, r.2? / r.4.iter().find(|x| &x.0 == v)?.1))).collect();
            if !pts.is_empty() {
                speed.push(Series::new(format!("GPU {v}"), pts));
            }
        }
        if !speed.is_empty() {
            let title = format!("speed-up over one CPU thread, {m} minicolumns (cf. the paper's Fig. 7)");
            let path = c.out.join(format!("speedup-m{m}.svg"));
            line_chart(
                &path,
                &Labels { title: &title, x: "levels L (2^L - 1 hypercolumns)", y: "speed-up (log)" },
                &speed,
                true,
            )?;
            written.push(path);
        }
        // Figs. 14-17: every variant's time per step.
        let mut times = vec![];
        let cpu: [(&str, Seconds); 2] = [("CPU, 1 thread", |r| r.2), ("CPU, all cores", |r| r.3)];
        for (label, seconds) in cpu {
            let pts: Vec<(f64, f64)> = of_m.iter().filter_map(|r| Some((r.1, 1e3 * seconds(r)?))).collect();
            if !pts.is_empty() {
                times.push(Series::new(label, pts));
            }
        }
        for v in &variants {
            let pts: Vec<(f64, f64)> =
                of_m.iter().filter_map(|r| Some((r.1, 1e3 * r.4.iter().find(|x| &x.0 == v)?.1))).collect();
            times.push(Series::new(format!("GPU {v}"), pts));
        }
        let title = format!("time per training step, {m} minicolumns (cf. the paper's Figs. 14-17)");
        let path = c.out.join(format!("variants-m{m}.svg"));
        line_chart(
            &path,
            &Labels { title: &title, x: "levels L (2^L - 1 hypercolumns)", y: "ms per step (log)" },
            &times,
            true,
        )?;
        written.push(path);
    }
    for p in &written {
        outln!("wrote {}", p.display())?;
    }
    Ok(written)
}
