//! Input matrices (`b` rows of `d` finite `f32`) from IDX (optionally gzipped), CSV or NPY.

use crate::io::memory::ensure_fits;
use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
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

impl Matrix {
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Rejects NaN and ±inf, naming the first offending row and column.
    pub fn check_finite(&self, name: &str) -> Result<()> {
        if let Some(i) = self.data.iter().position(|x| !x.is_finite()) {
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

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        // Bounded by the memory budget: a small gzip file can claim any size.
        let limit = crate::io::memory::available_bytes().unwrap_or(isize::MAX as u64);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| anyhow!("{}: corrupt gzip data: {e}", path.display()))?;
        if out.len() as u64 > limit {
            bail!("{}: the decompressed data does not fit in memory", path.display());
        }
        return Ok(out);
    }
    Ok(raw)
}

/// Reads a matrix, choosing the format by its content (NPY magic, IDX magic, else CSV text),
/// so a misnamed file still reads; a `.npy` name without the NPY magic is an error. Gzip is undone
/// first.
pub fn read(path: &Path) -> Result<Matrix> {
    let name = path.display().to_string();
    let b = read_bytes(path)?;
    let npy_name = path.extension().is_some_and(|e| e == "npy");
    let m = if b.starts_with(b"\x93NUMPY") || npy_name {
        npy(&b, &name)?
    } else if b.len() >= 4 && b[0] == 0 && b[1] == 0 && matches!(b[2], 0x08 | 0x09 | 0x0B..=0x0E) {
        idx(&b, &name)?
    } else {
        csv(std::str::from_utf8(&b).map_err(|_| anyhow!("{name}: neither NPY, IDX nor CSV text"))?, &name)?
    };
    m.check_finite(&name)?;
    Ok(m)
}

/// IDX (LeCun's MNIST format): magic `0 0 type ndim`, big-endian dimensions, data. Images
/// (`n × r × c`) become `n` rows of `r·c`; unsigned bytes are kept as 0..255.
pub fn idx(b: &[u8], name: &str) -> Result<Matrix> {
    if b.len() < 4 || b[0] != 0 || b[1] != 0 {
        bail!("{name}: not an IDX file (bad magic)");
    }
    let (ty, nd) = (b[2], b[3] as usize);
    if nd == 0 || b.len() < 4 + 4 * nd {
        bail!("{name}: truncated IDX header");
    }
    let dims: Vec<usize> =
        (0..nd).map(|i| u32::from_be_bytes(b[4 + 4 * i..8 + 4 * i].try_into().unwrap()) as usize).collect();
    let count = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| anyhow!("{name}: absurd IDX dimensions"))?;
    let size = match ty {
        0x08 | 0x09 => 1,
        0x0B => 2,
        0x0C | 0x0D => 4,
        0x0E => 8,
        _ => bail!("{name}: unknown IDX element type 0x{ty:02x}"),
    };
    let body = &b[4 + 4 * nd..];
    let need = count.checked_mul(size).ok_or_else(|| anyhow!("{name}: absurd IDX dimensions"))?;
    if body.len() != need {
        bail!("{name}: IDX data is {} bytes, dimensions say {need}", body.len());
    }
    ensure_fits(&format!("{name}: the values as f32"), count as u128 * 4)?;
    let data: Vec<f32> = match ty {
        0x08 => body.iter().map(|&x| x as f32).collect(),
        0x09 => body.iter().map(|&x| x as i8 as f32).collect(),
        0x0B => body.chunks(2).map(|c| i16::from_be_bytes([c[0], c[1]]) as f32).collect(),
        0x0C => body.chunks(4).map(|c| i32::from_be_bytes(c.try_into().unwrap()) as f32).collect(),
        0x0D => body.chunks(4).map(|c| f32::from_be_bytes(c.try_into().unwrap())).collect(),
        _ => body.chunks(8).map(|c| f64::from_be_bytes(c.try_into().unwrap()) as f32).collect(),
    };
    let rows = dims[0];
    Ok(Matrix { rows, cols: count.checked_div(rows).unwrap_or(0), data })
}

/// CSV (the `csv` crate: quoting, CRLF): one row per line, comma-separated numbers; blank lines
/// and a header row (a first row none of whose fields is a number) skipped.
pub fn csv(text: &str, name: &str) -> Result<Matrix> {
    let mut r =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let (mut data, mut cols, mut rows) = (Vec::new(), None, 0);
    let mut rec = csv::StringRecord::new();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => bail!("{name}: {e}"),
        }
        let line = rec.position().map_or(0, |p| p.line());
        if rec.iter().all(str::is_empty) {
            continue;
        }
        if rows == 0 && cols.is_none() && rec.iter().all(|f| f.parse::<f32>().is_err()) {
            continue;
        }
        let before = data.len();
        for (j, f) in rec.iter().enumerate() {
            let v: f32 = f.parse().map_err(|_| anyhow!("{name}:{line}: field {}: '{f}' is not a number", j + 1))?;
            if !v.is_finite() {
                bail!("{name}:{line}: field {}: {v} is not a finite number", j + 1);
            }
            data.push(v);
        }
        let n = data.len() - before;
        match cols {
            None => cols = Some(n),
            Some(c) if c != n => bail!("{name}:{line}: expected {c} fields, found {n}"),
            _ => {}
        }
        rows += 1;
    }
    let cols = cols.ok_or_else(|| anyhow!("{name}: no data (the file is empty)"))?;
    Ok(Matrix { rows, cols, data })
}

/// NPY (version 1–3, read by the `npyz` crate): floats of 2, 4 or 8 bytes and integers of 1–8
/// bytes, either byte order, C or Fortran order (`np.save(x.T)`), 1-D (one row) or 2-D. The
/// shape is checked against the file's size and the memory budget before anything is allocated
/// (a header can claim any shape).
pub fn npy(b: &[u8], name: &str) -> Result<Matrix> {
    use npyz::{DType, Order, TypeChar};
    if !b.starts_with(b"\x93NUMPY") || b.len() < 10 {
        bail!("{name}: not an NPY file (bad magic)");
    }
    // The body follows the header: magic, version, header length (2 bytes in v1, 4 after).
    // Checked against the file before npyz sees it: npyz allocates the claimed header length.
    let start = match b[6] {
        1 => 10 + u16::from_le_bytes([b[8], b[9]]) as usize,
        _ if b.len() >= 12 => 12usize.saturating_add(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize),
        _ => bail!("{name}: truncated NPY header"),
    };
    if start > b.len() {
        bail!("{name}: truncated NPY header");
    }
    let f = npyz::NpyFile::new(b).map_err(|e| anyhow!("{name}: corrupt NPY file: {e}"))?;
    let dims = |s: &[u64]| -> Option<(usize, usize)> {
        match *s {
            [n] => Some((1, usize::try_from(n).ok()?)),
            [r, c] => Some((usize::try_from(r).ok()?, usize::try_from(c).ok()?)),
            _ => None,
        }
    };
    let (rows, cols) = dims(f.shape())
        .ok_or_else(|| anyhow!("{name}: NPY array must be 1-D or 2-D of a sane size, found shape {:?}", f.shape()))?;
    let DType::Plain(ts) = f.dtype() else { bail!("{name}: unsupported NPY dtype (structured or array)") };
    let (kind, size) = (ts.type_char(), ts.size_field() as usize);
    if !matches!((kind, size), (TypeChar::Float, 2 | 4 | 8) | (TypeChar::Int | TypeChar::Uint, 1 | 2 | 4 | 8)) {
        bail!("{name}: unsupported NPY dtype {ts}");
    }
    let count = rows.checked_mul(cols).ok_or_else(|| anyhow!("{name}: absurd NPY shape"))?;
    let need = count.checked_mul(size).ok_or_else(|| anyhow!("{name}: absurd NPY shape"))?;
    let body = b.len() - start;
    if body != need {
        bail!("{name}: NPY data is {body} bytes, shape {rows}x{cols} needs {need}");
    }
    ensure_fits(&format!("{name}: the values as f32"), count as u128 * 8)?;
    let fortran = f.order() == Order::Fortran;
    let bad = |e: std::io::Error| anyhow!("{name}: corrupt NPY data: {e}");
    macro_rules! as_f32 {
        ($t:ty) => {
            f.into_vec::<$t>().map_err(bad)?.into_iter().map(|v| v as f32).collect::<Vec<f32>>()
        };
    }
    let flat: Vec<f32> = match (kind, size) {
        (TypeChar::Float, 2) => f.into_vec::<npyz::half::f16>().map_err(bad)?.into_iter().map(f32::from).collect(),
        (TypeChar::Float, 4) => f.into_vec::<f32>().map_err(bad)?,
        (TypeChar::Float, _) => as_f32!(f64),
        (TypeChar::Int, 1) => as_f32!(i8),
        (TypeChar::Int, 2) => as_f32!(i16),
        (TypeChar::Int, 4) => as_f32!(i32),
        (TypeChar::Int, _) => as_f32!(i64),
        (_, 1) => as_f32!(u8),
        (_, 2) => as_f32!(u16),
        (_, 4) => as_f32!(u32),
        _ => as_f32!(u64),
    };
    // Fortran order (what `np.save(x.T)` writes): column-major; transpose to rows.
    let data = if fortran && rows > 1 && cols > 1 {
        let mut t = vec![0f32; count];
        for c in 0..cols {
            for r in 0..rows {
                t[r * cols + c] = flat[c * rows + r];
            }
        }
        t
    } else {
        flat
    };
    Ok(Matrix { rows, cols, data })
}

/// Fashion-MNIST from Debian's `dataset-fashion-mnist` (`make setup` installs it).
pub const FASHION_MNIST: &str = "/usr/share/datasets/fashion-mnist";
