//! `neurobits cortical features`: the learned features of the bottom hypercolumns as images — for
//! each minicolumn, its weights on the on-off (green) and off-on (magenta) LGN cells of every
//! pixel of its hypercolumn's receptive field, laid out as that rectangle of the image.

use anyhow::{anyhow, bail, Result};
use neurobits_core::cortical::lgn::receptive_field;
use plotters::prelude::*;
use std::path::PathBuf;

use super::data::padded_size;
use super::network::Network;
use crate::io::atomic::write_string;

/// `cortical features`: which network and where the picture goes.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FeaturesConfig {
    /// A network saved by `cortical train --out`.
    #[cfg_attr(feature = "cli", arg(long = "model", alias = "net", value_name = "MODEL"))]
    pub net: PathBuf,
    /// Bottom hypercolumns to draw, from the first (a row of tiles each).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 8, value_parser = crate::validate::positive))]
    pub hypercolumns: usize,
    /// The SVG file to write.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

/// Pixels per LGN cell, gap between tiles, tiles per row, left margin for the labels.
const CELL: i32 = 10;
const GAP: i32 = 6;
const PER_ROW: usize = 16;
const LEFT: i32 = 70;

/// Draws the features (see the module documentation).
pub fn run(c: &FeaturesConfig) -> Result<()> {
    crate::io::atomic::check_writable(&c.out)?;
    let net = Network::load(&c.net)?;
    let geo = net.geo;
    let m = geo.minicolumns();
    let need = geo.level_len(0).checked_mul(m).ok_or_else(|| anyhow!("network too large"))?;
    let (h, w) = padded_size(1, need).ok_or_else(|| anyhow!("{need} bottom pixels are not a square or a 1x2 image"))?;
    let shown = c.hypercolumns.min(geo.level_len(0));
    let rects: Vec<_> = (0..shown).map(|j| receptive_field(&geo, h, w, j)).collect();
    let (rh, rw) = rects.iter().fold((0, 0), |a, r| (a.0.max(r.2), a.1.max(r.3)));
    if rh * rw != m || rh > 64 || rw > 64 {
        bail!("receptive fields of {rh}x{rw} pixels do not match {m} minicolumns");
    }
    let (tile_w, tile_h) = (rw as i32 * CELL, rh as i32 * CELL);
    let rows_per_hc = m.div_ceil(PER_ROW) as i32;
    let cols = m.min(PER_ROW) as i32;
    let width = LEFT + cols * (tile_w + GAP) + GAP;
    let height = 40 + shown as i32 * rows_per_hc * (tile_h + GAP) + shown as i32 * GAP;
    let wp = geo.weights_per_column();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        let title = format!(
            "learned features: {} levels x {} minicolumns, bottom hypercolumns 0-{} (green: on-off, magenta: off-on)",
            geo.levels(),
            m,
            shown - 1
        );
        root.draw_text(&title, &("sans-serif", 14).into_text_style(&root), (GAP, 12))
            .map_err(|e| anyhow!("plot: {e}"))?;
        for (j, &(_, _, fh, fw)) in rects.iter().enumerate() {
            let col = &net.w[j * wp..(j + 1) * wp]; // [input][minicolumn]
            let top = 40 + j as i32 * (rows_per_hc * (tile_h + GAP) + GAP);
            let label = format!("HC {j}");
            root.draw_text(&label, &("sans-serif", 13).into_text_style(&root), (GAP, top + tile_h / 2 - 6))
                .map_err(|e| anyhow!("plot: {e}"))?;
            for k in 0..m {
                let (tr, tc) = ((k / PER_ROW) as i32, (k % PER_ROW) as i32);
                let (x0, y0) = (LEFT + tc * (tile_w + GAP), top + tr * (tile_h + GAP));
                for p in 0..fh * fw {
                    // Q0.16 weights; the brighter channel sets the colour.
                    let on = col[(2 * p) * m + k] as f64 / 65_535.0;
                    let off = col[(2 * p + 1) * m + k] as f64 / 65_535.0;
                    let shade = |v: f64| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
                    let colour = RGBColor(shade(off), shade(on), shade(off));
                    let (x, y) = (x0 + (p % fw) as i32 * CELL, y0 + (p / fw) as i32 * CELL);
                    root.draw(&Rectangle::new([(x, y), (x + CELL, y + CELL)], colour.filled()))
                        .map_err(|e| anyhow!("plot: {e}"))?;
                }
            }
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    write_string(&c.out, &svg)
}
