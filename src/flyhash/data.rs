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

/// CSV: one row per line, comma-separated numbers; blank lines and a header row skipped.
pub fn csv(text: &str, name: &str) -> Result<Matrix> {
    let (mut data, mut cols, mut rows) = (Vec::new(), None, 0);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // A header row (a first line none of whose fields is a number) is skipped.
        if rows == 0 && cols.is_none() && line.split(',').all(|f| f.trim().parse::<f32>().is_err()) {
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

/// NPY (version 1–3): floats of 2, 4 or 8 bytes and integers of 1–8 bytes, either byte order, C or
/// Fortran order (`np.save(x.T)`), 1-D (one row) or 2-D.
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
    let fortran = field("fortran_order")?.starts_with("True");
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
    // dtype: byte order (`<` little, `>` big, `|`/`=` not applicable or native = little here),
    // kind (f, i, u) and width.
    let (order, kind, size) = {
        let d = descr.as_bytes();
        let size: usize = descr.get(2..).and_then(|w| w.parse().ok()).unwrap_or(0);
        match (d.first(), d.get(1)) {
            (Some(&o @ (b'<' | b'>' | b'|' | b'=')), Some(&k @ (b'f' | b'i' | b'u'))) => (o, k, size),
            _ => bail!("{name}: unsupported NPY dtype {descr}"),
        }
    };
    let ok = matches!((kind, size), (b'f', 2 | 4 | 8) | (b'i' | b'u', 1 | 2 | 4 | 8));
    if !ok {
        bail!("{name}: unsupported NPY dtype {descr}");
    }
    let need = count.checked_mul(size).ok_or_else(|| anyhow!("{name}: absurd NPY shape"))?;
    if body.len() != need {
        bail!("{name}: NPY data is {} bytes, shape {rows}x{cols} needs {need}", body.len());
    }
    ensure_fits(&format!("{name}: the values as f32"), count as u128 * 8)?;
    let value = |c: &[u8]| -> f32 {
        let mut x = [0u8; 8];
        if order == b'>' {
            for (k, &v) in c.iter().rev().enumerate() {
                x[k] = v;
            }
        } else {
            x[..c.len()].copy_from_slice(c);
        }
        let u = u64::from_le_bytes(x);
        match (kind, size) {
            (b'f', 2) => f16_to_f32(u as u16),
            (b'f', 4) => f32::from_bits(u as u32),
            (b'f', _) => f64::from_bits(u) as f32,
            (b'u', _) => u as f32,
            // Sign-extend the `size`-byte integer.
            _ => ((u << (64 - 8 * size)) as i64 >> (64 - 8 * size)) as f32,
        }
    };
    let flat: Vec<f32> = body.chunks(size).map(value).collect();
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

/// IEEE half precision to `f32` (exact: every `f16` is an `f32`).
///
/// ```
/// use neurobits::flyhash::data::f16_to_f32;
/// assert_eq!((f16_to_f32(0x3c00), f16_to_f32(0xc000), f16_to_f32(0x0001)), (1.0, -2.0, 2f32.powi(-24)));
/// assert!(f16_to_f32(0x7e00).is_nan() && f16_to_f32(0x7c00).is_infinite());
/// ```
pub fn f16_to_f32(h: u16) -> f32 {
    let (sign, exp, frac) = ((h >> 15) as u32, ((h >> 10) & 0x1f) as u32, (h & 0x3ff) as u32);
    let mag = match exp {
        0 => frac as f32 * 2f32.powi(-24),
        31 if frac == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => f32::from_bits(((exp + 112) << 23) | (frac << 13)),
    };
    if sign == 1 {
        -mag
    } else {
        mag
    }
}

/// Fashion-MNIST from Debian's `dataset-fashion-mnist` (`make setup` installs it).
pub const FASHION_MNIST: &str = "/usr/share/datasets/fashion-mnist";
