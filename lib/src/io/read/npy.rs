//! NPY arrays (read with the `npyz` crate) and NPZ archives of them (the `zip` crate, stored or
//! deflated members: what numpy writes).

use super::{budget, ensure_fits, Element, Table};
use crate::{Error, Result};
use npyz::{DType, Order, TypeChar};
use std::io::{Cursor, Read};

/// Bracket nesting an NPY header may have (numpy's own nest 3 deep at most).
const MAX_NESTING: usize = 32;

/// The NPY magic.
pub(super) const MAGIC: &[u8] = b"\x93NUMPY";

/// Parses an NPY file (versions 1–3): floats of 2, 4 or 8 bytes, integers of 1–8 bytes, bools,
/// either byte order, C or Fortran order (`np.save(x.T)`), 1-D (one row) or 2-D. The header
/// length and the shape are checked against the file's size and the memory budget before
/// anything is allocated (a header can claim any shape).
pub(super) fn npy<T: Element>(b: &[u8], name: &str) -> Result<Table<T>> {
    let bad = |why: String| Error::input(name, why);
    if !b.starts_with(MAGIC) || b.len() < 10 {
        return Err(bad("not an NPY file (bad magic)".into()));
    }
    // The body follows the header: magic, version, header length (2 bytes in v1, 4 after).
    // Checked against the file before npyz sees it: npyz allocates the claimed header length.
    let start = match b[6] {
        1 => 10 + u16::from_le_bytes([b[8], b[9]]) as usize,
        _ if b.len() >= 12 => 12usize.saturating_add(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize),
        _ => return Err(bad("truncated NPY header".into())),
    };
    if start > b.len() {
        return Err(bad("truncated NPY header".into()));
    }
    // npyz parses the header (a Python literal) recursively: a header nested a few thousand
    // levels deep would take its time, or its stack. A real header nests 3 levels at most
    // (`{'descr': [('x', '<f4', (2,))]}`); more than MAX_NESTING is refused unread.
    let header = &b[b.len().min(if b[6] == 1 { 10 } else { 12 })..start];
    let mut depth = 0usize;
    for &c in header {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err(bad(format!(
                "NPY header nests brackets more than {MAX_NESTING} deep: not a header numpy writes"
            )));
        }
    }
    let f = npyz::NpyFile::new(b).map_err(|e| bad(format!("corrupt NPY file: {e}")))?;
    let dims = |s: &[u64]| -> Option<(usize, usize)> {
        match *s {
            [n] => Some((1, usize::try_from(n).ok()?)),
            [r, c] => Some((usize::try_from(r).ok()?, usize::try_from(c).ok()?)),
            _ => None,
        }
    };
    let (rows, cols) = dims(f.shape())
        .ok_or_else(|| bad(format!("NPY array must be 1-D or 2-D of a sane size, found shape {:?}", f.shape())))?;
    let DType::Plain(ts) = f.dtype() else { return Err(bad("unsupported NPY dtype (structured or array)".into())) };
    let (kind, size) = (ts.type_char(), ts.size_field() as usize);
    let known = matches!(
        (kind, size),
        (TypeChar::Float, 2 | 4 | 8) | (TypeChar::Int | TypeChar::Uint, 1 | 2 | 4 | 8) | (TypeChar::Bool, 1)
    );
    if !known {
        return Err(bad(format!("unsupported NPY dtype {ts} (numbers and bools only)")));
    }
    let count = rows.checked_mul(cols).ok_or_else(|| bad(format!("absurd NPY shape {:?}", f.shape())))?;
    let need = count.checked_mul(size).ok_or_else(|| bad(format!("absurd NPY shape {:?}", f.shape())))?;
    let body = b.len() - start;
    if body != need {
        return Err(bad(format!("NPY data is {body} bytes, shape {rows}x{cols} needs {need}")));
    }
    let fortran = f.order() == Order::Fortran && rows > 1 && cols > 1;
    // The values, and their transpose for Fortran order.
    ensure_fits(name, "the values", count as u128 * std::mem::size_of::<T>() as u128 * (1 + fortran as u128))?;
    let corrupt = |e: std::io::Error| bad(format!("corrupt NPY data: {e}"));
    // Straight into the element type, one value at a time: no copy of the file's type is kept.
    macro_rules! convert {
        ($t:ty, $f:expr) => {{
            let mut v = Vec::with_capacity(count); // `count · size` bytes are present: bounded
            for x in f.data::<$t>().map_err(|e| bad(format!("unsupported NPY dtype {ts}: {e}")))? {
                v.push($f(x.map_err(corrupt)?));
            }
            v
        }};
    }
    let flat: Vec<T> = match (kind, size) {
        (TypeChar::Float, 2) => convert!(npyz::half::f16, |h| T::from_f32(f32::from(h))),
        (TypeChar::Float, 4) => convert!(f32, T::from_f32),
        (TypeChar::Float, _) => convert!(f64, T::from_f64),
        (TypeChar::Bool, _) => convert!(bool, |x| T::from_u8(x as u8)),
        (TypeChar::Int, 1) => convert!(i8, T::from_i8),
        (TypeChar::Int, 2) => convert!(i16, T::from_i16),
        (TypeChar::Int, 4) => convert!(i32, T::from_i32),
        (TypeChar::Int, _) => convert!(i64, T::from_i64),
        (_, 1) => convert!(u8, T::from_u8),
        (_, 2) => convert!(u16, T::from_u16),
        (_, 4) => convert!(u32, T::from_u32),
        _ => convert!(u64, T::from_u64),
    };
    // Fortran order (what `np.save(x.T)` writes) is column-major: transpose to rows.
    let data = if fortran {
        let mut t = Vec::with_capacity(count);
        for r in 0..rows {
            t.extend((0..cols).map(|c| flat[c * rows + r]));
        }
        t
    } else {
        flat
    };
    Ok(Table { rows, cols, data })
}

/// Opens an NPZ archive. The `zip` crate bounds its directory by the archive's size.
pub(super) fn archive<'a>(b: &'a [u8], name: &str) -> Result<zip::ZipArchive<Cursor<&'a [u8]>>> {
    zip::ZipArchive::new(Cursor::new(b)).map_err(|e| Error::input(name, format!("corrupt NPZ (zip) file: {e}")))
}

/// The array names of an archive: its `.npy` members without the suffix.
pub(super) fn names<R: Read + std::io::Seek>(z: &zip::ZipArchive<R>) -> Vec<String> {
    z.file_names().filter_map(|n| n.strip_suffix(".npy")).map(str::to_string).collect()
}

/// Reads the array `array` (`x` or `x.npy`) of an NPZ archive, or its only array.
pub(super) fn npz<T: Element>(b: &[u8], name: &str, array: Option<&str>) -> Result<Table<T>> {
    let mut z = archive(b, name)?;
    let names = names(&z);
    let list = || if names.is_empty() { "no arrays".to_string() } else { names.join(", ") };
    let stem = match array {
        Some(a) => {
            let a = a.strip_suffix(".npy").unwrap_or(a);
            if !names.iter().any(|n| n == a) {
                return Err(Error::input(name, format!("no array '{a}' in this NPZ file (it holds: {})", list())));
            }
            a.to_string()
        }
        None if names.len() == 1 => names[0].clone(),
        None => {
            return Err(Error::input(
                name,
                format!("this NPZ file holds {} arrays ({}): name the one to read", names.len(), list()),
            ))
        }
    };
    let member = format!("{name} (array {stem})");
    let mut m = z.by_name(&format!("{stem}.npy")).map_err(|e| Error::input(&member, format!("cannot read: {e}")))?;
    // The member's claimed size is not trusted: the read stops at the memory budget.
    let limit = budget();
    let mut bytes = Vec::new();
    m.by_ref()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::input(&member, format!("corrupt NPZ member: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(super::too_much(&member, bytes.len()));
    }
    npy(&bytes, &member)
}
