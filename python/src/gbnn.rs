//! `_neurobits.Gbnn`: the GBNN associative memory (messages and probes as `int64` arrays, one
//! row per message, one column per cluster; −1 for an erased cluster).

use std::path::PathBuf;

use neurobits::gbnn::model::{Gbnn as Model, GbnnConfig};
use neurobits::gbnn::RuleArg;
use neurobits::model::Model as _;
use neurobits_core::gbnn::{Mode, Params};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::flyhash::saving;
use crate::{array2, chunk_rows, chunked, config, detached, slice, target, to_py};

/// A GBNN (the library's `gbnn::model::Gbnn`).
#[pyclass(module = "neurobits._neurobits")]
pub struct Gbnn {
    pub(crate) inner: Model,
}

/// `(states, symbols, iterations, converged)` of a retrieval.
type Retrieval<'py> =
    (Bound<'py, PyArray2<u64>>, Bound<'py, PyArray2<i64>>, Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<bool>>);

saving!(Gbnn, Model);

#[pymethods]
impl Gbnn {
    /// An empty memory with the configuration `config_json` (`GbnnConfig` as JSON).
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        Ok(Gbnn { inner: Model::new(config::<GbnnConfig>(config_json)?) })
    }

    /// Forgets everything, then stores the rows of `messages` (`K × C`).
    fn fit(&mut self, py: Python<'_>, messages: PyReadonlyArray2<'_, i64>) -> PyResult<()> {
        let m = slice(&messages, "the messages")?;
        let inner = &mut self.inner;
        detached(py, || inner.fit(m).map(|_| ()))
    }

    /// Stores the rows of `messages` on top of those stored before.
    fn partial_fit(&mut self, py: Python<'_>, messages: PyReadonlyArray2<'_, i64>) -> PyResult<()> {
        let m = slice(&messages, "the messages")?;
        let inner = &mut self.inner;
        detached(py, || inner.partial_fit(m).map(|_| ()))
    }

    /// Completes `probes` (`K × C`, −1 erased, −2 silent) with `rule`, `gamma`, `max_iter` on
    /// `device`, reading them as `mode` (`erasure`, `noisy` or `sparse`).
    /// `&self`: threads may retrieve from one memory at once (the GIL is released meanwhile);
    /// the options are this call's, the stored configuration is left alone.
    #[allow(clippy::too_many_arguments)]
    fn retrieve<'py>(
        &self,
        py: Python<'py>,
        probes: PyReadonlyArray2<'py, i64>,
        device: &str,
        rule: &str,
        gamma: u32,
        max_iter: u32,
        mode: &str,
    ) -> PyResult<Retrieval<'py>> {
        let rule = rule_arg(rule)?;
        let mode = Mode::from_name(mode)
            .ok_or_else(|| PyValueError::new_err(format!("mode: '{mode}' is not erasure, noisy or sparse")))?;
        let (k, c) = (probes.shape()[0], probes.shape()[1]);
        let p = slice(&probes, "the probes")?;
        let t = target(device)?;
        let params = Params { gamma, max_iter };
        let inner = &self.inner;
        let retrieve = |p: &[i64]| inner.retrieve_mode(p, rule, mode, &params, t);
        let words = self.words()?;
        if k == 0 || c == 0 {
            // Let the library name what is wrong.
            detached(py, || retrieve(p))?;
        }
        // States are the bulk: they are the chunks' output; symbols and stats gather beside.
        let (mut symbols, mut iters, mut conv) = (Vec::new(), Vec::new(), Vec::new());
        let (sy, it, cv) = (&mut symbols, &mut iters, &mut conv);
        // Work per probe (about a core-ns each): sum-of-sum sweeps all of W every update, the
        // other rules read its words once or twice (measured on Scenario 2).
        let (cl, l64) = ((c * c) as u128, self.inner.config.neurons as u128);
        let cost = match rule {
            RuleArg::SumOfSum => cl * l64 * 64 * (max_iter.max(1) as u128) / 20,
            _ => cl * l64.div_ceil(64) * 32,
        };
        // The core retrieves blocks of 32 probes per task: at least 40 blocks per thread in every
        // chunk, so that the chunk's last block keeps one thread busy for little of it.
        let blocks = 40 * 32 * rayon::current_num_threads();
        let states = chunked(py, k, c * words, (chunk_rows(t, cost).max(blocks), blocks), |r| {
            let out = retrieve(&p[r.start * c..r.end * c])?;
            sy.extend_from_slice(&out.symbols);
            it.extend(out.stats.iter().map(|s| s.iterations));
            cv.extend(out.stats.iter().map(|s| s.converged));
            Ok(out.states)
        })?;
        Ok((
            array2(py, states, k, c * words)?,
            array2(py, symbols, k, c)?,
            iters.into_pyarray(py),
            conv.into_pyarray(py),
        ))
    }

    /// Sets the retrieval options kept in the configuration (what `save` writes).
    fn set_options(&mut self, rule: &str, gamma: u32, max_iter: u32) -> PyResult<()> {
        self.inner.config.rule = rule_arg(rule)?;
        self.inner.config.gamma = gamma;
        self.inner.config.max_iter = max_iter;
        Ok(())
    }

    /// Messages stored so far.
    #[getter]
    fn stored(&self) -> PyResult<u64> {
        Ok(self.inner.network().map_err(to_py)?.stored())
    }

    /// The configuration as JSON (after `load`, the saved one).
    #[getter]
    fn config_json(&self) -> String {
        serde_json::to_string(&self.inner.config).expect("plain configuration")
    }

    /// Words per cluster state, ⌈L/64⌉.
    fn words(&self) -> PyResult<usize> {
        Ok(self.inner.config.neurons.div_ceil(64))
    }

    /// The adjacency matrix W as `(C·L) × (C·⌈L/64⌉)` words: row `c·L + i` holds neuron `i` of
    /// cluster `c`'s edges to every cluster, bit `j` of cluster `b`'s words for neuron `j`.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let net = self.inner.network().map_err(to_py)?;
        let g = net.geometry();
        let (rows, cols) = (g.clusters() * g.neurons_per_cluster(), g.row_words());
        array2(py, net.weights().to_vec(), rows, cols)
    }
}

/// Seconds of the library's `Gbnn::retrieve_with` alone on `probes` with this call's `rule`,
/// `gamma` and `max_iter` — the options `GBNN.retrieve` passes (the bench's reference: no Python
/// in the timed region; the model's own opened device, as the Python call uses).
#[pyfunction]
pub fn time_retrieve(
    py: Python<'_>,
    model: &Gbnn,
    probes: PyReadonlyArray2<'_, i64>,
    device: &str,
    rule: &str,
    gamma: u32,
    max_iter: u32,
) -> PyResult<f64> {
    let p = slice(&probes, "the probes")?;
    let rule = rule_arg(rule)?;
    let (inner, t, params) = (&model.inner, target(device)?, Params { gamma, max_iter });
    detached(py, || {
        let t0 = std::time::Instant::now();
        inner.retrieve_with(p, rule, &params, t)?;
        Ok(t0.elapsed().as_secs_f64())
    })
}

/// A rule by its name (`sum-of-sum`, `joint`, …), read as the configuration reads it.
fn rule_arg(rule: &str) -> PyResult<RuleArg> {
    config(&serde_json::Value::String(rule.into()).to_string())
}
