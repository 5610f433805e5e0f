//! What the firmware exports (`gbnn export`, `flynn export`) share: a blob for `include_bytes!`
//! and a generated Rust module beside it, written together and atomically.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The module's path for blob `out` (the same name with extension `.rs`) and the blob's file
/// name; refuses standard output, a directory, a `.rs` or hidden name.
pub fn module_path(out: &Path) -> Result<(PathBuf, String)> {
    let bad = |why: &str| Error::input(format!("-o {}", out.display()), why.to_string());
    let name = out.file_name().and_then(|n| n.to_str()).ok_or_else(|| bad("expected a file name in UTF-8"))?;
    if out.as_os_str() == "-" || out.is_dir() {
        return Err(bad(
            "expected a file for the blob (the module is written beside it), not standard output or a directory",
        ));
    }
    if out.extension().is_some_and(|e| e == "rs") {
        return Err(bad(
            "names the module: give the blob's name (e.g. net.bin); the module is written beside it as .rs",
        ));
    }
    if name.starts_with('.') {
        return Err(bad("expected a visible file name (e.g. net.bin)"));
    }
    Ok((out.with_extension("rs"), name.to_string()))
}

/// Writes `blob` to `out` and `module` to `module_file` (beside it), both or neither.
pub fn write(out: &Path, module_file: &Path, blob: &[u8], module: &str) -> Result<()> {
    let blob_name = out.file_name().and_then(|n| n.to_str()).expect("checked by module_path");
    let module_name = module_file.file_name().and_then(|n| n.to_str()).expect("from a UTF-8 name");
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    crate::io::atomic::write_set(dir, &[blob_name, module_name], |tmp| {
        std::fs::write(tmp.join(blob_name), blob)?;
        std::fs::write(tmp.join(module_name), module)?;
        Ok(())
    })?;
    Ok(())
}

/// A generated module's `//` header lines: control characters in `source` (a file name) would
/// end a comment early.
pub fn comment_safe(source: &str) -> String {
    source.chars().map(|ch| if ch.is_control() { '?' } else { ch }).collect()
}
