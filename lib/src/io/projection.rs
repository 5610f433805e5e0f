//! FlyHash projection files: CSV, one line per projection row, its `s` input indices ascending.

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

/// Reads a projection CSV: `(m, s, indices)`.
pub fn load(path: &Path, d: usize) -> Result<(u32, u32, Vec<u32>)> {
    let name = path.display().to_string();
    parse(&std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?, &name, d)
}

/// Parses a projection CSV: `m` rows of `s` ascending distinct indices below `d`.
///
/// ```
/// use neurobits::io::projection::parse;
/// assert_eq!(parse("0,2\n1,3\n", "mem", 4).unwrap(), (2, 2, vec![0, 2, 1, 3]));
/// assert!(parse("2,0\n", "mem", 4).is_err());
/// ```
pub fn parse(text: &str, name: &str, d: usize) -> Result<(u32, u32, Vec<u32>)> {
    let (mut out, mut s, mut m) = (Vec::new(), None, 0u32);
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let row: Vec<u32> = line
            .split(',')
            .map(|f| f.trim().parse::<u32>().map_err(|_| anyhow!("{name}:{}: '{}' is not an index", i + 1, f.trim())))
            .collect::<Result<_>>()?;
        if *s.get_or_insert(row.len()) != row.len() {
            bail!("{name}:{}: expected {} indices, found {}", i + 1, s.unwrap_or(0), row.len());
        }
        if !row.windows(2).all(|w| w[0] < w[1]) {
            bail!("{name}:{}: indices must be distinct and ascending", i + 1);
        }
        if let Some(&last) = row.last() {
            if last as usize >= d {
                bail!("{name}:{}: index {last} is outside the input dimension {d}", i + 1);
            }
        }
        out.extend(row);
        m += 1;
    }
    let s = s.ok_or_else(|| anyhow!("{name}: no rows (the file is empty)"))?;
    Ok((m, s as u32, out))
}
