//! `_neurobits.Cortical`: square images as C-contiguous `float32` rows (pixels 0…16 or 8-bit),
//! labels as `int64`, features as `int32` winners (−1 silent).

use std::path::PathBuf;

use neurobits::cortical::model::Cortical as Model;
use neurobits::cortical::Config;
use neurobits::device::Target;
use neurobits::model::Model as _;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::flyhash::saving;
use crate::{array2, chunk_rows, chunked, config, detached, interruptible, labels, target, to_py, Rows};

/// The cortical-column network (the library's `cortical::model::Cortical`). Its `fit` is one
/// library call: the GIL is released during it, but Ctrl-C takes effect only when it returns;
/// `transform` and `predict` run in chunks of rows.
#[pyclass(module = "neurobits._neurobits")]
pub struct Cortical {
    pub(crate) inner: Model,
}

saving!(Cortical, Model);

impl Cortical {
    /// Rows per chunk of `transform`/`predict` (on the CPU: the readout runs there).
    fn chunk(&self) -> PyResult<usize> {
        let net = self.inner.network().map_err(to_py)?;
        let per_image = net.geo.hypercolumns() as u128 * net.geo.minicolumns() as u128 * 64;
        Ok(chunk_rows(Target::CPU, per_image))
    }
}

#[pymethods]
impl Cortical {
    /// An untrained network with `config_json` (`cortical::Config` as JSON).
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        Ok(Cortical { inner: Model::new(config::<Config>(config_json)?) })
    }

    /// Trains a new network on the images `x` with labels `y` on `device`.
    fn fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f32>,
        y: PyReadonlyArray1<'_, i64>,
        device: &str,
    ) -> PyResult<()> {
        let x = Rows::of(&x, "the images")?;
        let y = labels(&y)?;
        let mut m = Model::new(self.inner.config.clone()).with_device(target(device)?);
        interruptible(py, || m.fit(&x.matrix(0..x.rows), y).map(|_| ()))?;
        self.inner = m;
        Ok(())
    }

    /// Features of each image: `rows × hypercolumns` winners (−1 silent).
    fn transform<'py>(&self, py: Python<'py>, x: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray2<i32>>> {
        let x = Rows::of(&x, "the images")?;
        let hc = self.inner.network().map_err(to_py)?.geo.hypercolumns();
        let m = &self.inner;
        let f = if x.rows == 0 {
            detached(py, || m.transform(&x.matrix(0..0)))?
        } else {
            chunked(py, x.rows, hc, (self.chunk()?, 64), |r| m.transform(&x.matrix(r)))?
        };
        array2(py, f, x.rows, hc)
    }

    /// The label of each image: that of the training image whose population code is nearest
    /// (competitive rule) or whose features agree most (spec's rule).
    fn predict<'py>(&self, py: Python<'py>, x: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let x = Rows::of(&x, "the images")?;
        let m = &self.inner;
        let p = if x.rows == 0 {
            detached(py, || m.predict(&x.matrix(0..0)))?
        } else {
            chunked(py, x.rows, 1, (self.chunk()?, 64), |r| m.predict(&x.matrix(r)))?
        };
        Ok(p.into_pyarray(py))
    }

    /// `(accuracy, normalised mutual information)` of `predict(x)` against `y`.
    fn score(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f32>,
        y: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<(f64, f64)> {
        let x = Rows::of(&x, "the images")?;
        let y = labels(&y)?;
        let m = &self.inner;
        detached(py, || m.score(&x.matrix(0..x.rows), y))
    }

    /// The training labels, sorted, without repeats (`classes_`, also after `load`).
    #[getter]
    fn classes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        Ok(self.inner.classes().map_err(to_py)?.into_pyarray(py))
    }

    /// Pixels per image of the training images (`n_features_in_`, also after `load`).
    #[getter]
    fn n_features(&self) -> PyResult<usize> {
        self.inner.n_features().map_err(to_py)
    }

    /// `(hypercolumns, minicolumns, learning steps)` of the trained network.
    #[getter]
    fn shape(&self) -> PyResult<(usize, usize, u64)> {
        let net = self.inner.network().map_err(to_py)?;
        Ok((net.geo.hypercolumns(), net.geo.minicolumns(), net.t))
    }

    /// The configuration as JSON (after `load`, the saved one).
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.config).expect("plain configuration")
    }
}
