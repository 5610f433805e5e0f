//! The GBNN as a model: `fit` stores messages (clusters × neurons, one symbol per cluster),
//! `partial_fit` stores more, `retrieve` completes probes with erased clusters. Saved models
//! carry the network in the GBNN network format ([`crate::io::netfile`]); a bare network file
//! (`gbnn store`) loads too, with the default rule.

use neurobits_core::gbnn::{Mode, Network, Params, Stats, ERASED, SILENT};
use neurobits_core::Word;
use serde::{Deserialize, Serialize};

use super::RuleArg;
use crate::device::{DeviceCache, Target};
use crate::error::{Error, Result};
use crate::io::model_file::{self, Saved};
use crate::io::netfile;
use crate::model::Model;
use crate::resident::Kept;
use neurobits_gpu_host::gbnn::GbnnGpu;

/// The GBNN's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GbnnConfig {
    /// Clusters C (symbols per message).
    pub clusters: usize,
    /// Neurons per cluster L (symbols of the alphabet).
    pub neurons: usize,
    /// Retrieval rule.
    pub rule: RuleArg,
    /// Sum-of-sum's reinforcement factor γ (the memory effect).
    pub gamma: u32,
    /// Sum-of-sum's update limit t_max (at most 10 000).
    pub max_iter: u32,
}

impl Default for GbnnConfig {
    fn default() -> Self {
        GbnnConfig { clusters: 8, neurons: 256, rule: RuleArg::Joint, gamma: 2, max_iter: 20 }
    }
}

impl GbnnConfig {
    /// Checks every field (the core's limits on C and L included).
    pub fn validate(&self) -> Result<()> {
        if self.max_iter > crate::validate::MAX_ITER {
            return Err(Error::config(
                "max_iter",
                self.max_iter,
                format!("must be at most {}", crate::validate::MAX_ITER),
            ));
        }
        neurobits_core::gbnn::Geometry::new(self.clusters, self.neurons)?;
        Ok(())
    }
}

/// What a retrieval gives: each probe's final state and, per cluster, the one symbol left
/// active (−1 where none or several are).
#[derive(Clone, Debug, PartialEq)]
pub struct Retrieved {
    /// `K` rows of `C·⌈L/64⌉` words: each cluster's active neurons as bits.
    pub states: Vec<Word>,
    /// `K × C` symbols, −1 where a cluster is not down to one active neuron.
    pub symbols: Vec<i64>,
    /// Per probe: updates run and whether the state converged.
    pub stats: Vec<Stats>,
}

/// A Gripon–Berrou associative memory.
///
/// ```
/// use neurobits::gbnn::model::{Gbnn, GbnnConfig};
/// let mut m = Gbnn::new(GbnnConfig { clusters: 3, neurons: 4, ..Default::default() });
/// m.fit(&[1, 2, 0, 3, 3, 1])?; // two messages
/// let out = m.retrieve(&[-1, 2, 0, 3, -1, 1])?; // erasures as -1
/// assert_eq!(out.symbols, [1, 2, 0, 3, 3, 1]);
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Gbnn {
    /// The configuration, as given.
    pub config: GbnnConfig,
    /// Where retrieval runs.
    pub device: Target,
    opened: DeviceCache,
    net: Option<Network>,
    /// W as last uploaded to a GPU: retrievals after the first reuse it; storing drops it.
    resident: Kept<GbnnGpu>,
}

impl Gbnn {
    /// An empty memory retrieving on the CPU.
    pub fn new(config: GbnnConfig) -> Self {
        Gbnn { config, device: Target::CPU, opened: DeviceCache::default(), net: None, resident: Kept::default() }
    }

    /// The same, retrieving on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.device = device;
        self
    }

    /// The network (W and the count of stored messages).
    pub fn network(&self) -> Result<&Network> {
        self.net.as_ref().ok_or(Error::NotFitted("GBNN"))
    }

    /// Forgets everything, then stores `messages` (`K·C` symbols, each below L).
    pub fn fit(&mut self, messages: &[i64]) -> Result<&mut Self> {
        self.net = None;
        self.partial_fit(messages)
    }

    /// Stores `messages` on top of those stored before.
    pub fn partial_fit(&mut self, messages: &[i64]) -> Result<&mut Self> {
        self.config.validate()?;
        self.resident = Kept::default();
        let (c, l) = (self.config.clusters, self.config.neurons);
        if messages.is_empty() || !messages.len().is_multiple_of(c) {
            return Err(Error::input(
                "the messages",
                format!("{} symbols is not a whole number of {c}-symbol messages", messages.len()),
            ));
        }
        let syms = symbols(messages, c, l, false)?;
        if self.net.is_none() {
            crate::io::memory::ensure_fits(
                &format!("W of {c}x{l} neurons"),
                super::geometry(c, l)?.weight_words() as u128 * 8,
            )?;
            self.net = Some(Network::new(c, l)?);
        }
        let net = self.net.as_mut().expect("made above");
        for m in syms.chunks(c) {
            net.store(m)?;
        }
        Ok(self)
    }

    /// Completes `probes` (`K·C` symbols, −1 for an erased cluster) with the configured rule.
    pub fn retrieve(&self, probes: &[i64]) -> Result<Retrieved> {
        let params = Params { gamma: self.config.gamma, max_iter: self.config.max_iter };
        self.retrieve_with(probes, self.config.rule, &params, self.device)
    }

    /// [`Gbnn::retrieve`] with the retrieval options of this call instead of the configured ones
    /// (`&self`: several threads may retrieve from one memory at once, each with its options).
    pub fn retrieve_with(&self, probes: &[i64], rule: RuleArg, params: &Params, device: Target) -> Result<Retrieved> {
        self.retrieve_mode(probes, rule, Mode::Erasure, params, device)
    }

    /// [`Gbnn::retrieve_with`] in `mode`: [`Mode::Noisy`] (given symbols may be wrong) or
    /// [`Mode::Sparse`] (−2 marks a silent cluster; global winner-take-all), on the CPU or a GPU.
    ///
    /// ```
    /// use neurobits::gbnn::{model::{Gbnn, GbnnConfig}, RuleArg};
    /// use neurobits::device::Target;
    /// use neurobits_core::gbnn::{Mode, Params};
    /// let mut m = Gbnn::new(GbnnConfig { clusters: 4, neurons: 4, ..Default::default() });
    /// m.fit(&[1, 2, 0, 3])?;
    /// let p = Params { gamma: 1, max_iter: 20 };
    /// // Cluster 0 wrong (0 instead of 1): corrected.
    /// let out = m.retrieve_mode(&[0, 2, 0, 3], RuleArg::SumOfSum, Mode::Noisy, &p, Target::CPU)?;
    /// assert_eq!(out.symbols, [1, 2, 0, 3]);
    /// # Ok::<(), neurobits::Error>(())
    /// ```
    pub fn retrieve_mode(
        &self,
        probes: &[i64],
        rule: RuleArg,
        mode: Mode,
        params: &Params,
        device: Target,
    ) -> Result<Retrieved> {
        let net = self.network()?;
        let g = *net.geometry();
        if probes.is_empty() || !probes.len().is_multiple_of(g.clusters()) {
            let c = g.clusters();
            return Err(Error::input(
                "the probes",
                format!("{} symbols is not a whole number of {c}-symbol probes", probes.len()),
            ));
        }
        let probes = symbols(probes, g.clusters(), g.neurons_per_cluster(), true)?;
        let device = self.opened.get(device)?;
        let rule: neurobits_core::gbnn::Rule = rule.into();
        if !rule.supports(mode) {
            return Err(Error::config("rule", rule.name(), format!("is not defined for {} probes", mode.name())));
        }
        if mode != Mode::Sparse && probes.contains(&SILENT) {
            return Err(Error::input("the probes", "a silent cluster (-2) needs the sparse mode"));
        }
        // W stays on the GPU between calls (a chunked caller retrieves many times).
        let batch = device.gbnn_kept(net, &self.resident)?.retrieve_in(&probes, rule, mode, params)?;
        let symbols = batch
            .states
            .chunks(g.row_words().max(1))
            .flat_map(|v| crate::io::output::active_symbols(&g, v))
            .map(|a| if a.len() == 1 { a[0] as i64 } else { -1 })
            .collect();
        Ok(Retrieved { states: batch.states, symbols, stats: batch.stats })
    }
}

/// Symbols as the core's `u16`s, −1 as an erasure where `probes`, −2 as a silent cluster (sparse).
fn symbols(v: &[i64], c: usize, l: usize, probes: bool) -> Result<Vec<u16>> {
    let what = if probes { "the probes" } else { "the messages" };
    v.iter()
        .enumerate()
        .map(|(i, &s)| match s {
            -1 if probes => Ok(ERASED),
            -2 => Ok(SILENT),
            s if (0..l as i64).contains(&s) => Ok(s as u16),
            s => Err(Error::input(what, format!("cluster {} of row {} is {s}, not in 0..{l}", i % c + 1, i / c + 1))),
        })
        .collect()
}

impl Model for Gbnn {
    const KIND: &'static str = "gbnn";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let mut payload = Vec::new();
        netfile::encode(&mut payload, self.network()?)?;
        let v = serde_json::to_value(&self.config).map_err(|e| Error::input("gbnn", e.to_string()))?;
        Ok((v, payload))
    }

    fn from_parts(saved: &Saved, name: &str) -> Result<Self> {
        let config: GbnnConfig = model_file::config(saved, name)?;
        let net = netfile::decode(&saved.payload[..], saved.payload.len() as u64, name)?;
        let g = net.geometry();
        if (g.clusters(), g.neurons_per_cluster()) != (config.clusters, config.neurons) {
            return Err(Error::input(name, "the network's size differs from its configuration (a corrupted file?)"));
        }
        Ok(Gbnn {
            config,
            device: Target::CPU,
            opened: DeviceCache::default(),
            net: Some(net),
            resident: Kept::default(),
        })
    }

    fn from_bytes(b: &[u8], name: &str) -> Result<Self> {
        if b.starts_with(netfile::MAGIC) {
            // A network file of `gbnn store` (format 1): the network, with the default rule.
            let net = netfile::decode(b, b.len() as u64, name)?;
            let g = *net.geometry();
            let config = GbnnConfig { clusters: g.clusters(), neurons: g.neurons_per_cluster(), ..Default::default() };
            return Ok(Gbnn {
                config,
                device: Target::CPU,
                opened: DeviceCache::default(),
                net: Some(net),
                resident: Kept::default(),
            });
        }
        let saved = model_file::decode(b, name, Self::KIND)?;
        if saved.end != b.len() {
            return Err(Error::input(name, format!("{} bytes after the end of the model", b.len() - saved.end)));
        }
        Self::from_parts(&saved, name)
    }
}
