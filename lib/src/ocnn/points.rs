//! Point files: one point per line, coordinates separated by whitespace or commas (FCPS `.data`
//! files as they are); blank lines and lines starting with `#` or `%` are skipped.

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

/// `n` points of dimension `dim`, row-major `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct Points {
    /// Number of points.
    pub n: usize,
    /// Coordinates per point.
    pub dim: usize,
    /// `n · dim` coordinates.
    pub coords: Vec<f64>,
}

impl Points {
    /// Point `i`'s coordinates.
    pub fn point(&self, i: usize) -> &[f64] {
        &self.coords[i * self.dim..(i + 1) * self.dim]
    }

    /// The points from row `skip` on (FCPS's Lsun file starts with 3 rows of header debris).
    pub fn skip(&self, skip: usize) -> Points {
        let skip = skip.min(self.n);
        Points { n: self.n - skip, dim: self.dim, coords: self.coords[skip * self.dim..].to_vec() }
    }
}

/// Reads a point file.
pub fn load(path: &Path) -> Result<Points> {
    let name = path.display().to_string();
    parse(&std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?, &name)
}

/// Parses point text; at least 2 points, all finite, all of one dimension.
///
/// ```
/// let p = neurobits::ocnn::points::parse("% header\n1 2\n3,4\n\n5\t6\n", "mem").unwrap();
/// assert_eq!((p.n, p.dim, p.coords), (3, 2, vec![1., 2., 3., 4., 5., 6.]));
/// assert!(neurobits::ocnn::points::parse("1 2\n3\n", "mem").is_err());
/// ```
pub fn parse(text: &str, name: &str) -> Result<Points> {
    let (mut coords, mut dim, mut n) = (Vec::new(), None, 0usize);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let before = coords.len();
        for f in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|f| !f.is_empty()) {
            let v: f64 = f.parse().map_err(|_| anyhow!("{name}:{}: '{f}' is not a number", i + 1))?;
            if !v.is_finite() {
                bail!("{name}:{}: {v} is not a finite number", i + 1);
            }
            coords.push(v);
        }
        let d = coords.len() - before;
        match dim {
            None => dim = Some(d),
            Some(e) if e != d => bail!("{name}:{}: expected {e} coordinates, found {d}", i + 1),
            _ => {}
        }
        n += 1;
    }
    let dim = dim.ok_or_else(|| anyhow!("{name}: no points (the file is empty)"))?;
    if n < 2 {
        bail!("{name}: clustering needs at least 2 points, found {n}");
    }
    Ok(Points { n, dim, coords })
}
