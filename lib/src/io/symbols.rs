//! Message and probe CSV: one line per message, `C` comma-separated symbols in `[0, L)`;
//! probes may use `?` for an erased cluster; messages and probes may use `-` for a silent cluster
//! (a sparse message, Aliabadi et al. 2014). Whether the known symbols of a probe may be wrong is
//! a property of the run, not of the file (`gbnn retrieve --mode noisy`). Blank lines are skipped. Every error names the
//! file and line.

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::gbnn::{Geometry, ERASED, SILENT};
use std::path::Path;

/// Parses a symbol file into `K·C` symbols (`ERASED` for `?` when `probes`, `SILENT` for `-`).
pub fn read(path: &Path, geom: &Geometry, probes: bool) -> Result<Vec<u16>> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8(text).map_err(|_| anyhow!("{}: not a text file", path.display()))?;
    parse(&text, &path.display().to_string(), geom, probes)
}

/// Parses CSV text; `name` prefixes error messages.
pub fn parse(text: &str, name: &str, geom: &Geometry, probes: bool) -> Result<Vec<u16>> {
    let kind = if probes { "probes" } else { "messages" };
    let (c, l) = (geom.clusters(), geom.neurons_per_cluster());
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = i + 1;
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != c {
            bail!("{name}:{at}: expected {c} fields, found {}", fields.len());
        }
        for (k, f) in fields.iter().enumerate() {
            if probes && *f == "?" {
                out.push(ERASED);
                continue;
            }
            if *f == "-" {
                out.push(SILENT);
                continue;
            }
            let s: u64 = f.parse().map_err(|_| {
                let want = if probes { "a symbol or '?' or '-'" } else { "a symbol or '-'" };
                anyhow!("{name}:{at}: field {}: '{f}' is not {want} (a non-negative integer)", k + 1)
            })?;
            if s >= l as u64 {
                bail!("{name}:{at}: field {}: symbol {s} is out of range 0..{}", k + 1, l - 1);
            }
            out.push(s as u16);
        }
    }
    if out.is_empty() {
        bail!("{name}: no {kind} (the file is empty)");
    }
    Ok(out)
}

/// Formats symbols as CSV (`?` for erased, `-` for silent).
///
/// ```
/// assert_eq!(neurobits::io::symbols::format(&[1, u16::MAX, 0, u16::MAX - 1], 2), "1,?\n0,-\n");
/// ```
pub fn format(symbols: &[u16], clusters: usize) -> String {
    let mut s = String::with_capacity(symbols.len() * 4);
    for row in symbols.chunks(clusters) {
        push_line(&mut s, row);
    }
    s
}

/// Appends one CSV line of symbols (`?` for erased, `-` for silent) to `s`.
pub fn push_line(s: &mut String, row: &[u16]) {
    for (k, &x) in row.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        if x == ERASED {
            s.push('?');
        } else if x == SILENT {
            s.push('-');
        } else {
            s.push_str(&x.to_string());
        }
    }
    s.push('\n');
}
