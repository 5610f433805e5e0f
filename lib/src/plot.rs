//! SVG line charts (plotters), written atomically.

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

use crate::io::atomic::write_string;

/// One curve: a label, its points and, optionally, an interval around each point.
pub struct Series {
    /// Series name, as the legend shows it.
    pub label: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// `(low, high)` of each point (e.g. a Wilson 95 % interval), drawn as a bar; empty for none.
    pub intervals: Vec<(f64, f64)>,
}

impl Series {
    /// A curve without intervals.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { label: label.into(), points, intervals: Vec::new() }
    }
}

/// The largest magnitude plotted (and the smallest positive value on a log axis): beyond it
/// plotters' range arithmetic overflows (1e300 · 1.05 = inf) or its tick search never ends
/// (subnormal ranges). Values past it are clamped, with a note.
const LIMIT: f64 = 1e30;

/// What [`Odd::value`] left out or moved, for the note.
#[derive(Default)]
struct Odd {
    dropped: usize,
    clamped: usize,
}

impl Odd {
    /// `v` as plotted: `None` (not drawn) when it is NaN or infinite, or not positive on a log
    /// axis; clamped into `[-LIMIT, LIMIT]` (`[1/LIMIT, LIMIT]` on a log axis).
    fn value(&mut self, v: f64, log: bool) -> Option<f64> {
        let (lo, hi) = if log { (1.0 / LIMIT, LIMIT) } else { (-LIMIT, LIMIT) };
        if !v.is_finite() || (log && v <= 0.0) {
            self.dropped += 1;
            return None;
        }
        if v < lo || v > hi {
            self.clamped += 1;
        }
        Some(v.clamp(lo, hi))
    }

    /// The chart's title with a short count of what was not drawn or clamped (the title must
    /// fit); the note on standard error says why.
    fn report(&self, path: &Path, title: &str) -> String {
        let (mut short, mut long) = (Vec::new(), Vec::new());
        if self.dropped > 0 {
            short.push(format!("{} not drawn", self.dropped));
            long.push(format!("{} values not drawn (NaN, infinite or not positive on a log axis)", self.dropped));
        }
        if self.clamped > 0 {
            short.push(format!("{} clamped", self.clamped));
            long.push(format!("{} values clamped (beyond ±1e30, or below 1e-30 on a log axis)", self.clamped));
        }
        if short.is_empty() {
            return title.to_string();
        }
        crate::noteln!("note: {}: {}", path.display(), long.join(", "));
        format!("{title} ({})", short.join(", "))
    }
}

/// `series` with every point [`Odd::value`] drops left out (with its interval) and the rest
/// clamped, and the title that says so.
fn clean_series(path: &Path, title: &str, series: &[Series], log_y: bool) -> (Vec<Series>, String) {
    let mut odd = Odd::default();
    let clean = series
        .iter()
        .map(|s| {
            let mut out = Series::new(s.label.clone(), Vec::new());
            for (i, &(x, y)) in s.points.iter().enumerate() {
                let (Some(x), Some(y)) = (odd.value(x, false), odd.value(y, log_y)) else { continue };
                out.points.push((x, y));
                if let Some(&(lo, hi)) = s.intervals.get(i) {
                    let fix = |v: f64| if v.is_finite() { v.clamp(-LIMIT, LIMIT) } else { y };
                    let (lo, hi) = (fix(lo), fix(hi));
                    out.intervals.push(if log_y { (lo.max(1.0 / LIMIT), hi.max(1.0 / LIMIT)) } else { (lo, hi) });
                }
            }
            // Intervals pair with points by position: keep them only if every point kept one.
            if out.intervals.len() != out.points.len() {
                out.intervals.clear();
            }
            out
        })
        .collect();
    (clean, odd.report(path, title))
}

/// A linear x axis whose ticks are given (plotters' `WithKeyPoints` has no label formatter for
/// f64, so this is the few lines it would take).
struct XTicks {
    inner: RangedCoordf64,
    keys: Vec<f64>,
}

impl Ranged for XTicks {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }
    fn key_points<H: KeyPointHint>(&self, _: H) -> Vec<f64> {
        self.keys.clone()
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

impl ValueFormatter<f64> for XTicks {
    fn format(v: &f64) -> String {
        format!("{}", *v as f32) // shortest form that reads back: 16, 0.5, 1e-6
    }
}

/// Axis and title text of a chart.
pub struct Labels<'a> {
    /// Chart title.
    pub title: &'a str,
    /// X-axis label.
    pub x: &'a str,
    /// Y-axis label.
    pub y: &'a str,
}

/// Writes a line chart of `series` to `path` (SVG). `log_y` plots y on a log scale. Series are
/// told apart by colour (Okabe–Ito), marker and dash pattern together, so that coinciding
/// curves stay visible (each later series is drawn smaller on top) and a grey-scale print still
/// separates them; the legend sits to the right of the plot, outside the data.
pub fn line_chart(path: &Path, labels: &Labels, series: &[Series], log_y: bool) -> Result<()> {
    line_chart_in(path, labels, series, log_y, None)
}

/// [`line_chart`] with the x axis spanning `x_range` (e.g. `0..1` for a recall) and plotters'
/// round ticks, instead of the data's span and, for few values, ticks at the data's own x.
pub fn line_chart_in(
    path: &Path,
    labels: &Labels,
    series: &[Series],
    log_y: bool,
    x_range: Option<(f64, f64)>,
) -> Result<()> {
    let (series, title) = clean_series(path, labels.title, series, log_y);
    let (series, labels) = (&series[..], Labels { title: &title, ..*labels });
    let pts = || {
        series.iter().flat_map(|s| {
            s.points.iter().copied().chain(s.intervals.iter().flat_map(|&(lo, hi)| [(f64::NAN, lo), (f64::NAN, hi)]))
        })
    };
    let (x0, x1) = pts().filter(|p| p.0.is_finite()).fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if !(x0 <= x1 && y0 <= y1) {
        return Err(anyhow!("nothing to plot for {}", path.display()));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        // The legend gets its own column to the right of the plot.
        let (plot, legend) = root.split_horizontally(740);
        let mut b = ChartBuilder::on(&plot);
        b.caption(labels.title, ("sans-serif", 20)).margin(15).x_label_area_size(45).y_label_area_size(65);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart.configure_mesh().x_desc(labels.x).y_desc(labels.y).draw().map_err(|e| anyhow!("plot: {e}"))?;
                for (i, s) in series.iter().enumerate() {
                    let col = OKABE_ITO[i % OKABE_ITO.len()];
                    // Later series thinner and with smaller markers, so that equal curves show.
                    let (width, size) = (3u32.saturating_sub(i as u32 / 2).max(1), 6i32 - (i as i32).min(3));
                    for (&(x, _), &(lo, hi)) in s.points.iter().zip(&s.intervals) {
                        chart
                            .draw_series(std::iter::once(PathElement::new(vec![(x, lo), (x, hi)], col.stroke_width(1))))
                            .map_err(|e| anyhow!("plot: {e}"))?;
                    }
                    let style = col.stroke_width(width);
                    match i % 3 {
                        0 => chart.draw_series(LineSeries::new(s.points.clone(), style)).map(drop),
                        1 => chart.draw_series(DashedLineSeries::new(s.points.clone(), 8, 5, style)).map(drop),
                        _ => chart.draw_series(DashedLineSeries::new(s.points.clone(), 2, 4, style)).map(drop),
                    }
                    .map_err(|e| anyhow!("plot: {e}"))?;
                    match (i / 3) % 3 {
                        0 => chart.draw_series(s.points.iter().map(|&p| Circle::new(p, size, col.filled()))).map(drop),
                        1 => chart
                            .draw_series(s.points.iter().map(|&p| TriangleMarker::new(p, size, col.filled())))
                            .map(drop),
                        _ => chart
                            .draw_series(s.points.iter().map(|&p| Cross::new(p, size, col.stroke_width(2))))
                            .map(drop),
                    }
                    .map_err(|e| anyhow!("plot: {e}"))?;
                }
            }};
        }
        // Ticks at the data's own x values when there are few (k = 16, 32, 64 or erased = 0..8),
        // so that every point sits on a labelled tick; otherwise plotters' round numbers.
        let mut xs: Vec<f64> = pts().map(|p| p.0).filter(|x| x.is_finite()).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        // Relative too: all-equal x of 1e20 need more than 0.2 either side to make a range.
        let pad = ((x1 - x0) * 0.02).max(0.2).max(x0.abs().max(x1.abs()) * 1e-6);
        let (inner, few): (RangedCoordf64, bool) = match x_range {
            Some((lo, hi)) => ((lo..hi).into(), false),
            None => ((x0 - pad..x1 + pad).into(), xs.len() <= 16),
        };
        let keys = if few { xs } else { inner.key_points(11) };
        let xr = XTicks { inner, keys };
        if log_y {
            let lo = pts().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::MAX, f64::min).min(y1);
            draw!(b.build_cartesian_2d(xr, (lo * 0.5..y1 * 2.0).log_scale()).map_err(|e| anyhow!("plot: {e}"))?);
        } else {
            draw!(b.build_cartesian_2d(xr, (y0.min(0.0))..(y1 * 1.05).max(1e-9)).map_err(|e| anyhow!("plot: {e}"))?);
        }
        // The legend: a sample of each series' line, dash and marker, then its name; long names
        // get a smaller font so that they fit the legend's column (about 0.47 em per character).
        let longest = series.iter().map(|s| s.label.chars().count()).max().unwrap_or(0).max(1);
        let font = (430.0 / longest as f64).clamp(9.0, 14.0);
        for (i, s) in series.iter().enumerate() {
            let col = OKABE_ITO[i % OKABE_ITO.len()];
            let y = 60 + 26 * i as i32;
            let seg = vec![(8, y), (48, y)];
            let style = col.stroke_width(2);
            match i % 3 {
                0 => legend.draw(&PathElement::new(seg, style)),
                1 => legend
                    .draw(&PathElement::new(vec![(8, y), (24, y)], style))
                    .and(legend.draw(&PathElement::new(vec![(32, y), (48, y)], style))),
                _ => legend
                    .draw(&PathElement::new(vec![(8, y), (12, y)], style))
                    .and(legend.draw(&PathElement::new(vec![(26, y), (30, y)], style)))
                    .and(legend.draw(&PathElement::new(vec![(44, y), (48, y)], style))),
            }
            .map_err(|e| anyhow!("plot: {e}"))?;
            match (i / 3) % 3 {
                0 => legend.draw(&Circle::new((28, y), 5, col.filled())),
                1 => legend.draw(&TriangleMarker::new((28, y), 5, col.filled())),
                _ => legend.draw(&Cross::new((28, y), 5, col.stroke_width(2))),
            }
            .map_err(|e| anyhow!("plot: {e}"))?;
            legend
                .draw(&Text::new(s.label.clone(), (56, y - 7), ("sans-serif", font)))
                .map_err(|e| anyhow!("plot: {e}"))?;
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    write_string(path, &svg)
}

/// One series of a dot chart: a label (e.g. a rule) and `(category, value)` pairs; `None` marks a
/// category where the value is not available (drawn as "n/a", never silently dropped).
pub struct Bars {
    /// Series name, as the legend shows it.
    pub label: String,
    /// (category, value) pairs.
    pub values: Vec<(String, Option<f64>)>,
}

/// A dot chart with a log-scale y axis, as SVG: categories along x (e.g. targets), one marker per
/// series in each (colour and shape by series). Points on a log axis, not bars from an arbitrary
/// floor; unavailable values are written "n/a" at the bottom of their column.
pub fn bar_chart_log(path: &Path, title: &str, y_desc: &str, groups: &[Bars]) -> Result<()> {
    let mut odd = Odd::default();
    let groups: Vec<Bars> = groups
        .iter()
        .map(|g| Bars {
            label: g.label.clone(),
            values: g.values.iter().map(|(c, v)| (c.clone(), v.and_then(|v| odd.value(v, true)))).collect(),
        })
        .collect();
    let title = odd.report(path, title);
    let (groups, title) = (&groups[..], &title[..]);
    let vals = || groups.iter().flat_map(|g| g.values.iter().filter_map(|v| v.1)).filter(|&v| v > 0.0);
    let lo = vals().fold(f64::MAX, f64::min);
    let hi = vals().fold(f64::MIN, f64::max);
    if lo > hi || !lo.is_finite() {
        return Err(anyhow!("nothing to plot for {}", path.display()));
    }
    let mut cats: Vec<String> = Vec::new();
    for g in groups {
        for (n, _) in &g.values {
            if !cats.contains(n) {
                cats.push(n.clone());
            }
        }
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        let (plot, legend) = root.split_horizontally(900);
        let (y0, y1) = (lo / 4.0, hi * 2.0);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(250)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..cats.len() as f64 - 0.5, (y0..y1).log_scale())
            .map_err(|e| anyhow!("plot: {e}"))?;
        // The categories are drawn below (plotters centres rotated axis labels on their tick,
        // so long ones would straddle the axis); the mesh keeps the ticks.
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(cats.len().max(1))
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .draw()
            .map_err(|e| anyhow!("plot: {e}"))?;
        let label = ("sans-serif", 12).into_font().transform(FontTransform::Rotate90).into_text_style(&plot).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            ),
        );
        for (i, c) in cats.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, y0));
            plot.draw(&Text::new(c.clone(), (px, py + 10), label.clone())).map_err(|e| anyhow!("plot: {e}"))?;
        }
        let n = groups.len().max(1) as f64;
        for (k, g) in groups.iter().enumerate() {
            let col = OKABE_ITO[k % OKABE_ITO.len()];
            let dx = (k as f64 - (n - 1.0) / 2.0) * 0.6 / n;
            for (c, v) in &g.values {
                let x = cats.iter().position(|x| x == c).unwrap_or(0) as f64 + dx;
                match v {
                    Some(v) if *v > 0.0 => match k % 3 {
                        0 => chart.draw_series(std::iter::once(Circle::new((x, *v), 6, col.filled()))).map(drop),
                        1 => {
                            chart.draw_series(std::iter::once(TriangleMarker::new((x, *v), 6, col.filled()))).map(drop)
                        }
                        _ => chart.draw_series(std::iter::once(Cross::new((x, *v), 6, col.stroke_width(2)))).map(drop),
                    },
                    _ => chart
                        .draw_series(std::iter::once(Text::new(
                            "n/a",
                            (x - 0.1, y0 * 1.3),
                            ("sans-serif", 12).into_font().color(&col),
                        )))
                        .map(drop),
                }
                .map_err(|e| anyhow!("plot: {e}"))?;
            }
        }
        for (k, g) in groups.iter().enumerate() {
            let col = OKABE_ITO[k % OKABE_ITO.len()];
            let y = 60 + 26 * k as i32;
            match k % 3 {
                0 => legend.draw(&Circle::new((20, y), 6, col.filled())),
                1 => legend.draw(&TriangleMarker::new((20, y), 6, col.filled())),
                _ => legend.draw(&Cross::new((20, y), 6, col.stroke_width(2))),
            }
            .map_err(|e| anyhow!("plot: {e}"))?;
            legend
                .draw(&Text::new(g.label.clone(), (36, y - 7), ("sans-serif", 14)))
                .map_err(|e| anyhow!("plot: {e}"))?;
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    write_string(path, &svg)
}

/// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// Writes a scatter plot of 2-D points coloured by cluster (`labels`; clusters of one point in
/// grey) to `path` (SVG). Colours repeat after eight clusters, with a different marker each round.
pub fn scatter(path: &Path, labels: &Labels, xy: &[(f64, f64)], cluster: &[u32]) -> Result<()> {
    let mut odd = Odd::default();
    let (xy, cluster): (Vec<(f64, f64)>, Vec<u32>) = xy
        .iter()
        .zip(cluster)
        .filter_map(|(&(x, y), &c)| Some(((odd.value(x, false)?, odd.value(y, false)?), c)))
        .unzip();
    let title = odd.report(path, labels.title);
    let (xy, cluster, labels) = (&xy[..], &cluster[..], &Labels { title: &title, ..*labels });
    let (x0, x1) = xy.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = xy.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if !(x0 <= x1 && y0 <= y1) {
        return Err(anyhow!("nothing to plot for {}", path.display()));
    }
    let k = cluster.iter().max().map_or(0, |m| m + 1) as usize;
    let mut size = vec![0usize; k];
    cluster.iter().for_each(|&c| size[c as usize] += 1);
    // A margin relative to the values too: all-equal coordinates of 1e20 need more than 1e-12.
    let margin = |a: f64, b: f64| ((b - a) * 0.03).max(a.abs().max(b.abs()) * 1e-6).max(1e-12);
    let (px, py) = (margin(x0, x1), margin(y0, y1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (700, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(x0 - px..x1 + px, y0 - py..y1 + py)
            .map_err(|e| anyhow!("plot: {e}"))?;
        chart.configure_mesh().x_desc(labels.x).y_desc(labels.y).draw().map_err(|e| anyhow!("plot: {e}"))?;
        let mut rank = 0usize; // clusters of more than one point, in label order
        for (c, &members) in size.iter().enumerate() {
            let pts = xy.iter().zip(cluster).filter(|(_, &l)| l as usize == c).map(|(&p, _)| p);
            if members == 1 {
                chart
                    .draw_series(pts.map(|p| Circle::new(p, 2, RGBColor(160, 160, 160).filled())))
                    .map_err(|e| anyhow!("plot: {e}"))?;
                continue;
            }
            let col = OKABE_ITO[rank % OKABE_ITO.len()];
            match (rank / OKABE_ITO.len()) % 3 {
                0 => chart.draw_series(pts.map(|p| Circle::new(p, 3, col.filled()))),
                1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 4, col.filled()))),
                _ => chart.draw_series(pts.map(|p| Cross::new(p, 4, col.stroke_width(2)))),
            }
            .map_err(|e| anyhow!("plot: {e}"))?;
            rank += 1;
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    write_string(path, &svg)
}
