//! The GBNN on a [`Device`]: a network made resident once ([`Resident`]: W uploaded to the GPU,
//! or borrowed by the CPU pool) that answers any number of batches.

use anyhow::Result;
use neurobits_core::gbnn::batch::{
    retrieve_batch, retrieve_batch_decoded, retrieve_batch_decoded_in, retrieve_batch_in,
};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::{Mode, Network, Params, Rule, Stats};
use neurobits_core::Word;
use neurobits_gpu_host::gbnn::{DeviceNetwork, GbnnGpu};

use crate::device::{Cpu, Device};
use crate::io::output::{active_symbols, Active};
use crate::resident::Kept;

/// Final states and per-probe statistics of a batch retrieval.
pub struct Batch {
    /// `K` rows of [`neurobits_core::gbnn::Geometry::row_words`] words.
    pub states: Vec<Word>,
    /// Per-probe iterations and convergence.
    pub stats: Vec<Stats>,
    /// Time spent in kernels alone, where the backend can tell it apart from transfers.
    pub kernel_seconds: Option<f64>,
}

impl Cpu {
    /// Retrieves `probes` (`K·C` symbols) from `net` on this pool (the core's rayon driver).
    pub fn retrieve(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch> {
        let g = net.geometry();
        let k = probes.len() / g.clusters();
        let rw = g.row_words();
        crate::io::memory::ensure_fits("the final states", k as u128 * rw as u128 * 8)?;
        let mut states = vec![0; k * rw];
        let mut stats = vec![Stats::default(); k];
        self.install(|| retrieve_batch(g, net.weights(), probes, rule, params, &mut states, &mut stats))?;
        Ok(Batch { states, stats, kernel_seconds: None })
    }
}

/// A network resident on a device: W is uploaded once, when the handle is made.
///
/// ```
/// use neurobits::device::{Device, DeviceChoice};
/// use neurobits_core::gbnn::{Network, Params, Rule, ERASED};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let dev = Device::open(DeviceChoice::Cpu)?;
/// let resident = dev.gbnn(&net)?;
/// let out = resident.retrieve(&[ERASED, 2, 0], Rule::Joint, &Params::default())?;
/// assert_eq!(out.states, [0b010, 0b100, 0b001]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub struct Resident<'d> {
    device: &'d Device,
    net: &'d Network,
    gpu: Option<OnGpu<'d>>,
}

/// W on the GPU: uploaded for this handle, or kept by a model between calls.
enum OnGpu<'d> {
    Made(Box<DeviceNetwork<'d>>),
    Kept(std::sync::Arc<GbnnGpu>),
}

impl<'d> std::ops::Deref for OnGpu<'d> {
    type Target = DeviceNetwork<'d>;
    fn deref(&self) -> &DeviceNetwork<'d> {
        match self {
            OnGpu::Made(d) => d,
            OnGpu::Kept(d) => d,
        }
    }
}

impl Device {
    /// Makes `net` resident: uploads W when this device has a GPU (under `auto`, a W that does
    /// not fit stays on the CPU, with a note).
    pub fn gbnn<'d>(&'d self, net: &'d Network) -> Result<Resident<'d>> {
        let gpu = self.run(|g| Ok(Some(OnGpu::Made(Box::new(g.upload(net)?)))), |_| Ok(None))?;
        Ok(Resident { device: self, net, gpu })
    }

    /// [`Device::gbnn`] with W kept in `kept` between calls: uploaded on the first call for this
    /// device, reused after (a model's handle; the model empties `kept` when `net` changes).
    pub(crate) fn gbnn_kept<'d>(
        self: &'d std::sync::Arc<Device>,
        net: &'d Network,
        kept: &Kept<GbnnGpu>,
    ) -> Result<Resident<'d>> {
        let gpu = match self.gpu_shared() {
            Some(g) => self
                .run(|_| Ok(Some(OnGpu::Kept(kept.get(self, || GbnnGpu::upload_to(g.clone(), net))?))), |_| Ok(None))?,
            None => None,
        };
        Ok(Resident { device: self, net, gpu })
    }
}

impl Resident<'_> {
    /// Where the batches run.
    pub fn name(&self) -> String {
        match &self.gpu {
            Some(_) => self.device.name(),
            None => self.device.cpu().name(),
        }
    }

    /// Retrieves `probes` (`K·C` symbols, checked by the caller) from the resident network.
    pub fn retrieve(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch> {
        match &self.gpu {
            Some(d) => self.device.run(
                |_| {
                    // The final states come back to host memory (the CPU path checks its own).
                    let g = self.net.geometry();
                    let k = (probes.len() / g.clusters()) as u128;
                    crate::io::memory::ensure_fits("the final states", k * (g.row_words() as u128 * 8 + 8))?;
                    let out = d.retrieve(probes, rule, params)?;
                    Ok(Batch { states: out.states, stats: out.stats, kernel_seconds: Some(out.kernel_ms / 1e3) })
                },
                |cpu| cpu.retrieve(self.net, probes, rule, params),
            ),
            None => self.device.cpu().retrieve(self.net, probes, rule, params),
        }
    }
}

/// Compact results of a batch retrieval (see [`neurobits_core::gbnn::decode`]).
pub struct DecodedBatch {
    /// `K · C` decoded clusters: lowest active symbol and active count.
    pub decoded: Vec<Decoded>,
    /// Per-probe iterations and convergence.
    pub stats: Vec<Stats>,
    /// Time spent in kernels alone, where the backend can tell it apart from transfers.
    pub kernel_seconds: Option<f64>,
}

impl Cpu {
    /// [`Cpu::retrieve`] with compact results: no `K`-row state buffer at all.
    pub fn retrieve_decoded(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<DecodedBatch> {
        let g = net.geometry();
        let k = probes.len() / g.clusters();
        crate::io::memory::ensure_fits("the decoded results", k as u128 * (g.clusters() as u128 * 4 + 8))?;
        let mut decoded = vec![Decoded::default(); k * g.clusters()];
        let mut stats = vec![Stats::default(); k];
        self.install(|| retrieve_batch_decoded(g, net.weights(), probes, rule, params, &mut decoded, &mut stats))?;
        Ok(DecodedBatch { decoded, stats, kernel_seconds: None })
    }
}

impl Resident<'_> {
    /// Retrieves `probes` with compact results: on a GPU, 4 bytes per cluster come back
    /// instead of the dense states.
    pub fn retrieve_decoded(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<DecodedBatch> {
        match &self.gpu {
            Some(d) => self.device.run(
                |_| {
                    let g = self.net.geometry();
                    let k = (probes.len() / g.clusters()) as u128;
                    crate::io::memory::ensure_fits("the decoded results", k * (g.clusters() as u128 * 4 + 8))?;
                    let out = d.retrieve_decoded(probes, rule, params)?;
                    Ok(DecodedBatch {
                        decoded: out.decoded,
                        stats: out.stats,
                        kernel_seconds: Some(out.kernel_ms / 1e3),
                    })
                },
                |cpu| cpu.retrieve_decoded(self.net, probes, rule, params),
            ),
            None => self.device.cpu().retrieve_decoded(self.net, probes, rule, params),
        }
    }

    /// Every cluster's active symbols, exactly, moving compact results: a probe whose clusters
    /// all have at most one active neuron is answered from its decoded form; only the probes
    /// with an ambiguous cluster are retrieved again with dense states.
    pub fn retrieve_active(&self, probes: &[u16], rule: Rule, params: &Params) -> Result<(Vec<Active>, Vec<Stats>)> {
        let g = self.net.geometry();
        if self.gpu.is_none() {
            // Nothing crosses a bus on the CPU: the dense states once, not twice for ambiguity.
            let dense = self.retrieve(probes, rule, params)?;
            return Ok((dense.states.chunks(g.row_words()).map(|v| active_symbols(g, v)).collect(), dense.stats));
        }
        let out = self.retrieve_decoded(probes, rule, params)?;
        let rows =
            active_from_decoded(g, probes, &out.decoded, |again| Ok(self.retrieve(again, rule, params)?.states))?;
        Ok((rows, out.stats))
    }

    /// [`Resident::retrieve`] in `mode` (noisy or sparse probes; the core's `retrieve_batch_in`,
    /// on the GPU `DeviceNetwork::retrieve_mode`, state for state).
    pub fn retrieve_in(&self, probes: &[u16], rule: Rule, mode: Mode, params: &Params) -> Result<Batch> {
        if mode == Mode::Erasure {
            return self.retrieve(probes, rule, params);
        }
        let g = self.net.geometry();
        let k = (probes.len() / g.clusters()) as u128;
        let on_cpu = |cpu: &Cpu| -> Result<Batch> {
            crate::io::memory::ensure_fits("the final states", k * g.row_words() as u128 * 8)?;
            let (mut states, mut stats) = (vec![0; k as usize * g.row_words()], vec![Stats::default(); k as usize]);
            let w = self.net.weights();
            cpu.install(|| retrieve_batch_in(g, w, probes, rule, mode, params, &mut states, &mut stats))?;
            Ok(Batch { states, stats, kernel_seconds: None })
        };
        match &self.gpu {
            Some(d) => self.device.run(
                |_| {
                    crate::io::memory::ensure_fits("the final states", k * (g.row_words() as u128 * 8 + 8))?;
                    let out = d.retrieve_mode(probes, rule, mode, params)?;
                    Ok(Batch { states: out.states, stats: out.stats, kernel_seconds: Some(out.kernel_ms / 1e3) })
                },
                on_cpu,
            ),
            None => on_cpu(self.device.cpu()),
        }
    }

    /// [`Resident::retrieve_decoded`] in `mode` ([`Resident::retrieve_in`]).
    pub fn retrieve_decoded_in(&self, probes: &[u16], rule: Rule, mode: Mode, params: &Params) -> Result<DecodedBatch> {
        let g = self.net.geometry();
        let k = (probes.len() / g.clusters()) as u128;
        let on_cpu = |cpu: &Cpu| -> Result<DecodedBatch> {
            crate::io::memory::ensure_fits("the decoded results", k * (g.clusters() as u128 * 4 + 8))?;
            let mut decoded = vec![Decoded::default(); k as usize * g.clusters()];
            let mut stats = vec![Stats::default(); k as usize];
            let w = self.net.weights();
            cpu.install(|| retrieve_batch_decoded_in(g, w, probes, rule, mode, params, &mut decoded, &mut stats))?;
            Ok(DecodedBatch { decoded, stats, kernel_seconds: None })
        };
        match &self.gpu {
            Some(d) => self.device.run(
                |_| {
                    crate::io::memory::ensure_fits("the decoded results", k * (g.clusters() as u128 * 4 + 8))?;
                    let out = d.retrieve_decoded_mode(probes, rule, mode, params)?;
                    let kernel_seconds = Some(out.kernel_ms / 1e3);
                    Ok(DecodedBatch { decoded: out.decoded, stats: out.stats, kernel_seconds })
                },
                on_cpu,
            ),
            None => on_cpu(self.device.cpu()),
        }
    }

    /// [`Resident::retrieve_active`] in `mode` ([`Resident::retrieve_in`]): on a GPU, compact
    /// results, and dense states only for the probes with an ambiguous cluster.
    pub fn retrieve_active_in(
        &self,
        probes: &[u16],
        rule: Rule,
        mode: Mode,
        params: &Params,
    ) -> Result<(Vec<Active>, Vec<Stats>)> {
        if mode == Mode::Erasure {
            return self.retrieve_active(probes, rule, params);
        }
        let g = self.net.geometry();
        if self.gpu.is_none() {
            let dense = self.retrieve_in(probes, rule, mode, params)?;
            return Ok((dense.states.chunks(g.row_words()).map(|v| active_symbols(g, v)).collect(), dense.stats));
        }
        let out = self.retrieve_decoded_in(probes, rule, mode, params)?;
        let again = |again: &[u16]| Ok(self.retrieve_in(again, rule, mode, params)?.states);
        Ok((active_from_decoded(g, probes, &out.decoded, again)?, out.stats))
    }
}

/// Every cluster's active symbols from compact results: a probe whose clusters all have at most
/// one active neuron is answered from `decoded`; the probes with an ambiguous cluster go to
/// `dense` (which returns their final states) and are read from those.
///
/// ```
/// use neurobits::device::Cpu;
/// use neurobits::gbnn::backend::active_from_decoded;
/// use neurobits_core::gbnn::{Network, Params, Rule, ERASED};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// net.store(&[0, 2, 0]).unwrap();
/// let (cpu, probes, p) = (Cpu::new(None)?, [ERASED, 2, 0], Params::default());
/// let decoded = cpu.retrieve_decoded(&net, &probes, Rule::SumOfMax, &p)?.decoded;
/// let rows = active_from_decoded(net.geometry(), &probes, &decoded, |again| {
///     Ok(cpu.retrieve(&net, again, Rule::SumOfMax, &p)?.states)
/// })?;
/// assert_eq!(rows, [vec![vec![0, 1], vec![2], vec![0]]]); // cluster 0 is ambiguous
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn active_from_decoded(
    g: &neurobits_core::gbnn::Geometry,
    probes: &[u16],
    decoded: &[Decoded],
    dense: impl FnOnce(&[u16]) -> Result<Vec<neurobits_core::Word>>,
) -> Result<Vec<Active>> {
    let c = g.clusters();
    let mut rows: Vec<Active> = decoded
        .chunks(c)
        .map(|p| p.iter().map(|d| d.symbol().map(|s| vec![s as usize]).unwrap_or_default()).collect())
        .collect();
    let ambiguous: Vec<usize> =
        (0..rows.len()).filter(|&p| decoded[p * c..(p + 1) * c].iter().any(|d| d.count() > 1)).collect();
    if !ambiguous.is_empty() {
        let again: Vec<u16> = ambiguous.iter().flat_map(|&p| probes[p * c..(p + 1) * c].iter().copied()).collect();
        let states = dense(&again)?;
        for (&p, v) in ambiguous.iter().zip(states.chunks(g.row_words())) {
            rows[p] = active_symbols(g, v);
        }
    }
    Ok(rows)
}
