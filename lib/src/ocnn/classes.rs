//! Class files: the known class of each point of a data set, as the FCPS suite ships them
//! (`.cls`: header lines starting with `%`, then one `key class` line per point, the key
//! numbering the points 1, 2, … in file order). `ocnn experiment` scores its clusterings against
//! them by the adjusted Rand index.
//!
//! A file that is not of that shape is refused (one column, three columns, a key out of order, a
//! class that is not a whole number ≥ 0, more or fewer classes than points), never guessed at:
//! a score against the wrong classes would be a wrong answer printed as a right one.

use crate::io::read::{self, Format, Label, ReadOptions, Table};
use crate::{Error, Result};
use std::path::Path;

/// Reads the class file `path` for `points` points (it is read as every input is: bounded, gzip
/// allowed, `-` for standard input).
pub fn read(path: &Path, points: usize) -> Result<Vec<u32>> {
    let opts = ReadOptions { format: Format::Text, ..ReadOptions::default() };
    let name = if path == Path::new("-") { read::STDIN.to_string() } else { path.display().to_string() };
    check(read::read(path, &opts)?, &name, points)
}

/// [`read()`] over text already in memory; `name` is what messages call it.
///
/// ```
/// use neurobits::ocnn::classes::parse;
/// assert_eq!(parse("% 3\n% Key\tCls\n1\t2\n2\t1\n3\t2\n", "x.cls", 3).unwrap(), [2, 1, 2]);
/// let one_column = parse("2\n1\n2\n", "x.cls", 3).unwrap_err().to_string();
/// assert!(one_column.starts_with("x.cls: "), "{one_column}");
/// assert!(parse("1 2\n2 1\n", "x.cls", 3).is_err(), "2 classes for 3 points");
/// assert!(parse("1 2\n3 1\n2 1\n", "x.cls", 3).is_err(), "keys out of order");
/// ```
pub fn parse(text: &str, name: &str, points: usize) -> Result<Vec<u32>> {
    let opts = ReadOptions { format: Format::Text, ..ReadOptions::default() };
    check(read::parse(text.as_bytes(), name, &opts)?, name, points)
}

fn check(t: Table<Label>, name: &str, points: usize) -> Result<Vec<u32>> {
    if t.cols != 2 {
        return Err(Error::input(
            name,
            format!(
                "a class file has two columns per point, its key and its class (FCPS .cls); found {} column(s)",
                t.cols
            ),
        ));
    }
    if t.rows != points {
        return Err(Error::input(name, format!("{} classes for {points} points", t.rows)));
    }
    t.data
        .chunks_exact(2)
        .enumerate()
        .map(|(i, row)| {
            let shown = |l: &Label| l.0.map_or_else(|f| f.to_string(), |v| v.to_string());
            if row[0].0 != Ok(i as i64 + 1) {
                return Err(Error::input(
                    name,
                    format!(
                        "row {}: key {}, expected {} (keys number the points in file order)",
                        i + 1,
                        shown(&row[0]),
                        i + 1
                    ),
                ));
            }
            match row[1].0 {
                Ok(c) if (0..=u32::MAX as i64).contains(&c) => Ok(c as u32),
                _ => Err(Error::input(
                    name,
                    format!("row {}: class {} is not a whole number ≥ 0", i + 1, shown(&row[1])),
                )),
            }
        })
        .collect()
}
