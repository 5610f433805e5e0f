//! Point files: one point per line, coordinates separated by whitespace or commas (FCPS `.data`
//! files as they are); blank lines and lines starting with `#` or `%` are skipped. Also CSV,
//! NPY and NPZ: everything [`crate::io::read`] reads.

use crate::io::read::{self, Format, ReadOptions, Table};
use anyhow::{bail, Result};
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

/// Reads a point file with [`crate::io::read`]: text as FCPS ships it, CSV with or without a
/// header, NPY, NPZ (its only array), gzipped or not, or standard input (`-`).
pub fn load(path: &Path) -> Result<Points> {
    load_with(path, &ReadOptions::default())
}

/// Reads a point file as `opts` say (format, delimiter, rows to skip, NPZ array); at least 2
/// points, all finite.
pub fn load_with(path: &Path, opts: &ReadOptions) -> Result<Points> {
    let name = if path == Path::new("-") { read::STDIN.to_string() } else { path.display().to_string() };
    points(read::read(path, opts)?, &name)
}

/// Parses point text: coordinates separated by commas or whitespace (mixed freely), a header
/// row allowed; at least 2 points, all finite, all of one dimension.
///
/// ```
/// let p = neurobits::ocnn::points::parse("% header\n1 2\n3,4\n\n5\t6\n", "mem").unwrap();
/// assert_eq!((p.n, p.dim, p.coords), (3, 2, vec![1., 2., 3., 4., 5., 6.]));
/// assert!(neurobits::ocnn::points::parse("1 2\n3\n", "mem").is_err());
/// ```
pub fn parse(text: &str, name: &str) -> Result<Points> {
    let opts = ReadOptions { format: Format::Text, ..ReadOptions::default() };
    points(read::parse(text.as_bytes(), name, &opts)?, name)
}

fn points(t: Table<f64>, name: &str) -> Result<Points> {
    if t.rows < 2 {
        bail!("{name}: clustering needs at least 2 points, found {}", t.rows);
    }
    if t.cols == 0 {
        bail!("{name}: the points have no coordinates (0 columns)");
    }
    Ok(Points { n: t.rows, dim: t.cols, coords: t.data })
}
