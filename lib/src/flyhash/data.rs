//! Input matrices (`b` rows of `d` finite `f32`) from NPY, NPZ, IDX or CSV, gzipped or not:
//! [`Matrix`] and thin wrappers over the one reader, [`crate::io::read`].

use crate::io::read::{self, Format, ReadOptions, Table};
use anyhow::{bail, Result};
use std::path::Path;

/// `rows × cols` values, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Rows (vectors).
    pub rows: usize,
    /// Columns (dimension).
    pub cols: usize,
    /// Row-major values.
    pub data: Vec<f32>,
}

/// A borrowed [`Matrix`]: `rows × cols` values, row-major, held by the caller (a numpy array
/// hashed without copying it into a `Matrix` first).
#[derive(Clone, Copy, Debug)]
pub struct MatrixRef<'a> {
    /// Rows (vectors).
    pub rows: usize,
    /// Columns (dimension).
    pub cols: usize,
    /// Row-major values, `rows · cols` of them.
    pub data: &'a [f32],
}

impl Matrix {
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The matrix borrowed.
    pub fn view(&self) -> MatrixRef<'_> {
        MatrixRef { rows: self.rows, cols: self.cols, data: &self.data }
    }

    /// Rejects NaN and ±inf, naming the first offending row and column.
    pub fn check_finite(&self, name: &str) -> Result<()> {
        self.view().check_finite(name)
    }
}

impl MatrixRef<'_> {
    /// Rejects NaN and ±inf, naming the first offending row and column. On every core: one
    /// core's scan of Fashion-MNIST's 188 MB took longer than the GPU's hashing of it.
    pub fn check_finite(&self, name: &str) -> Result<()> {
        use rayon::prelude::*;
        if let Some(i) = self.data.par_iter().position_first(|x| !x.is_finite()) {
            bail!(
                "{name}: row {}, column {}: {} is not a finite number",
                i / self.cols + 1,
                i % self.cols + 1,
                self.data[i]
            );
        }
        Ok(())
    }
}

impl From<Table<f32>> for Matrix {
    fn from(t: Table<f32>) -> Matrix {
        Matrix { rows: t.rows, cols: t.cols, data: t.data }
    }
}

/// Reads a matrix with [`crate::io::read::read`]: the format from the content (gzip undone
/// first, then NPY, NPZ or IDX magic, else CSV or other delimited text), so a misnamed file still
/// reads; a `.npy` name without the NPY magic is an error. Every value is finite.
pub fn read(path: &Path) -> Result<Matrix> {
    Ok(read::read::<f32>(path, &ReadOptions::default())?.into())
}

fn parse_as(b: &[u8], name: &str, format: Format) -> Result<Matrix> {
    Ok(read::parse::<f32>(b, name, &ReadOptions { format, ..ReadOptions::default() })?.into())
}

/// IDX (LeCun's MNIST format): magic `0 0 type ndim`, big-endian dimensions, data. Images
/// (`n × r × c`) become `n` rows of `r·c`; unsigned bytes are kept as 0..255.
pub fn idx(b: &[u8], name: &str) -> Result<Matrix> {
    parse_as(b, name, Format::Idx)
}

/// CSV: one row per line, comma-separated numbers (or tab- or semicolon-separated, detected);
/// blank lines and a header row (a first row none of whose fields is a number) skipped.
pub fn csv(text: &str, name: &str) -> Result<Matrix> {
    parse_as(text.as_bytes(), name, Format::Csv)
}

/// NPY (versions 1–3): floats of 2, 4 or 8 bytes, integers of 1–8 bytes and bools, either byte
/// order, C or Fortran order (`np.save(x.T)`), 1-D (one row) or 2-D. The shape is checked
/// against the file's size and the memory budget before anything is allocated.
pub fn npy(b: &[u8], name: &str) -> Result<Matrix> {
    parse_as(b, name, Format::Npy)
}

/// Fashion-MNIST from Debian's `dataset-fashion-mnist` (`make setup` installs it).
pub const FASHION_MNIST: &str = "/usr/share/datasets/fashion-mnist";
