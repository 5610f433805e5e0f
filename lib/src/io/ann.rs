//! The ann-benchmarks data layout (Aumüller, Bernhardsson and Faithfull, "ANN-Benchmarks", 2018):
//! one HDF5 file per data set with the 2-D datasets `train` (the points searched), `test` (the
//! queries), `neighbors` (each query's true nearest `train` rows, nearest first, `int32`) and
//! `distances` (their distances, `float32`), and the file attribute `distance` (`euclidean`,
//! `angular`, …). Read and written through the HDF5 C library (`hdf5-metno`), behind the
//! library's `ann` feature.
//!
//! A file is a user's input, so nothing it claims is trusted: the HDF5 signature is looked for
//! first, every dataset must be 2-D with sizes that agree with each other, and the bytes a
//! dataset would take are checked against the file's size (for unfiltered storage) and the
//! memory budget before anything is allocated for it. Every error is one line naming the file
//! and the dataset or attribute.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use hdf5_metno as h5;
use hdf5_metno::types::{FixedAscii, FixedUnicode, VarLenAscii, VarLenUnicode};

use crate::io::read::{ensure_fits, Table};
use crate::{Error, Result};

/// One data set in the ann-benchmarks layout.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnData {
    /// The points searched (`train`), one per row.
    pub train: Table<f32>,
    /// The queries (`test`), as many columns as `train`.
    pub test: Table<f32>,
    /// Each query's true nearest `train` rows (`neighbors`), nearest first: one row per query.
    pub neighbors: Table<i32>,
    /// Their distances (`distances`), the shape of `neighbors`; absent in some files.
    pub distances: Option<Table<f32>>,
    /// The file attribute `distance`: the metric the neighbours were found with.
    pub metric: String,
}

impl AnnData {
    /// Checks that the parts agree: `train` and `test` have the same positive number of
    /// columns and finite values, `neighbors` has one row per query and ids in
    /// `0..train.rows`, `distances` (if any) has the shape of `neighbors` and no NaN. `name`
    /// is what the messages call the data.
    pub fn validate(&self, name: &str) -> Result<()> {
        let bad = |why: String| Err(Error::input(name, why));
        let (tr, te, nb) = (&self.train, &self.test, &self.neighbors);
        if tr.rows == 0 || tr.cols == 0 {
            return bad(format!("dataset 'train' is empty ({} x {})", tr.rows, tr.cols));
        }
        if te.cols != tr.cols {
            return bad(format!("dataset 'test' has {} columns but 'train' has {}", te.cols, tr.cols));
        }
        if nb.rows != te.rows {
            return bad(format!("dataset 'neighbors' has {} rows but 'test' has {}", nb.rows, te.rows));
        }
        for (what, t) in [("train", tr), ("test", te)] {
            if let Some(i) = t.data.iter().position(|x| !x.is_finite()) {
                let (r, c) = (i / t.cols + 1, i % t.cols + 1);
                return bad(format!("dataset '{what}': row {r}, column {c}: {} is not a finite number", t.data[i]));
            }
        }
        if let Some(i) = nb.data.iter().position(|&v| v < 0 || v as usize >= tr.rows) {
            let (r, c) = (i / nb.cols.max(1) + 1, i % nb.cols.max(1) + 1);
            return bad(format!(
                "dataset 'neighbors': row {r}, column {c}: id {} is not a row of 'train' (0..{})",
                nb.data[i], tr.rows
            ));
        }
        if let Some(d) = &self.distances {
            if (d.rows, d.cols) != (nb.rows, nb.cols) {
                return bad(format!(
                    "dataset 'distances' is {} x {} but 'neighbors' is {} x {}",
                    d.rows, d.cols, nb.rows, nb.cols
                ));
            }
            if let Some(i) = d.data.iter().position(|x| x.is_nan()) {
                return bad(format!("dataset 'distances': row {}, column {}: NaN", i / d.cols + 1, i % d.cols + 1));
            }
        }
        Ok(())
    }
}

/// The 8 bytes that open an HDF5 superblock.
const SIGNATURE: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// Whether the file has an HDF5 signature where the format allows one: at byte 0, or at 512,
/// 1024, 2048, … after a user block. Reads 8 bytes per place, so a huge non-HDF5 file costs
/// nothing.
fn has_signature(path: &Path, len: u64) -> Result<bool> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut at = 0u64;
    while at + 8 <= len {
        let mut b = [0u8; 8];
        f.seek(SeekFrom::Start(at)).and_then(|_| f.read_exact(&mut b)).map_err(|e| Error::io(path, e))?;
        if b == SIGNATURE {
            return Ok(true);
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
    Ok(false)
}

/// Reads an ann-benchmarks file: `train`, `test` and `neighbors` are required, `distances` is
/// optional, and so is the `distance` attribute (an empty `metric` when absent). Any numeric
/// element type is converted by HDF5 (`train` stored as `uint8` reads as `f32`).
///
/// ```
/// use neurobits::io::ann::{read, write, AnnData};
/// use neurobits::io::read::Table;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("tiny.hdf5");
/// let t = |rows, cols, data: Vec<f32>| Table { rows, cols, data };
/// let data = AnnData {
///     train: t(3, 2, vec![0.0, 0.0, 1.0, 0.0, 5.0, 5.0]),
///     test: t(1, 2, vec![0.9, 0.0]),
///     neighbors: Table { rows: 1, cols: 2, data: vec![1, 0] },
///     distances: Some(t(1, 2, vec![0.1, 0.9])),
///     metric: "euclidean".into(),
/// };
/// write(&path, &data)?;
/// assert_eq!(read(&path)?, data);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: &Path) -> Result<AnnData> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(path, std::io::Error::from(std::io::ErrorKind::IsADirectory)));
    }
    let len = meta.len();
    if !has_signature(path, len)? {
        return Err(Error::input(&name, "not an HDF5 file (no HDF5 signature at byte 0, 512, 1024, …)"));
    }
    let h5err = |what: &str, e: h5::Error| Error::input(&name, format!("{what}: {}", one_line(&e)));
    let file = h5::File::open(path).map_err(|e| h5err("cannot open as HDF5", e))?;
    let train = dataset::<f32>(&file, &name, "train", len)?;
    let test = dataset::<f32>(&file, &name, "test", len)?;
    let neighbors = dataset::<i32>(&file, &name, "neighbors", len)?;
    let distances = match file.link_exists("distances") {
        true => Some(dataset::<f32>(&file, &name, "distances", len)?),
        false => None,
    };
    let metric = match file.attr("distance") {
        Ok(a) => string_attr(&a).ok_or_else(|| Error::input(&name, "attribute 'distance' is not a string"))?,
        Err(_) => String::new(),
    };
    let data = AnnData { train, test, neighbors, distances, metric };
    data.validate(&name)?;
    Ok(data)
}

/// HDF5's error as one line (its stacks can span several).
fn one_line(e: &h5::Error) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A 2-D dataset as a table of `T`, its size checked before it is read.
fn dataset<T: h5::H5Type + Clone>(file: &h5::File, name: &str, what: &str, file_len: u64) -> Result<Table<T>> {
    let bad = |why: String| Error::input(name, format!("dataset '{what}': {why}"));
    if !file.link_exists(what) {
        return Err(Error::input(
            name,
            format!("no dataset '{what}' (an ann-benchmarks file has train, test, neighbors)"),
        ));
    }
    let ds = file.dataset(what).map_err(|e| bad(one_line(&e)))?;
    let shape = ds.shape();
    let [rows, cols] = shape[..] else {
        return Err(bad(format!("must be 2-D, has shape {shape:?}")));
    };
    let elem = ds.dtype().map_err(|e| bad(one_line(&e)))?.size() as u128;
    let stored = rows as u128 * cols as u128 * elem;
    // Unfiltered data lies in the file as it is: a shape that claims more bytes than the file
    // holds is a lie (a garbled header), refused before anything is allocated for it.
    if ds.filters().is_empty() && stored > file_len as u128 {
        return Err(bad(format!("its shape {rows} x {cols} needs {stored} bytes but the file has {file_len}")));
    }
    let want = rows as u128 * cols as u128 * std::mem::size_of::<T>() as u128;
    ensure_fits(name, &format!("dataset '{what}'"), want)?;
    let data = ds.read_raw::<T>().map_err(|e| bad(one_line(&e)))?;
    if data.len() != rows * cols {
        return Err(bad(format!("read {} values, its shape says {rows} x {cols}", data.len())));
    }
    Ok(Table { rows, cols, data })
}

/// A string attribute however it was written: h5py's variable-length UTF-8 (a `str`), or
/// variable- or fixed-length ASCII (`numpy.bytes_`).
fn string_attr(a: &h5::Attribute) -> Option<String> {
    if let Ok(s) = a.read_scalar::<VarLenUnicode>() {
        return Some(s.as_str().to_owned());
    }
    if let Ok(s) = a.read_scalar::<VarLenAscii>() {
        return Some(s.as_str().to_owned());
    }
    if let Ok(s) = a.read_scalar::<FixedAscii<256>>() {
        return Some(s.as_str().to_owned());
    }
    a.read_scalar::<FixedUnicode<256>>().ok().map(|s| s.as_str().to_owned())
}

/// Writes `data` in the ann-benchmarks layout, as ann-benchmarks' `write_output` does: the
/// datasets `train`, `test` (`float32`), `neighbors` (`int32`), `distances` (`float32`, when
/// present) and the attributes `distance`, `type` (`dense`), `dimension` and `point_type`
/// (`float`). The file appears whole or not at all (`io::atomic`: written in a temporary
/// directory beside it, then moved). The data is validated first.
pub fn write(path: &Path, data: &AnnData) -> Result<()> {
    let name = path.display().to_string();
    if path == Path::new("-") {
        // HDF5 seeks back into what it wrote: a stream cannot hold it.
        return Err(Error::input("-", "an HDF5 file cannot be written to standard output: name a file"));
    }
    data.validate(&name)?;
    let file_name = path.file_name().ok_or_else(|| Error::input(&name, "not a file name"))?;
    let file_name = file_name.to_str().ok_or_else(|| Error::input(&name, "the file name is not UTF-8"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    crate::io::atomic::write_set(dir, &[file_name], |tmp| {
        write_hdf5(&tmp.join(file_name), data).map_err(|e| anyhow::anyhow!("{name}: {}", one_line(&e)))
    })
    // The system's error stays in the chain (the CLI's exit code 1 reads it).
    .map_err(Error::Other)
}

fn write_hdf5(path: &Path, d: &AnnData) -> h5::Result<()> {
    let f = h5::File::create(path)?;
    fn put<T: h5::H5Type>(f: &h5::File, what: &str, t: &Table<T>) -> h5::Result<()> {
        let ds = f.new_dataset::<T>().shape((t.rows, t.cols)).create(what)?;
        ds.write_raw(&t.data[..])
    }
    put(&f, "train", &d.train)?;
    put(&f, "test", &d.test)?;
    put(&f, "neighbors", &d.neighbors)?;
    if let Some(dist) = &d.distances {
        put(&f, "distances", dist)?;
    }
    let text = |s: &str| s.parse::<VarLenUnicode>().map_err(|e| h5::Error::from(e.to_string()));
    f.new_attr::<VarLenUnicode>().create("distance")?.write_scalar(&text(&d.metric)?)?;
    f.new_attr::<VarLenUnicode>().create("type")?.write_scalar(&text("dense")?)?;
    f.new_attr::<i64>().create("dimension")?.write_scalar(&(d.train.cols as i64))?;
    f.new_attr::<VarLenUnicode>().create("point_type")?.write_scalar(&text("float")?)?;
    f.close()
}
