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

/// Reads a matrix, choosing the format by extension (`.csv`, `.npy`, otherwise IDX).
pub fn read(path: &Path) -> Result<Matrix> {
    let name = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let m = match ext {
        "csv" => csv(&String::from_utf8(read_bytes(path)?).map_err(|_| anyhow!("{name}: not a text file"))?, &name)?,
        "npy" => npy(&read_bytes(path)?, &name)?,
        _ => idx(&read_bytes(path)?, &name)?,
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

/// CSV: one row per line, comma-separated numbers; blank lines skipped.
pub fn csv(text: &str, name: &str) -> Result<Matrix> {
    let (mut data, mut cols, mut rows) = (Vec::new(), None, 0);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let before = data.len();
        for (j, f) in line.split(',').enumerate() {
            let v: f32 = f
                .trim()
                .parse()
                .map_err(|_| anyhow!("{name}:{}: field {}: '{}' is not a number", i + 1, j + 1, f.trim()))?;
            if !v.is_finite() {
                bail!("{name}:{}: field {}: {v} is not a finite number", i + 1, j + 1);
            }
            data.push(v);
        }
        let n = data.len() - before;
        match cols {
            None => cols = Some(n),
            Some(c) if c != n => bail!("{name}:{}: expected {c} fields, found {n}", i + 1),
            _ => {}
        }
        rows += 1;
    }
    let cols = cols.ok_or_else(|| anyhow!("{name}: no data (the file is empty)"))?;
    Ok(Matrix { rows, cols, data })
}

/// NPY (version 1–3): little-endian `f4`, `f8`, `u1`, `i4` or `i8`, C order, 1-D (one row) or 2-D.
pub fn npy(b: &[u8], name: &str) -> Result<Matrix> {
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        bail!("{name}: not an NPY file (bad magic)");
    }
    let (hlen, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize, 12),
        v => bail!("{name}: unsupported NPY version {v}"),
    };
    let header =
        std::str::from_utf8(b.get(start..start + hlen).ok_or_else(|| anyhow!("{name}: truncated NPY header"))?)
            .map_err(|_| anyhow!("{name}: corrupt NPY header"))?;
    let field = |k: &str| -> Result<&str> {
        let at = header.find(&format!("'{k}'")).ok_or_else(|| anyhow!("{name}: NPY header lacks '{k}'"))?;
        Ok(header.get(at + k.len() + 2..).unwrap_or("").trim_start_matches([':', ' ']))
    };
    let descr = field("descr")?;
    let descr = descr.trim_start_matches('\'').split('\'').next().unwrap_or("");
    if field("fortran_order")?.starts_with("True") {
        bail!("{name}: Fortran-ordered NPY is not supported");
    }
    let shape_s = field("shape")?.strip_prefix('(').ok_or_else(|| anyhow!("{name}: corrupt NPY shape"))?;
    let shape_s = &shape_s[..shape_s.find(')').ok_or_else(|| anyhow!("{name}: corrupt NPY shape"))?];
    let shape: Vec<usize> = shape_s
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| anyhow!("{name}: corrupt NPY shape")))
        .collect::<Result<_>>()?;
    let (rows, cols) = match shape[..] {
        [n] => (1, n),
        [r, c] => (r, c),
        _ => bail!("{name}: NPY array must be 1-D or 2-D, found {} dimensions", shape.len()),
    };
    let body = b.get(start + hlen..).unwrap_or(&[]);
    let count = rows.checked_mul(cols).ok_or_else(|| anyhow!("{name}: absurd NPY shape"))?;
    let size = match descr {
        "<f4" | "<i4" => 4,
        "<f8" | "<i8" => 8,
        "|u1" => 1,
        d => bail!("{name}: unsupported NPY dtype {d}"),
    };
    let need = count.checked_mul(size).ok_or_else(|| anyhow!("{name}: absurd NPY shape"))?;
    if body.len() != need {
        bail!("{name}: NPY data is {} bytes, shape {rows}x{cols} needs {need}", body.len());
    }
    ensure_fits(&format!("{name}: the values as f32"), count as u128 * 4)?;
    let data = match descr {
        "<f4" => body.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect(),
        "<f8" => body.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap()) as f32).collect(),
        "<i4" => body.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f32).collect(),
        "<i8" => body.chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f32).collect(),
        _ => body.iter().map(|&x| x as f32).collect(),
    };
    Ok(Matrix { rows, cols, data })
}

/// Fashion-MNIST from Debian's `dataset-fashion-mnist` (`make setup` installs it).
pub const FASHION_MNIST: &str = "/usr/share/datasets/fashion-mnist";
