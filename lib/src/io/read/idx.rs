//! IDX (LeCun's MNIST format): magic `0 0 type ndim`, big-endian dimensions, big-endian data.
//! Images (`n × r × c`) become `n` rows of `r·c`; a 1-D file (labels) is one column.

use super::{ensure_fits, Element, Table};
use crate::{Error, Result};

/// Whether `b` starts with an IDX magic (two zero bytes, a known element type).
pub(super) fn looks_like(b: &[u8]) -> bool {
    b.len() >= 4 && b[0] == 0 && b[1] == 0 && matches!(b[2], 0x08 | 0x09 | 0x0B..=0x0E)
}

/// Parses an IDX file; the dimensions are checked against the bytes present before anything is
/// allocated.
pub(super) fn idx<T: Element>(b: &[u8], name: &str) -> Result<Table<T>> {
    let bad = |why: String| Error::input(name, why);
    if b.len() < 4 || b[0] != 0 || b[1] != 0 {
        return Err(bad("not an IDX file (bad magic)".into()));
    }
    let (ty, nd) = (b[2], b[3] as usize);
    if nd == 0 || b.len() < 4 + 4 * nd {
        return Err(bad("truncated IDX header".into()));
    }
    let dim = |i: usize| u32::from_be_bytes([b[4 + 4 * i], b[5 + 4 * i], b[6 + 4 * i], b[7 + 4 * i]]) as usize;
    let count = (0..nd)
        .try_fold(1usize, |a, i| a.checked_mul(dim(i)))
        .ok_or_else(|| bad(format!("absurd IDX dimensions {:?}", (0..nd).map(dim).collect::<Vec<_>>())))?;
    let size = match ty {
        0x08 | 0x09 => 1,
        0x0B => 2,
        0x0C | 0x0D => 4,
        0x0E => 8,
        _ => return Err(bad(format!("unknown IDX element type 0x{ty:02x}"))),
    };
    let body = &b[4 + 4 * nd..];
    let need = count.checked_mul(size).ok_or_else(|| bad("absurd IDX dimensions".into()))?;
    if body.len() != need {
        return Err(bad(format!("IDX data is {} bytes, dimensions say {need}", body.len())));
    }
    ensure_fits(name, "the values", count as u128 * std::mem::size_of::<T>() as u128)?;
    let be = |c: &[u8]| -> [u8; 8] {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        w
    };
    let data: Vec<T> = match ty {
        0x08 => body.iter().map(|&x| T::from_u8(x)).collect(),
        0x09 => body.iter().map(|&x| T::from_i8(x as i8)).collect(),
        0x0B => body.chunks_exact(2).map(|c| T::from_i16(i16::from_be_bytes([c[0], c[1]]))).collect(),
        0x0C => body.chunks_exact(4).map(|c| T::from_i32(i32::from_be_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        0x0D => body.chunks_exact(4).map(|c| T::from_f32(f32::from_be_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        _ => body.chunks_exact(8).map(|c| T::from_f64(f64::from_be_bytes(be(c)))).collect(),
    };
    let rows = dim(0);
    Ok(Table { rows, cols: count.checked_div(rows).unwrap_or(0), data })
}
