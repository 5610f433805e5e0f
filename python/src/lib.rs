//! `neurobits._neurobits`: the Rust half of the Python package. One small class per model
//! (`Gbnn`, `FlyHash`, `FlyIndex`, `FlyNN`, `Ocnn`, `Cortical`) around the library's model type;
//! the scikit-learn-facing classes are written in Python (`python/neurobits/`) on top of them.
//!
//! The rules at this boundary:
//! - arrays come in as C-contiguous numpy arrays of the model's element type (the Python layer
//!   converts anything else once); a borrowed slice is passed to the library where it takes one
//!   (GBNN's `&[i64]`), else copied once into the library's owned `Matrix`/`Points`;
//! - the interpreter is detached (`py.detach`, the GIL released) while Rust computes, and long
//!   row-wise calls on the CPU run in chunks of rows with `py.check_signals()` between them, so
//!   Ctrl-C interrupts them (chunks give the same bits: every such verb is per row); a long call
//!   that is one piece (OCNN and cortical `fit`) runs on a worker thread under a
//!   [`neurobits::cancel::Cancel`] token while this thread waits, looking for Ctrl-C every 50 ms
//!   (see `interruptible`);
//! - every library error becomes a Python exception carrying the one line the CLI prints;
//!   panics are caught here and never reach the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use neurobits::device::Target;
use neurobits::flyhash::data::Matrix;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{
    PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

mod cortical;
mod flyhash;
mod flyhash_ann;
mod gbnn;
mod ocnn;

/// The exception class raised for [`neurobits::Error::NotFitted`] (scikit-learn's
/// `NotFittedError` when the Python package found scikit-learn, else its own subclass of
/// `ValueError` and `AttributeError`); set once by the package at import.
static NOT_FITTED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Sets the class raised for "not fitted" errors (called once by `neurobits/_errors.py`).
#[pyfunction]
fn _set_not_fitted_error(py: Python<'_>, cls: Bound<'_, PyType>) {
    let _ = NOT_FITTED.set(py, cls.unbind());
}

/// The CLI's one line for `e` (`main.rs` prints `{:#}` of the error with newlines removed).
fn line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

/// A library error as the Python exception of its kind, with the CLI's message.
pub(crate) fn to_py(e: neurobits::Error) -> PyErr {
    use neurobits::Error as E;
    let kind = match &e {
        _ if e.is_interrupted() => 6,
        E::NotFitted(_) => 0,
        E::Memory { .. } => 5,
        E::Io { error, .. } | E::Write(error) if error.kind() == std::io::ErrorKind::NotFound => 1,
        E::Io { .. } | E::Write(_) => 2,
        E::Gpu(_) => 3,
        E::Other(a) if a.downcast_ref::<neurobits_gpu_host::GpuError>().is_some() => 3,
        E::Other(a) if a.downcast_ref::<std::io::Error>().is_some() => 2,
        _ => 4,
    };
    let msg = line(&anyhow::Error::from(e));
    // The memory budget's refusals wrapped in another error (`neurobits::budget`): known by their words.
    let kind = if kind == 4 && msg.contains("more than the memory budget of") { 5 } else { kind };
    match kind {
        0 => Python::attach(|py| match NOT_FITTED.get(py) {
            Some(cls) => PyErr::from_type(cls.bind(py).clone(), msg),
            None => PyValueError::new_err(msg),
        }),
        1 => PyFileNotFoundError::new_err(msg),
        2 => PyOSError::new_err(msg),
        3 => PyRuntimeError::new_err(msg),
        5 => PyMemoryError::new_err(msg),
        6 => PyKeyboardInterrupt::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// Runs `f` with the interpreter detached; a library error becomes its exception and a panic a
/// `RuntimeError` (never an abort, never a `PanicException` from deeper down).
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> neurobits::Result<T> + Send) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(r) => r.map_err(to_py),
        Err(p) => Err(panic_error(p)),
    }
}

/// Runs `f` like [`detached`], on a worker thread under a cancel token, while this thread looks
/// for Ctrl-C (`py.check_signals()`) every 50 ms: on one it cancels the token, waits for the
/// library to stop at its next check (the model untouched: it is only replaced on success) and
/// raises the `KeyboardInterrupt`. Python runs signal handlers only on its main thread, and only
/// between bytecodes, so a call that is one piece of native work needs this to be stopped.
pub(crate) fn interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> neurobits::Result<T> + Send) -> PyResult<T> {
    let token = neurobits::cancel::Cancel::new();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        // `Receiver` is not `Sync`; the wait below borrows it from a detached closure.
        let rx = std::sync::Mutex::new(rx);
        let worker_token = token.clone();
        let worker = s.spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| neurobits::cancel::with(&worker_token, f)));
            let _ = tx.send(());
            r
        });
        loop {
            let wait = std::time::Duration::from_millis(50);
            let done = py.detach(|| rx.lock().map(|r| r.recv_timeout(wait).is_ok()).unwrap_or(true));
            if done || worker.is_finished() {
                break;
            }
            if let Err(interrupt) = py.check_signals() {
                token.cancel();
                let _ = py.detach(|| worker.join());
                return Err(interrupt);
            }
        }
        match py.detach(|| worker.join()).unwrap_or_else(Err) {
            Ok(r) => r.map_err(to_py),
            Err(p) => Err(panic_error(p)),
        }
    })
}

/// A panic's payload as the `RuntimeError` raised for it.
fn panic_error(p: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = p
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| p.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    PyRuntimeError::new_err(format!("internal error in neurobits (please report it): {what}"))
}

/// The device a call names: `cpu`, `gpu`, `cuda`, `gpu:N`, `cuda:N` or `auto`.
pub(crate) fn target(device: &str) -> PyResult<Target> {
    device.parse::<Target>().map_err(PyValueError::new_err)
}

/// The contiguous data of an array (the Python layer makes it so; this is the guard).
pub(crate) fn slice<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    a: &'a numpy::PyReadonlyArray<'_, T, D>,
    what: &str,
) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| PyValueError::new_err(format!("{what}: the array is not C-contiguous")))
}

/// Rows of a 2-D `f32` array, borrowed, with its shape.
pub(crate) struct Rows<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
}

impl<'a> Rows<'a> {
    pub fn of(a: &'a PyReadonlyArray2<'_, f32>, what: &str) -> PyResult<Self> {
        let (rows, cols) = (a.shape()[0], a.shape()[1]);
        Ok(Rows { data: slice(a, what)?, rows, cols })
    }

    /// Rows `r` borrowed, for the library calls that read rows in place (no copy).
    pub fn view(&self, r: std::ops::Range<usize>) -> neurobits::flyhash::data::MatrixRef<'a> {
        neurobits::flyhash::data::MatrixRef {
            rows: r.len(),
            cols: self.cols,
            data: &self.data[r.start * self.cols..r.end * self.cols],
        }
    }

    /// Rows `r` as the library's matrix (the one copy, on every core).
    pub fn matrix(&self, r: std::ops::Range<usize>) -> Matrix {
        let src = &self.data[r.start * self.cols..r.end * self.cols];
        let mut data = vec![0f32; src.len()];
        par_copy(&mut data, src);
        Matrix { rows: r.len(), cols: self.cols, data }
    }
}

/// Rows of the first chunk of a row-wise call on the CPU: about 2^32 units of work per thread
/// (a unit is about a nanosecond of one core) at `cost` per row, at least 256 rows per thread
/// (so every core stays busy), a multiple of 64 rows.
pub(crate) fn chunk_rows(target: Target, cost: u128) -> usize {
    if !matches!(target, Target::Cpu { .. }) {
        // A GPU call opens its device and uploads once per call: one call, one chunk.
        return usize::MAX;
    }
    let threads = match target {
        Target::Cpu { threads: Some(t) } => t,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let by_work = ((threads as u128) << 32) / cost.max(1);
    let rows = (by_work as usize).max(256 * threads).min(1 << 24);
    rows.div_ceil(64) * 64
}

/// Copies `src` into `dst` (equal lengths) on every core: the big copies at this boundary
/// (numpy rows into the library's matrix, chunks into the result) at memory speed.
pub(crate) fn par_copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 16;
    dst.par_chunks_mut(BLOCK).zip(src.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// Appends `src` to `dst`, whose capacity holds it, copying on every core.
fn append<T: Copy + Send + Sync>(dst: &mut Vec<T>, src: &[T]) {
    use rayon::prelude::*;
    use std::mem::MaybeUninit;
    assert!(dst.capacity() - dst.len() >= src.len(), "capacity reserved for every chunk");
    let len = dst.len();
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, so a `&[T]` is a valid `&[MaybeUninit<T>]`.
    let src_mu: &[MaybeUninit<T>] = unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), src.len()) };
    dst.spare_capacity_mut()[..src.len()]
        .par_chunks_mut(1 << 16)
        .zip(src_mu.par_chunks(1 << 16))
        .for_each(|(d, s)| d.copy_from_slice(s));
    // SAFETY: the `src.len()` elements after `len` were written just above.
    unsafe { dst.set_len(len + src.len()) };
}

/// Runs a row-wise call over `rows` rows in chunks, detached, checking for Ctrl-C between
/// chunks; each chunk gives `per_row` values per row, in order. The first chunk has `first`
/// rows, no chunk fewer than `min_rows` (but the last); the rest is cut into equal chunks of about a second of work per two threads at the
/// rate measured so far (a remainder under a quarter of a chunk joins it), so a short call is
/// one library call, a long one stops within a second or a few, and on many cores each chunk
/// is long enough that its last busy thread costs little. The first chunk's buffer (all of it
/// for a call done in one chunk) becomes the result; later chunks are copied into it once.
pub(crate) fn chunked<T: Copy + Send + Sync>(
    py: Python<'_>,
    rows: usize,
    per_row: usize,
    (first, min_rows): (usize, usize),
    mut f: impl FnMut(std::ops::Range<usize>) -> neurobits::Result<Vec<T>> + Send,
) -> PyResult<Vec<T>> {
    let mut out = Vec::new();
    let (mut start, mut chunk) = (0, first.max(1));
    let seconds = (rayon::current_num_threads() as f64 / 2.0).max(1.0);
    while start < rows {
        let mut end = start.saturating_add(chunk).min(rows);
        if rows - end < chunk / 4 {
            end = rows;
        }
        let t = std::time::Instant::now();
        let out_ref = &mut out;
        detached(py, || {
            let piece = f(start..end)?;
            if piece.len() != (end - start) * per_row {
                return Err(neurobits::Error::input("the result", "a chunk of unexpected size (please report it)"));
            }
            if out_ref.is_empty() {
                // The first chunk's buffer becomes the result; growing a large buffer remaps its
                // pages instead of copying them.
                *out_ref = piece;
                out_ref.reserve_exact(rows * per_row - out_ref.len());
            } else {
                append(out_ref, &piece);
            }
            Ok(())
        })?;
        let rate = (end - start) as f64 / t.elapsed().as_secs_f64().max(1e-6);
        start = end;
        // The rest in equal chunks of about `seconds` each (equal, so no short last chunk).
        let rest = rows - start;
        let pieces = (rest as f64 / (rate * seconds).max(1.0)).ceil().max(1.0) as usize;
        chunk = rest.div_ceil(pieces).max(min_rows);
        if start < rows {
            py.check_signals()?;
        }
    }
    Ok(out)
}

/// A `rows × cols` numpy array owning `v` (no copy).
pub(crate) fn array2<T: numpy::Element>(
    py: Python<'_>,
    v: Vec<T>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'_, PyArray2<T>>> {
    let a = Array2::from_shape_vec((rows, cols), v).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// Labels as a borrowed slice.
pub(crate) fn labels<'a>(y: &'a PyReadonlyArray1<'_, i64>) -> PyResult<&'a [i64]> {
    slice(y, "the labels")
}

/// A configuration from the JSON the Python layer writes (its constructor arguments).
pub(crate) fn config<T: serde::de::DeserializeOwned>(json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| PyValueError::new_err(format!("configuration: {e}")))
}

/// A model of `kind` (a saved-model kind) from the bytes of its `to_bytes`: what pickles
/// restore through.
#[pyfunction]
fn _from_bytes(py: Python<'_>, kind: &str, data: &[u8]) -> PyResult<Py<PyAny>> {
    use neurobits::model::Model as M;
    let name = "the pickled model";
    Ok(match kind {
        "gbnn" => {
            gbnn::Gbnn { inner: detached(py, || M::from_bytes(data, name))? }.into_pyobject(py)?.into_any().unbind()
        }
        "flyhash" => flyhash::FlyHash { inner: detached(py, || M::from_bytes(data, name))? }
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "flyhash-index" => flyhash::FlyIndex { inner: detached(py, || M::from_bytes(data, name))? }
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "flyhash-ann" => flyhash_ann::FlyAnnIndex { inner: detached(py, || M::from_bytes(data, name))? }
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "flynn" => {
            flyhash::FlyNN { inner: detached(py, || M::from_bytes(data, name))? }.into_pyobject(py)?.into_any().unbind()
        }
        "ocnn" => {
            ocnn::Ocnn { inner: detached(py, || M::from_bytes(data, name))? }.into_pyobject(py)?.into_any().unbind()
        }
        "cortical" => cortical::Cortical { inner: detached(py, || M::from_bytes(data, name))? }
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        _ => return Err(PyValueError::new_err(format!("{name}: unknown model kind '{kind}'"))),
    })
}

/// The library's version line (`neurobits 0.1.0 (commit)`).
#[pyfunction]
fn version() -> &'static str {
    neurobits::VERSION
}

/// Whether a CUDA GPU opens here (`ordinal`, default 0).
#[pyfunction]
#[pyo3(signature = (ordinal = 0))]
fn cuda_available(py: Python<'_>, ordinal: usize) -> bool {
    py.detach(|| neurobits::device::Device::open_target(Target::Gpu(ordinal)).is_ok())
}

#[pymodule]
fn _neurobits(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_not_fitted_error, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_available, m)?)?;
    m.add_class::<gbnn::Gbnn>()?;
    m.add_class::<flyhash::FlyHash>()?;
    m.add_class::<flyhash::FlyIndex>()?;
    m.add_class::<flyhash_ann::FlyAnnIndex>()?;
    m.add_class::<flyhash::FlyNN>()?;
    m.add_class::<ocnn::Ocnn>()?;
    m.add_class::<cortical::Cortical>()?;
    m.add_function(wrap_pyfunction!(flyhash::time_transform, m)?)?;
    m.add_function(wrap_pyfunction!(gbnn::time_retrieve, m)?)?;
    Ok(())
}
