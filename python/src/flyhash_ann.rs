//! `_neurobits.FlyAnnIndex`: the approximate FlyHash index (the library's
//! `flyhash::ann::FlyAnnIndex`); distances as `float32` (Hamming integers or squared Euclidean).

use std::path::PathBuf;

use neurobits::flyhash::ann::{AnnConfig, FlyAnnIndex as Index};
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::model::Model as _;
use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::flyhash::saving;
use crate::{array2, chunk_rows, chunked, config, detached, to_py, Rows};

/// `cpu`, `cuda`, `cuda:N`, `auto`, `gpus` (the ids sharded over every GPU) or `gpus:N`.
fn ann_device(device: &str) -> PyResult<neurobits::flyhash::ann_gpu::AnnDevice> {
    device.parse().map_err(pyo3::exceptions::PyValueError::new_err)
}

/// The approximate index.
#[pyclass(module = "neurobits._neurobits")]
pub struct FlyAnnIndex {
    pub(crate) inner: Index,
}

saving!(FlyAnnIndex, Index);

#[pymethods]
impl FlyAnnIndex {
    /// An empty index for vectors of dimension `d`: the FlyHash as `config_json` says, the
    /// tables as `ann_json` says.
    #[new]
    fn new(config_json: &str, ann_json: &str, d: usize) -> PyResult<Self> {
        let c = config::<FlyHashConfig>(config_json)?;
        let a = config::<AnnConfig>(ann_json)?;
        Ok(FlyAnnIndex { inner: Index::new(c, a, d).map_err(to_py)? })
    }

    /// Learns the thresholds from the rows of `x` (an empty index only).
    fn train(&mut self, py: Python<'_>, x: PyReadonlyArray2<'_, f32>) -> PyResult<()> {
        let x = Rows::of(&x, "the vectors")?;
        let index = &mut self.inner;
        detached(py, || index.train(&x.matrix(0..x.rows)))
    }

    /// Hashes and files the rows of `x` (one library call: all or none): `(first id, end id)`.
    fn add(&mut self, py: Python<'_>, x: PyReadonlyArray2<'_, f32>, device: &str) -> PyResult<(usize, usize)> {
        let x = Rows::of(&x, "the vectors")?;
        let mut index = self.inner.clone().with_ann_device(ann_device(device)?);
        let r = detached(py, || index.add(&x.matrix(0..x.rows)))?;
        self.inner = index;
        Ok((r.start, r.end))
    }

    /// The `k` nearest of each row of `x`, probing `probes` buckets per table:
    /// `(distances float32, ids int64)`, each `rows × k`, padded with +inf and −1.
    #[allow(clippy::type_complexity)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        k: usize,
        probes: usize,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<i64>>)> {
        let x = Rows::of(&x, "the queries")?;
        let index = &self.inner;
        let n = x.rows;
        let hits: Vec<(f32, i64)> = if n == 0 {
            detached(py, || index.search_probes(&x.matrix(0..0), k, probes).map(|_| Vec::new()))?
        } else {
            // A query costs about its candidates' re-ranking: a share of the database.
            let per_row = (index.len() as u128 + 1) * 64;
            chunked(py, n, k, (chunk_rows(neurobits::device::Target::CPU, per_row), 64), |r| {
                let h = index.search_probes(&x.matrix(r), k, probes)?;
                Ok(h.distances.into_iter().zip(h.ids).collect())
            })?
        };
        let (d, i): (Vec<f32>, Vec<i64>) = hits.into_iter().unzip();
        Ok((array2(py, d, n, k)?, array2(py, i, n, k)?))
    }

    /// Where later searches hash and re-rank (`cpu`, `cuda[:N]`, `auto`, `gpus[:N]`). A
    /// method of its own, not an argument of `search`: searches take the index shared (several
    /// threads may search at once), this takes it exclusively, briefly.
    fn set_device(&mut self, device: &str) -> PyResult<()> {
        let on = ann_device(device)?;
        if self.inner.ann_device() != on {
            // The rows the GPUs hold stay with the index until its device changes.
            self.inner = self.inner.clone().with_ann_device(on);
        }
        Ok(())
    }

    /// Vectors held.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The FlyHash configuration as JSON.
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.exact().hasher().config).expect("plain configuration")
    }

    /// The approximate index's configuration as JSON.
    #[getter]
    fn ann_json(&self) -> String {
        serde_json::to_string(self.inner.config()).expect("plain configuration")
    }

    /// Input dimension.
    #[getter]
    fn d(&self) -> PyResult<u32> {
        Ok(self.inner.exact().hasher().params().map_err(to_py)?.d)
    }
}
