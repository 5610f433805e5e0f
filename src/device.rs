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

/// The CUDA backend: the same step functions as Rust PTX kernels (`gpu-host`). `W` is uploaded
/// per call; the bench keeps it resident instead.
pub struct Gpu {
    gpu: neurobits_gpu_host::Gpu,
}

impl Gpu {
    pub fn open() -> Result<Self> {
        Ok(Gpu { gpu: neurobits_gpu_host::Gpu::open(0)? })
    }
}

impl Backend for Gpu {
    fn name(&self) -> String {
        format!("gpu ({})", self.gpu.name())
    }

    fn retrieve(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch> {
        let out = self.gpu.upload(net)?.retrieve(probes, rule, params)?;
        Ok(Batch { states: out.states, stats: out.stats, kernel_seconds: Some(out.kernel_ms / 1e3) })
    }
}

/// `--device auto`: the GPU while it works, the CPU (saying so) when there is none or it runs
/// out of memory.
struct Auto {
    gpu: Option<Gpu>,
    cpu: Cpu,
}

impl Backend for Auto {
    fn name(&self) -> String {
        self.gpu.as_ref().map_or_else(|| self.cpu.name(), |g| g.name())
    }

    fn retrieve(&self, net: &Network, probes: &[u16], rule: Rule, params: &Params) -> Result<Batch> {
        if let Some(g) = &self.gpu {
            match g.retrieve(net, probes, rule, params) {
                Err(e) if matches!(e.downcast_ref(), Some(neurobits_gpu_host::GpuError::OutOfMemory(..))) => {
                    eprintln!("note: {e}; using the CPU");
                }
                r => return r,
            }
        }
        self.cpu.retrieve(net, probes, rule, params)
    }
}

/// Opens the backend `choice` asks for.
pub fn select(choice: DeviceChoice) -> Result<Box<dyn Backend>> {
    match choice {
        DeviceChoice::Cpu => Ok(Box::new(Cpu::new(None)?)),
        DeviceChoice::Gpu => Ok(Box::new(Gpu::open()?)),
        DeviceChoice::Auto => {
            let gpu = match Gpu::open() {
                Ok(g) => Some(g),
                Err(e) => {
                    eprintln!("note: {e}; using the CPU");
                    None
                }
            };
            Ok(Box::new(Auto { gpu, cpu: Cpu::new(None)? }))
        }
    }
}
