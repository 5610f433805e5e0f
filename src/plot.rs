//! SVG line charts (plotters), written atomically.

use anyhow::{anyhow, Result};
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
        let root = SVGBackend::with_string(&mut svg, (960, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        // The legend gets its own column to the right of the plot.
        let (plot, legend) = root.split_horizontally(740);
        let mut b = ChartBuilder::on(&plot);
        b.caption(labels.title, ("sans-serif", 20)).margin(15).x_label_area_size(45).y_label_area_size(65);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_label_formatter(&|x| format!("{x:.0}"))
                    .x_desc(labels.x)
                    .y_desc(labels.y)
                    .draw()
                    .map_err(|e| anyhow!("plot: {e}"))?;
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
        let xr = x0 - 0.2..x1 + 0.2;
        if log_y {
            let lo = pts().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::MAX, f64::min).min(y1);
            draw!(b.build_cartesian_2d(xr, (lo * 0.5..y1 * 2.0).log_scale()).map_err(|e| anyhow!("plot: {e}"))?);
        } else {
            draw!(b.build_cartesian_2d(xr, (y0.min(0.0))..(y1 * 1.05).max(1e-9)).map_err(|e| anyhow!("plot: {e}"))?);
        }
        // The legend: a sample of each series' line, dash and marker, then its name.
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
                .draw(&Text::new(s.label.clone(), (56, y - 7), ("sans-serif", 14)))
                .map_err(|e| anyhow!("plot: {e}"))?;
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    write_string(path, &svg)
}

/// One group of bars: a label (e.g. a rule) and `(bar label, value)` pairs.
pub struct Bars {
    /// Series name, as the legend shows it.
    pub label: String,
    /// (bar label, value) pairs.
    pub values: Vec<(String, f64)>,
}

/// Grouped bar chart with a log-scale y axis, as SVG. Bars with the same label share a colour.
pub fn bar_chart_log(path: &Path, title: &str, groups: &[Bars]) -> Result<()> {
    let vals = || groups.iter().flat_map(|g| g.values.iter().map(|v| v.1)).filter(|&v| v > 0.0);
    let lo = vals().fold(f64::MAX, f64::min);
    let hi = vals().fold(f64::MIN, f64::max);
    if lo > hi || !lo.is_finite() {
        return Err(anyhow!("nothing to plot for {}", path.display()));
    }
    let mut names: Vec<String> = Vec::new();
    for g in groups {
        for (n, _) in &g.values {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let per = names.len() as f64 + 1.0;
    let colors = [&BLUE, &RED, &GREEN, &MAGENTA, &CYAN, &BLACK, &RGBColor(255, 140, 0), &RGBColor(128, 0, 128)];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..groups.len() as f64 * per, (lo * 0.25..hi * 2.0).log_scale())
            .map_err(|e| anyhow!("plot: {e}"))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("microseconds (log)")
            .draw()
            .map_err(|e| anyhow!("plot: {e}"))?;
        let style = ("sans-serif", 16).into_font().color(&BLACK);
        chart
            .draw_series(
                groups
                    .iter()
                    .enumerate()
                    .map(|(i, g)| Text::new(g.label.clone(), (i as f64 * per + 0.5, lo * 0.35), style.clone())),
            )
            .map_err(|e| anyhow!("plot: {e}"))?;
        for (k, name) in names.iter().enumerate() {
            let col = colors[k % colors.len()];
            let rects: Vec<_> = groups
                .iter()
                .enumerate()
                .filter_map(|(i, g)| g.values.iter().find(|v| &v.0 == name).map(|v| (i, v.1)))
                .filter(|&(_, v)| v > 0.0)
                .map(|(i, v)| {
                    let x0 = i as f64 * per + 0.5 + k as f64;
                    Rectangle::new([(x0, lo * 0.5), (x0 + 0.9, v)], col.filled())
                })
                .collect();
            chart
                .draw_series(rects)
                .map_err(|e| anyhow!("plot: {e}"))?
                .label(name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| anyhow!("plot: {e}"))?;
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
    let (x0, x1) = xy.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = xy.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if !(x0 <= x1 && y0 <= y1) {
        return Err(anyhow!("nothing to plot for {}", path.display()));
    }
    let k = cluster.iter().max().map_or(0, |m| m + 1) as usize;
    let mut size = vec![0usize; k];
    cluster.iter().for_each(|&c| size[c as usize] += 1);
    let (px, py) = ((x1 - x0).max(1e-12) * 0.03, (y1 - y0).max(1e-12) * 0.03);
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
