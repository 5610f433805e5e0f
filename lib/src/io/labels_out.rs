//! Writing predictions: one label per input row, as NPY (`.npy`: a 1-D `int64` array numpy,
//! PyTorch and pandas read as they are) or as text (anything else: one integer per line, no
//! header). Written atomically, as every output is.

use npyz::WriterBuilder;
use std::path::Path;

use crate::error::Result;

/// Writes `labels` to `path` (`-`: standard output, as text), NPY when the name ends in `.npy`.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("y.csv");
/// neurobits::io::labels_out::write(&p, &[3, -1, 7])?;
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "3\n-1\n7\n");
/// # Ok::<(), neurobits::Error>(())
/// ```
pub fn write(path: &Path, labels: &[i64]) -> Result<()> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        let mut buf = Vec::with_capacity(128 + labels.len() * 8);
        {
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&[labels.len() as u64])
                .writer(std::io::Cursor::new(&mut buf))
                .begin_nd()?;
            w.extend(labels.iter().copied())?;
            w.finish()?;
        }
        crate::io::atomic::write_atomic(path, |w| Ok(w.write_all(&buf)?))?;
        return Ok(());
    }
    let mut s = String::with_capacity(labels.len() * 4);
    for l in labels {
        s += &l.to_string();
        s.push('\n');
    }
    crate::io::atomic::write_string(path, &s)?;
    Ok(())
}
