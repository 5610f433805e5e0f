//! One reader for every command and model: a table of numbers (`f32` or `f64`) or a column of
//! integer labels from NPY, NPZ, IDX (MNIST's format) or delimited text (CSV, TSV, semicolons,
//! whitespace columns such as FCPS `.data` files), gzipped or not, from a file or from standard
//! input (the path `-`).
//!
//! The format is found from the content unless it is given: gzip is undone first, then the NPY
//! magic, the zip magic of NPZ, the IDX magic, else text. Every size a header claims is checked
//! against the bytes present and the memory budget ([`crate::io::memory`]) before anything is
//! allocated for it, so a hostile file ends in an error, never an abort. Every error is one line
//! naming the file (or `standard input`) and the value seen.

mod element;
mod idx;
mod npy;
mod text;

pub use element::Element;
pub(crate) use element::Label;
use text::Split;

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;

/// What the path `-` reads, and the name its messages carry.
pub const STDIN: &str = "standard input";

/// `rows × cols` values, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Table<T> {
    /// Rows (points, vectors, images).
    pub rows: usize,
    /// Columns (the dimension).
    pub cols: usize,
    /// `rows · cols` values, row after row.
    pub data: Vec<T>,
}

impl<T> Table<T> {
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
}

/// A file format, or `Auto` to find it from the content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// From the content: NPY, NPZ or IDX by their magic, else text with the delimiter detected
    /// (`,`, tab or `;` when every row has it, else commas or whitespace runs as in
    /// [`Format::Text`]). A `.npy` or `.npz` name without its magic is read as that format, so
    /// the error says what is wrong with it instead of "not a number".
    #[default]
    Auto,
    /// NumPy's `.npy` array.
    Npy,
    /// NumPy's `.npz` archive of `.npy` members ([`ReadOptions::array`] names one).
    Npz,
    /// Delimited text: `,`, tab or `;` (detected; `,` when the file has none).
    Csv,
    /// Point text as OCNN has always read it: fields separated by commas or whitespace runs.
    Text,
    /// IDX, the MNIST format.
    Idx,
}

impl Format {
    /// The name `FromStr` reads.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Csv => "csv",
            Format::Text => "text",
            Format::Idx => "idx",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    /// `auto`, `npy`, `npz`, `csv`, `text` or `idx`.
    ///
    /// ```
    /// use neurobits::io::read::Format;
    /// assert_eq!("npz".parse::<Format>().unwrap(), Format::Npz);
    /// assert!("xls".parse::<Format>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Format> {
        let all = [Format::Auto, Format::Npy, Format::Npz, Format::Csv, Format::Text, Format::Idx];
        all.into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| Error::config("format", s, "must be one of auto, npy, npz, csv, text, idx"))
    }
}

/// How to read a file; the default finds everything from the content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadOptions {
    /// The format, or [`Format::Auto`].
    pub format: Format,
    /// The text delimiter (an ASCII byte), overriding detection; `b' '` means runs of
    /// whitespace. Used by text formats only.
    pub delimiter: Option<u8>,
    /// Text rows to skip after the header row (a file's numeric debris: FCPS's pyclustering
    /// `Lsun.data` starts with 3); for the other formats, the first rows of the array.
    pub skip_rows: usize,
    /// The NPZ member to read (`x` or `x.npy`); without it an archive of one array reads that
    /// one. Used by NPZ only.
    pub array: Option<String>,
}

/// Reads a table of numbers from `path` (`-`: standard input, read to its end). The values are
/// checked to be finite. A 1-D NPY array is one row.
///
/// ```
/// use neurobits::io::read::{read, ReadOptions, Table};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.csv");
/// std::fs::write(&path, "a;b\n1;2.5\n3;4\n")?;
/// let t: Table<f32> = read(&path, &ReadOptions::default())?;
/// assert_eq!((t.rows, t.cols, t.data), (2, 2, vec![1.0, 2.5, 3.0, 4.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read<T: Element>(path: &Path, opts: &ReadOptions) -> Result<Table<T>> {
    let (bytes, name) = load(path)?;
    parse(&bytes, &name, opts)
}

/// [`read`] over bytes already in memory (gzipped or not); `name` is what messages call them.
pub fn parse<T: Element>(bytes: &[u8], name: &str, opts: &ReadOptions) -> Result<Table<T>> {
    let owned;
    let b = if bytes.starts_with(&[0x1f, 0x8b]) {
        owned = gunzip(bytes, name)?;
        &owned[..]
    } else {
        bytes
    };
    let format = match opts.format {
        Format::Auto => detect(b, name),
        f => f,
    };
    let t = match format {
        Format::Npy => npy::npy(b, name)?,
        Format::Npz => npy::npz(b, name, opts.array.as_deref())?,
        Format::Idx => idx::idx(b, name)?,
        Format::Csv | Format::Text | Format::Auto => {
            let s = std::str::from_utf8(b).map_err(|e| {
                let kind = if format == Format::Auto { "not NPY, NPZ or IDX, and not text" } else { "not text" };
                Error::input(name, format!("{kind}: byte {} is not UTF-8", e.valid_up_to() + 1))
            })?;
            let split = match opts.delimiter {
                Some(d) => Split::given(d)?,
                None if format == Format::Text => Split::CommaOrSpace,
                None => Split::detect(s, format == Format::Csv),
            };
            return text::parse(s, name, split, opts.skip_rows);
        }
    };
    let t = skip(t, opts.skip_rows, name)?;
    check_finite(&t, name)?;
    Ok(t)
}

/// Reads integer labels from `path` (`-`: standard input): a 1-D NPY or NPZ array, an IDX
/// 1-D file, a one-column text file (a header row allowed), or a 2-D array of one column or one
/// row. Whole-number floats (`3.0`) are accepted; anything else is an error naming the row and
/// the value.
///
/// ```
/// use neurobits::io::read::{read_labels, ReadOptions};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("y.csv");
/// std::fs::write(&path, "label\n3\n1\n4.0\n")?;
/// assert_eq!(read_labels(&path, &ReadOptions::default())?, [3, 1, 4]);
/// std::fs::write(&path, "label\n3\n1.5\n")?;
/// let e = read_labels(&path, &ReadOptions::default()).unwrap_err().to_string();
/// assert!(e.ends_with("y.csv:3: field 1: '1.5' is not an integer"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_labels(path: &Path, opts: &ReadOptions) -> Result<Vec<i64>> {
    let (bytes, name) = load(path)?;
    parse_labels(&bytes, &name, opts)
}

/// [`read_labels`] over bytes already in memory; `name` is what messages call them.
pub fn parse_labels(bytes: &[u8], name: &str, opts: &ReadOptions) -> Result<Vec<i64>> {
    let t: Table<Label> = parse(bytes, name, opts)?;
    if t.rows != 1 && t.cols != 1 {
        return Err(Error::input(name, format!("labels must be one column or one row, found {} x {}", t.rows, t.cols)));
    }
    // Label `i` belongs to the data's row `i`, whichever way the labels were laid out.
    t.data
        .iter()
        .enumerate()
        .map(|(i, l)| l.0.map_err(|v| Error::input(name, format!("row {}: label {v} is not an integer", i + 1))))
        .collect()
}

/// The array names in an NPZ archive (`x` for the member `x.npy`), in archive order.
///
/// ```
/// let e = neurobits::io::read::npz_names(std::path::Path::new("/nonexistent.npz")).unwrap_err();
/// assert!(e.is_io());
/// ```
pub fn npz_names(path: &Path) -> Result<Vec<String>> {
    let (bytes, name) = load(path)?;
    let owned;
    let b = if bytes.starts_with(&[0x1f, 0x8b]) {
        owned = gunzip(&bytes, &name)?;
        &owned[..]
    } else {
        &bytes[..]
    };
    Ok(npy::names(&npy::archive(b, &name)?))
}

/// The file's (or standard input's) bytes and its name for messages. The memory budget bounds
/// the read: a device or a pipe can be endless.
fn load(path: &Path) -> Result<(Vec<u8>, String)> {
    let limit = budget();
    let (name, mut src): (String, Box<dyn Read>) = if path == Path::new("-") {
        (STDIN.into(), Box::new(std::io::stdin().lock()))
    } else {
        let f = open_input(path).map_err(|e| Error::io(path, e))?;
        let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        let name = path.display().to_string();
        crate::budget::check(format_args!("{name}: reading the file"), len as u128)?;
        (name, Box::new(f))
    };
    let mut b = Vec::new();
    let io = |e| Error::io(Path::new(&name), e);
    // The first bytes first: an endless device (`/dev/zero`, `/dev/urandom`) is refused from
    // them at once, not after reading it up to the memory budget.
    src.by_ref().take(SNIFF as u64).read_to_end(&mut b).map_err(io)?;
    refuse_binary_debris(&b, &name)?;
    let left = limit.saturating_add(1).saturating_sub(b.len() as u64);
    src.by_ref().take(left).read_to_end(&mut b).map_err(io)?;
    if b.len() as u64 > limit {
        return Err(too_much(&name, b.len()));
    }
    Ok((b, name))
}

/// Opens an input. A named pipe is read as `cat` reads it, to its writer's end, but its open
/// does not block: when no data has come after a second, a note says what the process waits for
/// (a signal ends the wait), instead of a silent hang.
fn open_input(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    if !std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        return std::fs::File::open(path);
    }
    // O_NONBLOCK: the open returns at once even with no writer; then poll for the first data
    // (or the end: a writer that came and went).
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let mut told = false;
    loop {
        use std::os::fd::AsRawFd;
        let mut pfd = libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for a descriptor this process owns.
        let r = unsafe { libc::poll(&mut pfd, 1, 1000) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r > 0 && pfd.revents != 0 {
            crate::io::atomic::set_blocking(&f)?;
            return Ok(f);
        }
        if !told {
            eprintln!("note: waiting for a writer of the named pipe {} (Ctrl-C stops)", path.display());
            told = true;
        }
    }
}

/// How many first bytes [`refuse_binary_debris`] looks at.
const SNIFF: usize = 4096;

/// Refuses data that no format reads, from its first bytes: a NUL byte where there is no
/// binary magic (gzip, NPY, NPZ, IDX) cannot be text.
fn refuse_binary_debris(first: &[u8], name: &str) -> Result<()> {
    let magic = first.starts_with(&[0x1f, 0x8b])
        || first.starts_with(npy::MAGIC)
        || first.starts_with(b"PK")
        || idx::looks_like(first);
    match first.iter().position(|&c| c == 0) {
        Some(at) if !magic => Err(Error::input(
            name,
            format!(
                "not NPY, NPZ, IDX or text: byte {} is NUL (0x00) and there is no NPY, zip, gzip or IDX magic",
                at + 1
            ),
        )),
        _ => Ok(()),
    }
}

/// Bytes the reader may allocate: the memory budget ([`crate::budget`]).
pub(crate) fn budget() -> u64 {
    crate::budget::bytes()
}

/// Fails unless `bytes` of `what` in the file `name` fit in the budget (before they are
/// allocated).
pub(crate) fn ensure_fits(name: &str, what: &str, bytes: u128) -> Result<()> {
    crate::budget::check(format_args!("{name}: {what}"), bytes)
}

/// The refusal of a stream (a pipe, a device, a gzip or zip member) that went past the budget:
/// its size is not known, only that it is more than `read` bytes.
pub(crate) fn too_much(name: &str, read: usize) -> Error {
    let (budget, from) = crate::budget::limit();
    Error::Memory { what: format!("{name}: the data (more than read so far)"), needed: read as u128, budget, from }
}

/// Undoes gzip, bounded by the memory budget: a small gzip file can claim any size.
fn gunzip(b: &[u8], name: &str) -> Result<Vec<u8>> {
    let limit = budget();
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Error::input(name, format!("corrupt gzip data: {e}")))?;
    if out.len() as u64 > limit {
        return Err(too_much(&format!("{name} (gzip)"), out.len()));
    }
    Ok(out)
}

/// The format from the content (gzip already undone).
fn detect(b: &[u8], name: &str) -> Format {
    let ext = Path::new(name).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if b.starts_with(npy::MAGIC) {
        Format::Npy
    } else if b.starts_with(b"PK\x03\x04") || b.starts_with(b"PK\x05\x06") {
        Format::Npz
    } else if idx::looks_like(b) {
        Format::Idx
    } else if ext.as_deref() == Some("npy") {
        Format::Npy
    } else if ext.as_deref() == Some("npz") {
        Format::Npz
    } else {
        Format::Auto
    }
}

/// Drops the first `n` rows of a binary array.
fn skip<T>(mut t: Table<T>, n: usize, name: &str) -> Result<Table<T>> {
    if n == 0 {
        return Ok(t);
    }
    if n >= t.rows {
        return Err(Error::input(name, format!("no data rows: skipping {n} rows leaves none of {}", t.rows)));
    }
    t.data.drain(..n * t.cols);
    t.rows -= n;
    Ok(t)
}

/// Rejects NaN and ±inf, naming the first offending row and column.
fn check_finite<T: Element>(t: &Table<T>, name: &str) -> Result<()> {
    match t.data.iter().position(|x| !x.finite()) {
        Some(i) => Err(Error::input(
            name,
            format!("row {}, column {}: {} is not a finite number", i / t.cols + 1, i % t.cols + 1, t.data[i]),
        )),
        None => Ok(()),
    }
}
