//! `_neurobits.Ocnn`: points as C-contiguous `float64` rows, labels as `int64`.

use std::path::PathBuf;

use neurobits::model::Model as _;
use neurobits::ocnn::model::Ocnn as Model;
use neurobits::ocnn::points::Points;
use neurobits::ocnn::Config;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::flyhash::saving;
use crate::{config, detached, interruptible, slice, target, to_py};

/// The OCNN clusterer (the library's `ocnn::model::Ocnn`). Its `fit` is one library call, run
/// under a cancel token (`crate::interruptible`): Ctrl-C stops it between two iterations.
#[pyclass(module = "neurobits._neurobits")]
pub struct Ocnn {
    pub(crate) inner: Model,
}

saving!(Ocnn, Model);

#[pymethods]
impl Ocnn {
    /// An unfitted clusterer with `config_json` (`ocnn::Config` as JSON).
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        Ok(Ocnn { inner: Model::new(config::<Config>(config_json)?) })
    }

    /// Clusters the rows of `x` (one point per row).
    fn fit(&mut self, py: Python<'_>, x: PyReadonlyArray2<'_, f64>, device: &str) -> PyResult<()> {
        let (n, dim) = (x.shape()[0], x.shape()[1]);
        let coords = slice(&x, "the points")?;
        let mut m = Model::new(self.inner.config.clone()).with_device(target(device)?);
        interruptible(py, || m.fit(&Points { n, dim, coords: coords.to_vec() }).map(|_| ()))?;
        self.inner = m;
        Ok(())
    }

    /// One label per point: clusters numbered 0, 1, … in the order of their smallest member.
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let l = self.inner.labels().map_err(to_py)?;
        Ok(l.iter().map(|&v| v as i64).collect::<Vec<_>>().into_pyarray(py))
    }

    /// The run's report as JSON: scale, threshold, clusters, the k(θ) curve, digests, times.
    #[getter]
    fn report_json(&self) -> PyResult<String> {
        let r = self.inner.report().map_err(to_py)?;
        Ok(serde_json::to_string(r).expect("plain report"))
    }

    /// The configuration as JSON (after `load`, the saved one).
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.config).expect("plain configuration")
    }
}
