//! Outputs appear whole or not at all: written to a temporary file beside the target, then
//! renamed over it.

use anyhow::{Context, Result};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes `path` through `fill`; on any error the target is left untouched.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot create a file in {}", dir.display()))?;
    {
        let mut w = BufWriter::new(tmp.as_file());
        fill(&mut w)?;
        w.flush().with_context(|| format!("cannot write {}", path.display()))?;
    }
    tmp.as_file().sync_all().with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// [`write_atomic`] of a string.
pub fn write_string(path: &Path, s: &str) -> Result<()> {
    write_atomic(path, |w| Ok(w.write_all(s.as_bytes())?))
}
