//! Delimited text: one row per line, fields separated by one delimiter (`,`, tab, `;`, …) or by
//! runs of whitespace. Lines starting with `#` or `%` are comments; blank lines are skipped;
//! rows whose fields are all empty (`,,,`) are skipped after the last data row (spreadsheets
//! write them) and refused before and between data rows (a row of missing values is not
//! silently lost); the
//! first row is a header (skipped) when none of its fields is a number. Every error names
//! `file:line` and the field.

use super::{Element, Table};
use crate::{Error, Result};

/// How a line is cut into fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// One delimiter byte; fields are trimmed and a field in double quotes is unquoted.
    Byte(u8),
    /// Runs of whitespace (aligned columns, FCPS `.data` files).
    Whitespace,
    /// Commas or runs of whitespace, mixed freely (the OCNN point files' old rule).
    CommaOrSpace,
}

/// What detection tries, in order (`1, 2` is comma-separated).
const DELIMITERS: [u8; 3] = [b',', b'\t', b';'];

impl Split {
    /// A delimiter given by the user; a space means runs of whitespace.
    pub(crate) fn given(d: u8) -> Result<Split> {
        // Characters that occur in numbers, quotes and line ends cannot separate fields.
        let usable = d == b'\t' || (d.is_ascii_punctuation() && !matches!(d, b'"' | b'.' | b'+' | b'-'));
        match d {
            b' ' => Ok(Split::Whitespace),
            _ if usable => Ok(Split::Byte(d)),
            _ => Err(Error::config(
                "delimiter",
                (d as char).escape_default(),
                "must be a tab, a space (runs of whitespace) or ASCII punctuation other than \" . + -",
            )),
        }
    }

    /// The delimiter of `text`: the first of `,`, tab, `;` found on every row (a header row
    /// may lack it). Otherwise commas or whitespace runs mixed freely, as OCNN point files have
    /// always been read (aligned columns of spaces and tabs, `1 2` and `3,4` rows in one file),
    /// unless the rows hold semicolons and no commas: then `;`, so a ragged row is reported
    /// where it is. For `csv` the first delimiter seen anywhere, else `,` (one column).
    pub(crate) fn detect(text: &str, csv: bool) -> Split {
        let mut rows = significant(text).map(|(_, l)| l);
        let first = rows.next().unwrap_or("");
        let more = rows.clone().next().is_some();
        // The first row may lack the delimiter only if it is a header: no token of it, however
        // cut, is a number (else `1   2.5` above tab-separated rows would be taken for one).
        let header =
            !first.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';')).any(|t| t.parse::<f64>().is_ok());
        let has = |l: &str, d: u8| l.as_bytes().contains(&d);
        let fits = |d: u8| (has(first, d) || (header && more)) && rows.clone().all(|l| has(l, d));
        if let Some(d) = DELIMITERS.into_iter().find(|&d| fits(d)) {
            return Split::Byte(d);
        }
        let seen = |d: u8| has(first, d) || rows.clone().any(|l| has(l, d));
        match DELIMITERS.into_iter().find(|&d| seen(d)) {
            Some(d) if csv => Split::Byte(d),
            None if csv => Split::Byte(b','),
            Some(b';') => Split::Byte(b';'),
            _ => Split::CommaOrSpace,
        }
    }

    /// The fields of `line`, one at a time: no list of them is built (a line of a million
    /// one-digit fields once cost a 16-byte slice per 2 input bytes).
    fn fields(self, line: &str) -> Fields<'_> {
        Fields { split: self, rest: Some(line) }
    }
}

/// The fields of one line ([`Split::fields`]), as the split rule cuts them.
#[derive(Clone)]
struct Fields<'a> {
    split: Split,
    /// What is left of the line; `None` once the last field was given.
    rest: Option<&'a str>,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self.split {
            Split::Byte(d) => {
                let rest = self.rest?;
                let (field, tail) = match rest.find(d as char) {
                    Some(at) => (&rest[..at], Some(&rest[at + 1..])),
                    None => (rest, None),
                };
                self.rest = tail;
                Some(unquote(field.trim()))
            }
            Split::Whitespace | Split::CommaOrSpace => {
                let sep = |c: char| c.is_whitespace() || (self.split == Split::CommaOrSpace && c == ',');
                let rest = self.rest?.trim_start_matches(sep);
                if rest.is_empty() {
                    self.rest = None;
                    return None;
                }
                let end = rest.find(sep).unwrap_or(rest.len());
                self.rest = Some(&rest[end..]);
                Some(&rest[..end])
            }
        }
    }
}

fn unquote(f: &str) -> &str {
    match f.strip_prefix('"').and_then(|g| g.strip_suffix('"')) {
        Some(inner) => inner.trim(),
        None => f,
    }
}

/// Non-blank, non-comment lines, trimmed, with their 1-based line numbers.
fn significant(text: &str) -> impl Iterator<Item = (usize, &str)> + Clone {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#') && !l.starts_with('%'))
}

/// A hint when a field holds a character that separates fields elsewhere: the delimiter in use
/// is probably not the file's.
fn hint(field: &str, split: Split) -> String {
    let used = |c: char| match split {
        Split::Byte(d) => c == d as char,
        Split::Whitespace => c.is_whitespace(),
        Split::CommaOrSpace => c == ',' || c.is_whitespace(),
    };
    match field.chars().find(|&c| matches!(c, ',' | ';' | '\t' | ' ' | '|' | ':') && !used(c)) {
        Some(c) => format!(" (it contains {c:?}: is the delimiter right?)"),
        None => String::new(),
    }
}

/// At most 40 characters of a line, for messages.
fn clip(line: &str) -> String {
    match line.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Makes room for more values (the estimate of the first row fell short: a row of another width
/// is refused right after, so this is rare): double, at most to what the text can hold.
fn grow<T>(data: &mut Vec<T>, most: usize, held: usize, name: &str) -> Result<()> {
    let want = (data.capacity().max(512) * 2).min(most.max(data.len() + 1));
    reserve(data, want, held, name)
}

/// Room for `want` values, checked against the memory budget first with the text that holds
/// them (`held` bytes) and the values already there (copied while the buffer moves): the values
/// of a file are the one allocation here sized by its content.
fn reserve<T>(data: &mut Vec<T>, want: usize, held: usize, name: &str) -> Result<()> {
    let each = std::mem::size_of::<T>() as u128;
    let bytes = held as u128 + (want as u128 + data.capacity() as u128) * each;
    crate::budget::check(format_args!("{name}: the values and the text"), bytes)?;
    data.reserve_exact(want.saturating_sub(data.len()));
    Ok(())
}

/// Parses `text`; `skip_rows` rows after the header are dropped unread (they may be ragged).
pub(crate) fn parse<T: Element>(text: &str, name: &str, split: Split, skip_rows: usize) -> Result<Table<T>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut data, mut cols, mut rows) = (Vec::<T>::new(), None::<usize>, 0usize);
    let (mut header, mut first, mut skipped) = (None, true, 0usize);
    let mut empty_row = None;
    // At most one value per two bytes (a digit and a delimiter): the most `data` can need.
    let most = text.len() / 2 + 1;
    for (at, line) in significant(text) {
        let fields = split.fields(line);
        if fields.clone().all(|f| f.is_empty()) {
            empty_row = empty_row.or(Some(at));
            continue;
        }
        if let Some(e) = empty_row {
            let place = if cols.is_some() { "between data rows" } else { "before the data rows" };
            return Err(Error::input(
                format!("{name}:{e}"),
                format!("a row of empty fields {place} (missing values?)"),
            ));
        }
        empty_row = None;
        // Header detection asks "is it a number" the same way for every element type (`f32` and
        // `f64` share one grammar), so a label file's `1.5` is an error, not a header.
        if std::mem::take(&mut first) && fields.clone().all(|f| f.parse::<f64>().is_err()) {
            header = Some((at, line));
            continue;
        }
        if skipped < skip_rows {
            skipped += 1;
            continue;
        }
        let at_line = || format!("{name}:{at}");
        if cols.is_none() {
            // The first data row fixes the width: room for every line left at that width, at
            // once (checked), so a long line is not copied as its values grow.
            let from = line.as_ptr() as usize - text.as_ptr() as usize;
            let lines_left = text.as_bytes()[from..].iter().filter(|&&b| b == b'\n').count() + 1;
            let want = fields.clone().count().saturating_mul(lines_left).min(most);
            reserve(&mut data, want, text.len(), name)?;
        }
        let before = data.len();
        for (j, f) in fields.enumerate() {
            let v: T = f.parse().map_err(|_| {
                Error::input(at_line(), format!("field {}: '{f}' is not {}{}", j + 1, T::WHAT, hint(f, split)))
            })?;
            if !v.finite() {
                return Err(Error::input(at_line(), format!("field {}: {f} is not a finite number", j + 1)));
            }
            if data.len() == data.capacity() {
                grow(&mut data, most, text.len(), name)?;
            }
            data.push(v);
        }
        let n = data.len() - before;
        match cols {
            None => cols = Some(n),
            Some(c) if c != n => return Err(Error::input(at_line(), format!("expected {c} fields, found {n}"))),
            _ => {}
        }
        rows += 1;
    }
    let Some(cols) = cols else {
        let why = match header {
            _ if skipped > 0 => format!("no data rows: skip_rows = {skip_rows} skipped all {skipped} rows"),
            Some((at, line)) => format!(
                "no data rows: the only row (line {at}, '{}') has no number; if it is data, its delimiter was not \
                 recognised",
                clip(line)
            ),
            None if text.trim().is_empty() => "no data (the file is empty)".to_string(),
            None => "no data (only blank and comment lines)".to_string(),
        };
        return Err(Error::input(name, why));
    };
    Ok(Table { rows, cols, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(text: &str) -> Result<Table<f64>> {
        parse(text, "t", Split::detect(text, false), 0)
    }

    #[test]
    fn delimiters_are_detected() {
        assert_eq!(Split::detect("1, 2\n3, 4\n", false), Split::Byte(b','));
        assert_eq!(Split::detect("1\t2\n", false), Split::Byte(b'\t'));
        assert_eq!(Split::detect("# a,b\n1;2\n", false), Split::Byte(b';'));
        assert_eq!(Split::detect("  1   2\n", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("1 2\n3\t4\n5 6\n", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("x, y\n1 2\n", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("1 2\n3,4\n5 6\n", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("1;2\n3\n5;6\n", false), Split::Byte(b';'));
        assert_eq!(Split::detect("1;2\n3\n5;6\n", true), Split::Byte(b';'));
        assert_eq!(Split::detect("values\n1,2\n", false), Split::Byte(b','));
        assert_eq!(Split::detect("1   2.5\n-3\t  4\n", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("", false), Split::CommaOrSpace);
        assert_eq!(Split::detect("1\n2\n", true), Split::Byte(b','));
        assert_eq!(auto("1, 2\n3, 4\n").unwrap().data, [1., 2., 3., 4.]);
    }

    #[test]
    fn messages_say_what_is_wrong() {
        let e = |t: &str, s: Split| parse::<f64>(t, "t", s, 0).unwrap_err().to_string();
        assert_eq!(e("", Split::Whitespace), "t: no data (the file is empty)");
        assert_eq!(e("# only\n\n", Split::Whitespace), "t: no data (only blank and comment lines)");
        assert!(e("1|2|3\n", Split::Whitespace).contains("delimiter was not recognised"));
        assert_eq!(
            e("a b\n1;2\n", Split::Whitespace),
            "t:2: field 1: '1;2' is not a number (it contains ';': is the delimiter right?)"
        );
        assert_eq!(e("1,2\n3\n", Split::Byte(b',')), "t:2: expected 2 fields, found 1");
        assert_eq!(e("1,inf\n", Split::Byte(b',')), "t:1: field 2: inf is not a finite number");
        assert_eq!(
            parse::<f64>("1 2\n", "t", Split::Whitespace, 1).unwrap_err().to_string(),
            "t: no data rows: skip_rows = 1 skipped all 1 rows"
        );
    }

    #[test]
    fn quotes_headers_and_empty_rows() {
        // Empty rows after the data (a spreadsheet's) are skipped; before or between data rows, refused.
        let t: Table<f32> = parse("\u{feff}\"a\",\"b\"\n\"1\", 2\n3,4\r\n,\n , \n", "t", Split::Byte(b','), 0).unwrap();
        assert_eq!((t.rows, t.cols, t.data), (2, 2, vec![1., 2., 3., 4.]));
        let e = parse::<f32>("1,2\n,\n3,4\n", "t", Split::Byte(b','), 0).unwrap_err().to_string();
        assert_eq!(e, "t:2: a row of empty fields between data rows (missing values?)");
        let e = parse::<f32>("a,b\n,\n3,4\n", "t", Split::Byte(b','), 0).unwrap_err().to_string();
        assert_eq!(e, "t:2: a row of empty fields before the data rows (missing values?)");
        assert!(Split::given(b'.').is_err() && Split::given(b'"').is_err() && Split::given(b'7').is_err());
        assert_eq!(Split::given(b' ').unwrap(), Split::Whitespace);
        assert_eq!(Split::given(b'|').unwrap(), Split::Byte(b'|'));
    }
}
