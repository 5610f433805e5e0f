//! `_neurobits.FlyHash`, `FlyIndex` and `FlyNN`: vectors as C-contiguous `float32` rows, codes as
//! `uint64` words (bit `i` of a code in word `i / 64`), labels as `int64`.

use std::path::PathBuf;

use neurobits::flyhash::classifier::{FlyNN as Classifier, FlyNNConfig};
use neurobits::flyhash::index::FlyIndex as Index;
use neurobits::flyhash::model::{FlyHash as Hasher, FlyHashConfig};
use neurobits::model::Model as _;
use neurobits::Error;
use neurobits_core::flyhash::FlyParams;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::{array2, chunk_rows, chunked, config, detached, labels, target, to_py, Rows};

/// `(d, m, s, k, seed)`.
type Params = (u32, u32, u32, u32, u64);

fn params(p: FlyParams) -> Params {
    (p.d, p.m, p.s, p.k, p.seed)
}

/// Work per row of hashing: the projection's sums and the winners' selection.
fn cost(p: &FlyParams) -> u128 {
    p.m as u128 * (p.s as u128 + 8)
}

/// `(_neurobits._from_bytes, (kind, bytes))`: pickling through the saved-model format.
pub(crate) fn reduce<'py>(slf: &Bound<'py, PyAny>, kind: &str, bytes: Vec<u8>) -> PyResult<Bound<'py, PyTuple>> {
    let py = slf.py();
    let from = PyModule::import(py, "neurobits._neurobits")?.getattr("_from_bytes")?;
    let args = PyTuple::new(py, [kind.into_pyobject(py)?.into_any(), PyBytes::new(py, &bytes).into_any()])?;
    PyTuple::new(py, [from.into_any(), args.into_any()])
}

/// Implements the saving verbs of a class wrapping a library model in `inner`.
macro_rules! saving {
    ($ty:ident, $model:ty) => {
        #[pymethods]
        impl $ty {
            /// The saved-model file as bytes.
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py)?))
            }

            /// A model from the bytes of `to_bytes`.
            #[staticmethod]
            fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
                detached(py, || <$model>::from_bytes(data, "the saved model")).map(|inner| $ty { inner })
            }

            /// Saves to `path` atomically.
            fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
                let inner = &self.inner;
                detached(py, || inner.save(&path))
            }

            /// Loads a model saved by `save` (or by the CLI).
            #[staticmethod]
            fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
                detached(py, || <$model>::load(&path)).map(|inner| $ty { inner })
            }

            /// Pickles through the saved-model format.
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
                let bytes = slf.borrow().inner.to_bytes().map_err(to_py)?;
                crate::flyhash::reduce(slf.as_any(), <$model>::KIND, bytes)
            }
        }
    };
}
pub(crate) use saving;

/// Rejects NaN and ±inf with the library's message (the check `transform` makes).
fn check_finite(py: Python<'_>, x: &Rows<'_>, what: &'static str) -> PyResult<()> {
    detached(py, || Ok(x.matrix(0..x.rows).check_finite(what)?))
}

/// FlyHash (the library's `flyhash::model::FlyHash`).
#[pyclass(module = "neurobits._neurobits")]
pub struct FlyHash {
    pub(crate) inner: Hasher,
}

saving!(FlyHash, Hasher);

#[pymethods]
impl FlyHash {
    /// An unfitted FlyHash with `config_json` (`FlyHashConfig` as JSON).
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        Ok(FlyHash { inner: Hasher::new(config::<FlyHashConfig>(config_json)?) })
    }

    /// Fixes the input dimension from `x` (whose values must be finite) and draws the
    /// projection.
    fn fit(&mut self, py: Python<'_>, x: PyReadonlyArray2<'_, f32>) -> PyResult<()> {
        let x = Rows::of(&x, "the vectors")?;
        check_finite(py, &x, "the vectors")?;
        let inner = &mut self.inner;
        let cols = x.cols;
        detached(py, || inner.fit(&neurobits::flyhash::data::Matrix { rows: 0, cols, data: vec![] }).map(|_| ()))
    }

    /// The codes of the rows of `x`, `rows × ⌈m/64⌉` words.
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        device: &str,
    ) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let x = Rows::of(&x, "the vectors")?;
        let t = target(device)?;
        let p = self.inner.params().map_err(to_py)?;
        // The model's own device cache (the GPU is opened by the first call only), and the
        // rows read in place from the array (no copy).
        let h = &self.inner;
        let codes = if x.rows == 0 {
            detached(py, || h.transform_view(t, x.view(0..0)))?
        } else {
            chunked(py, x.rows, p.code_words(), (chunk_rows(t, cost(&p)), 64), |r| h.transform_view(t, x.view(r)))?
        };
        array2(py, codes, x.rows, p.code_words())
    }

    /// `(d, m, s, k, seed)` of the fitted FlyHash.
    #[getter]
    fn params(&self) -> PyResult<Params> {
        Ok(params(self.inner.params().map_err(to_py)?))
    }

    /// The projection: `m` rows of `s` ascending input indices.
    fn projection<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let p = self.inner.params().map_err(to_py)?;
        let proj = self.inner.projection().map_err(to_py)?.to_vec();
        array2(py, proj, p.m as usize, p.s as usize)
    }

    /// The configuration as JSON (after `load`, the saved one).
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.config).expect("plain configuration")
    }
}

/// Seconds of the library's `FlyHash::transform_view` alone on all of `x` (the bench's
/// reference: the library's fastest call on rows in place, no Python in the timed region, no
/// chunks).
#[pyfunction]
pub fn time_transform(py: Python<'_>, model: &FlyHash, x: PyReadonlyArray2<'_, f32>, device: &str) -> PyResult<f64> {
    let x = Rows::of(&x, "the vectors")?;
    let (h, device) = (&model.inner, target(device)?);
    let m = x.view(0..x.rows);
    detached(py, || {
        let t = std::time::Instant::now();
        h.transform_view(device, m)?;
        Ok(t.elapsed().as_secs_f64())
    })
}

/// A FlyHash index (the library's `flyhash::index::FlyIndex`).
#[pyclass(module = "neurobits._neurobits")]
pub struct FlyIndex {
    pub(crate) inner: Index,
}

saving!(FlyIndex, Index);

#[pymethods]
impl FlyIndex {
    /// An empty index for vectors of dimension `d`, hashed as `config_json` says.
    #[new]
    fn new(config_json: &str, d: usize) -> PyResult<Self> {
        let c = config::<FlyHashConfig>(config_json)?;
        Ok(FlyIndex { inner: Index::new(c, d).map_err(to_py)? })
    }

    /// Hashes the rows of `x` and adds their codes: `(first id, end id)`.
    fn add(&mut self, py: Python<'_>, x: PyReadonlyArray2<'_, f32>, device: &str) -> PyResult<(usize, usize)> {
        let x = Rows::of(&x, "the vectors")?;
        let t = target(device)?;
        let p = self.inner.hasher().params().map_err(to_py)?;
        let start = self.inner.len();
        let chunk = chunk_rows(t, cost(&p));
        if x.rows <= chunk {
            // One library call: it adds all the rows or none.
            let mut index = std::mem::replace(&mut self.inner, Index::new(FlyHashConfig::default(), 1).map_err(to_py)?);
            index = index.with_device(t);
            let r = detached(py, || index.add(&x.matrix(0..x.rows)).map(|_| ()));
            self.inner = index;
            r?;
        } else {
            // Several chunks (Ctrl-C is checked between them): all rows or none, so a failed or
            // interrupted add cuts the index back (no copy of the codes held).
            let device = self.inner.hasher().device;
            let mut index = std::mem::replace(&mut self.inner, Index::new(FlyHashConfig::default(), 1).map_err(to_py)?);
            index = index.with_device(t);
            let r = chunked(py, x.rows, 0, (chunk, 64), |r| index.add(&x.matrix(r)).map(|_| Vec::<()>::new()));
            if r.is_err() {
                index.truncate(start);
            }
            self.inner = index.with_device(device);
            r?;
        }
        Ok((start, self.inner.len()))
    }

    /// The `k` nearest codes of each row of `x`: `(distances uint32, ids int64)`, each
    /// `rows × k`, padded with `u32::MAX` and −1.
    #[allow(clippy::type_complexity)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        k: usize,
        device: &str,
    ) -> PyResult<(Bound<'py, PyArray2<u32>>, Bound<'py, PyArray2<i64>>)> {
        let x = Rows::of(&x, "the queries")?;
        let t = target(device)?;
        let p = self.inner.hasher().params().map_err(to_py)?;
        let index = &self.inner;
        let per_row = cost(&p) + (self.inner.len() * p.code_words()) as u128 * 4;
        let n = x.rows;
        let hits: Vec<(u32, i64)> = if n == 0 {
            detached(py, || index.search_on(&x.matrix(0..0), k, t).map(|_| Vec::new()))?
        } else {
            chunked(py, n, k, (chunk_rows(t, per_row), 64), |r| {
                let h = index.search_on(&x.matrix(r), k, t)?;
                Ok(h.distances.into_iter().zip(h.ids).collect())
            })?
        };
        let (d, i): (Vec<u32>, Vec<i64>) = hits.into_iter().unzip();
        Ok((array2(py, d, n, k)?, array2(py, i, n, k)?))
    }

    /// Codes held.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The codes, `len × ⌈m/64⌉` words.
    fn codes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let w = self.inner.hasher().params().map_err(to_py)?.code_words();
        array2(py, self.inner.codes().to_vec(), self.inner.len(), w)
    }

    /// `(d, m, s, k, seed)` of the index's FlyHash.
    #[getter]
    fn params(&self) -> PyResult<Params> {
        Ok(params(self.inner.hasher().params().map_err(to_py)?))
    }

    /// The FlyHash configuration as JSON.
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.hasher().config).expect("plain configuration")
    }

    /// Hashes `x` with the index saved at `path` and appends the codes to that file without
    /// rewriting it: `(first id, end id)`.
    #[staticmethod]
    fn append(py: Python<'_>, path: PathBuf, x: PyReadonlyArray2<'_, f32>, device: &str) -> PyResult<(usize, usize)> {
        let x = Rows::of(&x, "the vectors")?;
        let t = target(device)?;
        let m = x.matrix(0..x.rows);
        detached(py, || Index::append(&path, &m, t)).map(|r| (r.start, r.end))
    }
}

/// The FlyNN classifier (the library's `flyhash::classifier::FlyNN`).
#[pyclass(module = "neurobits._neurobits")]
pub struct FlyNN {
    pub(crate) inner: Classifier,
}

saving!(FlyNN, Classifier);

impl FlyNN {
    fn learn(&mut self, py: Python<'_>, x: &Rows<'_>, y: &[i64], device: &str, fresh: bool) -> PyResult<()> {
        if y.len() != x.rows {
            return Err(to_py(Error::input("the labels", format!("{} labels for {} vectors", y.len(), x.rows))));
        }
        let t = target(device)?;
        let mut clf = if fresh { Classifier::new(self.inner.config.clone()) } else { self.inner.clone() };
        clf.device = t;
        if x.rows == 0 {
            detached(py, || clf.partial_fit(&x.matrix(0..0), y).map(|_| ()))?;
        } else {
            if fresh || clf.hasher().is_err() {
                // The mean (with centring) is that of all the rows, as one `fit` would take it.
                detached(py, || clf.begin(&x.matrix(0..x.rows)).map(|_| ()))?;
            }
            // The code length is known once the first rows fixed d: chunk by its cost. A fit
            // hashes in chunks, then learns all the codes at once (counts and the error-driven
            // rounds, as the library's `fit`); `partial_fit` counts chunk by chunk.
            let c = &mut clf;
            let chunk = chunk_rows(t, cost(&c.hasher().map_err(to_py)?.params().map_err(to_py)?));
            let mut codes = Vec::new();
            let mut start = 0;
            while start < x.rows {
                let end = start.saturating_add(chunk).min(x.rows);
                if fresh {
                    codes.extend(detached(py, || c.codes(&x.matrix(start..end)))?);
                } else {
                    detached(py, || c.partial_fit(&x.matrix(start..end), &y[start..end]).map(|_| ()))?;
                }
                start = end;
                if start < x.rows {
                    py.check_signals()?;
                }
            }
            if fresh {
                detached(py, || c.learn_codes(&codes, y).map(|_| ()))?;
            }
        }
        // All or nothing: an interrupted or refused fit leaves the model as it was.
        self.inner = clf;
        Ok(())
    }

    fn hash_cost(&self) -> PyResult<u128> {
        Ok(cost(&self.inner.hasher().map_err(to_py)?.params().map_err(to_py)?))
    }
}

#[pymethods]
impl FlyNN {
    /// An unfitted classifier with `config_json` (`FlyNNConfig` as JSON).
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        Ok(FlyNN { inner: Classifier::new(config::<FlyNNConfig>(config_json)?) })
    }

    /// Forgets any earlier fit, then learns the rows of `x` with labels `y`.
    fn fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f32>,
        y: PyReadonlyArray1<'_, i64>,
        device: &str,
    ) -> PyResult<()> {
        self.learn(py, &Rows::of(&x, "the vectors")?, labels(&y)?, device, true)
    }

    /// Learns the rows of `x` with labels `y` on top of what was learned before.
    fn partial_fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f32>,
        y: PyReadonlyArray1<'_, i64>,
        device: &str,
    ) -> PyResult<()> {
        self.learn(py, &Rows::of(&x, "the vectors")?, labels(&y)?, device, false)
    }

    /// The class of each row of `x`.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        device: &str,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let x = Rows::of(&x, "the vectors")?;
        let t = target(device)?;
        let mut clf = self.inner.clone();
        clf.device = t;
        let out = if x.rows == 0 {
            detached(py, || clf.predict(&x.matrix(0..0)))?
        } else {
            chunked(py, x.rows, 1, (chunk_rows(t, self.hash_cost()?), 64), |r| clf.predict(&x.matrix(r)))?
        };
        Ok(out.into_pyarray(py))
    }

    /// Per row of `x`, the normalised familiarity of each class (`classes` order).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        device: &str,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = Rows::of(&x, "the vectors")?;
        let t = target(device)?;
        let mut clf = self.inner.clone();
        clf.device = t;
        let nc = self.inner.classes().map_err(to_py)?.len();
        let out = if x.rows == 0 {
            detached(py, || clf.predict_proba(&x.matrix(0..0)))?
        } else {
            chunked(py, x.rows, nc, (chunk_rows(t, self.hash_cost()?), 64), |r| clf.predict_proba(&x.matrix(r)))?
        };
        array2(py, out, x.rows, nc)
    }

    /// The class labels, sorted.
    fn classes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        Ok(self.inner.classes().map_err(to_py)?.to_vec().into_pyarray(py))
    }

    /// `(d, m, s, k, seed)` of the fitted FlyHash.
    #[getter]
    fn params(&self) -> PyResult<Params> {
        Ok(params(self.inner.hasher().map_err(to_py)?.params().map_err(to_py)?))
    }

    /// The configuration as JSON (after `load`, the saved one).
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.config).expect("plain configuration")
    }
}
