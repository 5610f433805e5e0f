//! Compute backends behind one trait: choosing a device is one argument (`--device`).

use anyhow::{Context, Result};
use clap::ValueEnum;
use neurobits_core::{batch::retrieve_batch, Network, Params, Rule, Stats, Word};

/// What `--device` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DeviceChoice {
    /// All CPU cores (rayon).
    Cpu,
    /// The first CUDA GPU; an error if there is none.
    Gpu,
    /// The GPU when one is present, else the CPU (and say so).
    Auto,
}

/// Final states and per-probe statistics of a batch retrieval.
pub struct Batch {
    /// `K` rows of [`neurobits_core::Geometry::row_words`] words.
    pub states: Vec<Word>,
    pub stats: Vec<Stats>,
    /// Time spent in kernels alone, where the backend can tell it apart from transfers.
    pub kernel_seconds: Option<f64>,
}

/// One implementation of batch retrieval.
pub trait Backend {
    /// Human-readable name, e.g. `cpu (2 threads)`.
    fn name(&self) -> String;
    /// Retrieves `probes` (`K·C` symbols, already checked) from `net`.
    fn retrieve(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch>;
}

/// The rayon CPU driver over the core step functions.
pub struct Cpu {
    pool: rayon::ThreadPool,
}

impl Cpu {
    /// `threads = None`: one thread per core.
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(t) = threads {
            b = b.num_threads(t);
        }
        Ok(Cpu { pool: b.build().context("cannot start the CPU thread pool")? })
    }
}

impl Backend for Cpu {
    fn name(&self) -> String {
        format!("cpu ({} threads)", self.pool.current_num_threads())
    }

    fn retrieve(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch> {
        let g = net.geometry();
        let k = probes.len() / g.clusters();
        let mut states = vec![0; k * g.row_words()];
        let mut stats = vec![Stats::default(); k];
        self.pool
            .install(|| retrieve_batch(g, net.weights(), probes, rule, params, &mut states, &mut stats))?;
        Ok(Batch { states, stats, kernel_seconds: None })
    }
}

/// Opens the backend `choice` asks for.
pub fn select(choice: DeviceChoice) -> Result<Box<dyn Backend>> {
    match choice {
        DeviceChoice::Cpu => Ok(Box::new(Cpu::new(None)?)),
        DeviceChoice::Gpu => anyhow::bail!("no GPU backend in this build"),
        DeviceChoice::Auto => {
            eprintln!("note: no GPU backend in this build; using the CPU");
            Ok(Box::new(Cpu::new(None)?))
        }
    }
}
