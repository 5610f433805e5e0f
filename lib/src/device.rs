//! Where a model runs: the one device-selection policy of every command (`--device`), and the
//! CPU thread pool. Each model builds its device-resident handle on a [`Device`] (for the GBNN:
//! [`crate::gbnn::backend`]), uploading once and computing many times.

use anyhow::{Context, Result};
use neurobits_gpu_host::{Gpu, GpuError};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What `--device` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum DeviceChoice {
    /// All CPU cores (rayon).
    Cpu,
    /// The first CUDA GPU; an error if there is none.
    Gpu,
    /// The GPU when one is present and can do the work, else the CPU (and say so).
    Auto,
}

/// Where a model computes: the one device choice of every model in the library (and of the
/// CLI's `--device`, `--threads`). Parsed from `cpu`, `gpu`, `cuda`, `gpu:N`, `cuda:N` or `auto`.
///
/// ```
/// use neurobits::device::Target;
/// assert_eq!("cuda:1".parse::<Target>(), Ok(Target::Gpu(1)));
/// assert_eq!("cpu".parse::<Target>(), Ok(Target::Cpu { threads: None }));
/// assert!("tpu".parse::<Target>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Target {
    /// The CPU: `threads` rayon threads (`None`: one per core).
    Cpu {
        /// Threads; `None` for one per core.
        threads: Option<usize>,
    },
    /// CUDA GPU `ordinal` (0 is the first); an error if it does not open.
    Gpu(usize),
    /// The first GPU when one opens and can do the work, else the CPU (with a note on stderr).
    #[default]
    Auto,
}

impl Target {
    /// All CPU cores.
    pub const CPU: Target = Target::Cpu { threads: None };

    /// The same choice with `threads` CPU threads (a GPU choice keeps its CPU pool for the host
    /// stages).
    pub fn with_threads(self, threads: Option<usize>) -> Target {
        match self {
            Target::Cpu { .. } => Target::Cpu { threads },
            other => other,
        }
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        let ordinal = |n: &str| n.parse::<usize>().map_err(|_| format!("device '{s}': '{n}' is not a GPU index"));
        match s {
            "cpu" => Ok(Target::CPU),
            "gpu" | "cuda" => Ok(Target::Gpu(0)),
            "auto" => Ok(Target::Auto),
            _ => match s.split_once(':') {
                Some(("gpu" | "cuda", n)) => Ok(Target::Gpu(ordinal(n)?)),
                _ => Err(format!("device '{s}': expected cpu, gpu, cuda, gpu:N, cuda:N or auto")),
            },
        }
    }
}

impl From<DeviceChoice> for Target {
    fn from(c: DeviceChoice) -> Target {
        match c {
            DeviceChoice::Cpu => Target::CPU,
            DeviceChoice::Gpu => Target::Gpu(0),
            DeviceChoice::Auto => Target::Auto,
        }
    }
}

/// The instruction sets a CPU hot path may use, best last. The release binary targets baseline
/// x86-64, so each hot loop is compiled again for these features (`#[target_feature]`, plain
/// `std::arch`) and the version is chosen at run time (`is_x86_feature_detected!`); every version
/// gives the same integers (tests force each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Baseline x86-64 (or another architecture).
    Portable,
    /// POPCNT and AVX2.
    Avx2,
    /// AVX-512 F/BW/VL with VPOPCNTDQ (Ice Lake and later, Zen 4 and later).
    Avx512,
}

/// The best [`Simd`] level this CPU has, capped by `NEUROBITS_SIMD=portable|avx2|avx512` (tests
/// use it to force each path; `NEUROBITS_NO_SIMD` = `portable`). Asking for more than the CPU
/// has gives what it has.
///
/// ```
/// use neurobits::device::{simd_level, Simd};
/// assert!(simd_level() >= Simd::Portable);
/// ```
pub fn simd_level() -> Simd {
    let cap = match std::env::var("NEUROBITS_SIMD").as_deref() {
        _ if std::env::var_os("NEUROBITS_NO_SIMD").is_some() => Simd::Portable,
        Ok("portable") => Simd::Portable,
        Ok("avx2") => Simd::Avx2,
        _ => Simd::Avx512,
    };
    simd_detected().min(cap)
}

/// The best [`Simd`] level this CPU has, whatever the environment says.
///
/// ```
/// assert!(neurobits::device::simd_detected() >= neurobits::device::simd_level());
/// ```
pub fn simd_detected() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f")
            && has!("avx512bw")
            && has!("avx512vl")
            && has!("avx512vpopcntdq")
            && has!("popcnt")
            && has!("avx2")
        {
            Simd::Avx512
        } else if has!("popcnt") && has!("avx2") {
            Simd::Avx2
        } else {
            Simd::Portable
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Simd::Portable
}

/// Whether the CPU hot paths may take their POPCNT/AVX2 versions ([`simd_level`] ≥ AVX2).
///
/// ```
/// # // The answer depends on the CPU; it is only ever false without x86-64.
/// let _ = neurobits::device::simd();
/// ```
pub fn simd() -> bool {
    simd_level() >= Simd::Avx2
}

/// The thread count set by [`set_cpu_threads`] (0: not set).
static CPU_THREADS: AtomicUsize = AtomicUsize::new(0);

/// The most CPU threads one pool gets: 4 per core, at most 1024. Compute-bound work gains
/// nothing past one thread per core; the bound keeps `--threads 4096` or
/// `RAYON_NUM_THREADS=100000` from spawning threads until the system refuses.
///
/// ```
/// let max = neurobits::device::max_cpu_threads();
/// assert!(max >= 4 && max <= 1024);
/// ```
pub fn max_cpu_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(4).min(1024)
}

/// The thread count a pool gets for `requested` (else `RAYON_NUM_THREADS` when set to a
/// number ≥ 1, as rayon reads it, else one per core), bounded by [`max_cpu_threads`]; with a
/// warning (one line) when the bound cut it.
///
/// ```
/// let max = neurobits::device::max_cpu_threads();
/// assert_eq!(neurobits::device::cpu_threads(Some(1)), (1, None));
/// let (n, warning) = neurobits::device::cpu_threads(Some(100_000));
/// assert_eq!(n, max);
/// assert!(warning.unwrap().contains("100000"));
/// ```
pub fn cpu_threads(requested: Option<usize>) -> (usize, Option<String>) {
    let env = || std::env::var("RAYON_NUM_THREADS").ok()?.trim().parse::<usize>().ok().filter(|&n| n > 0);
    let (n, what) = match requested {
        Some(n) => (n, "--threads"),
        None => match env() {
            Some(n) => (n, "RAYON_NUM_THREADS"),
            None => (std::thread::available_parallelism().map_or(1, |n| n.get()), "the core count"),
        },
    };
    let max = max_cpu_threads();
    if n > max {
        (max, Some(format!("{what} = {n} is more than {max} (4 per core, at most 1024): using {max} threads")))
    } else {
        (n, None)
    }
}

/// Sets the CPU thread count of the whole process (the CLI's `--threads`): rayon's global pool,
/// which the drivers that do not take a [`Cpu`] run on, is built with `n` threads, and every
/// [`Cpu`] opened afterwards with `threads = None` gets `n` too. Call it once, before any
/// parallel work: rayon's global pool can be built only once. `n` is bounded as
/// [`cpu_threads`] says.
///
/// ```
/// assert!(neurobits::device::set_cpu_threads(0).is_err());
/// ```
pub fn set_cpu_threads(n: usize) -> crate::Result<()> {
    if n == 0 {
        return Err(crate::Error::config("threads", 0, "must be at least 1"));
    }
    init_cpu_threads(Some(n)).map(drop)
}

/// Builds rayon's global pool now, with [`cpu_threads`]`(requested)` threads, instead of
/// letting rayon build it on first use: rayon would take `RAYON_NUM_THREADS` unbounded and
/// panic if a thread cannot start. Returns the bound's warning, if any. A thread that cannot
/// start is an I/O error ([`Error::is_io`](crate::Error::is_io): exit code 1 in the CLI).
pub fn init_cpu_threads(requested: Option<usize>) -> crate::Result<Option<String>> {
    let (n, warning) = cpu_threads(requested);
    rayon::ThreadPoolBuilder::new().num_threads(n).build_global().map_err(|e| crate::Error::Io {
        name: format!("cannot start the CPU thread pool of {n} threads"),
        error: std::io::Error::other(e.to_string()),
    })?;
    CPU_THREADS.store(n, Ordering::Relaxed);
    Ok(warning)
}

/// A rayon thread pool: the CPU backend of every model.
pub struct Cpu {
    pool: rayon::ThreadPool,
}

impl Cpu {
    /// `threads = None`: the count of [`set_cpu_threads`] if it was called, else one thread per
    /// core.
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let mut b = rayon::ThreadPoolBuilder::new();
        let set = CPU_THREADS.load(Ordering::Relaxed);
        // Always a count: rayon's own default reads `RAYON_NUM_THREADS` without a bound.
        let (t, _) = cpu_threads(threads.or((set > 0).then_some(set)));
        b = b.num_threads(t);
        Ok(Cpu { pool: b.build().context("cannot start the CPU thread pool")? })
    }

    /// Human-readable name, e.g. `cpu (2 threads)`.
    pub fn name(&self) -> String {
        format!("cpu ({} threads)", self.pool.current_num_threads())
    }

    /// Runs `f` on this pool's threads, under the caller's cancel token.
    pub fn install<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let token = crate::cancel::current();
        self.pool.install(|| crate::cancel::with_opt(token, f))
    }
}

/// An opened device: the CPU pool always, the GPU when one was asked for and opened.
///
/// The policy, in one place: `cpu` never touches a GPU; `gpu` fails when there is none, and
/// every GPU error is an error; `auto` uses the GPU when one opens, and when it cannot do a piece
/// of work (out of memory, a batch too large for one launch) says so on stderr and does that work
/// on the CPU.
pub struct Device {
    cpu: Cpu,
    /// Shared, so that a model can keep a network resident on it past one call.
    gpu: Option<std::sync::Arc<Gpu>>,
    fallback: bool,
}

impl Device {
    /// Opens what `target` asks for: the CPU pool with its threads, the GPU by its ordinal.
    pub fn open_target(target: Target) -> crate::Result<Device> {
        match target {
            Target::Cpu { threads } => {
                if threads == Some(0) {
                    return Err(crate::Error::config("threads", 0, "must be at least 1"));
                }
                Ok(Device { cpu: Cpu::new(threads)?, gpu: None, fallback: false })
            }
            Target::Gpu(i) => {
                Ok(Device { cpu: Cpu::new(None)?, gpu: Some(std::sync::Arc::new(Gpu::open(i)?)), fallback: false })
            }
            Target::Auto => Ok(Device::open(DeviceChoice::Auto)?),
        }
    }

    /// Opens what `choice` asks for.
    pub fn open(choice: DeviceChoice) -> Result<Device> {
        let cpu = Cpu::new(None)?;
        Ok(match choice {
            DeviceChoice::Cpu => Device { cpu, gpu: None, fallback: false },
            DeviceChoice::Gpu => Device { cpu, gpu: Some(std::sync::Arc::new(Gpu::open(0)?)), fallback: false },
            DeviceChoice::Auto => match Gpu::open(0) {
                Ok(g) => Device { cpu, gpu: Some(std::sync::Arc::new(g)), fallback: true },
                Err(e) => {
                    crate::noteln!("note: {e}; using the CPU");
                    Device { cpu, gpu: None, fallback: true }
                }
            },
        })
    }

    /// Where work goes first: the GPU's name, or the CPU pool's.
    pub fn name(&self) -> String {
        match &self.gpu {
            Some(g) => format!("gpu ({})", g.name()),
            None => self.cpu.name(),
        }
    }

    /// The GPU, if this device has one.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpu.as_deref()
    }

    /// The GPU as a shared handle (what an owned resident network keeps alive).
    pub fn gpu_shared(&self) -> Option<&std::sync::Arc<Gpu>> {
        self.gpu.as_ref()
    }

    /// The CPU pool.
    pub fn cpu(&self) -> &Cpu {
        &self.cpu
    }

    /// Runs a piece of work under the policy: `on_gpu` when there is a GPU; under `auto`, a
    /// [`GpuError`] from it sends the work to `on_cpu` with a note.
    pub fn run<'s, T>(
        &'s self,
        on_gpu: impl FnOnce(&'s Gpu) -> Result<T>,
        on_cpu: impl FnOnce(&'s Cpu) -> Result<T>,
    ) -> Result<T> {
        if let Some(g) = &self.gpu {
            match on_gpu(g) {
                Err(e) if self.fallback && e.downcast_ref::<GpuError>().is_some() => {
                    crate::noteln!("note: {e}; using the CPU");
                }
                r => return r,
            }
        }
        on_cpu(&self.cpu)
    }
}

/// Opens the devices a benchmark compares: `(time the CPU, the GPU to time)`. `all` without a GPU
/// times the CPU alone and says so, as `auto` does.
pub fn bench_devices(choice: BenchDevice) -> Result<(bool, Option<Gpu>)> {
    let open_or_note = || match Gpu::open(0) {
        Ok(g) => Some(g),
        Err(e) => {
            crate::noteln!("note: {e}; timing the CPU only");
            None
        }
    };
    Ok(match choice {
        BenchDevice::Cpu => (true, None),
        BenchDevice::Gpu => (false, Some(Gpu::open(0)?)),
        BenchDevice::All => (true, open_or_note()),
        BenchDevice::Auto => match open_or_note() {
            Some(g) => (false, Some(g)),
            None => (true, None),
        },
    })
}

/// Where `bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum BenchDevice {
    /// All CPU cores.
    Cpu,
    /// The first CUDA GPU; an error if there is none.
    Gpu,
    /// CPU and GPU side by side.
    All,
    /// The GPU if present, else the CPU.
    Auto,
}

/// A model's opened device, kept between calls: the first `predict` on a GPU opens it (context,
/// PTX) and later calls reuse it, as a resident handle should. Changing the model's
/// [`Target`] opens the new one on the next call. A clone shares the device opened so far (an
/// `Arc`: opening a GPU costs a context and the PTX, which a copy of the model need not pay again)
/// and keeps its own slot from then on.
#[derive(Default)]
pub struct DeviceCache(std::sync::Mutex<Option<(Target, std::sync::Arc<Device>)>>);

impl DeviceCache {
    /// The device for `target`, opened now or kept from an earlier call.
    pub fn get(&self, target: Target) -> crate::Result<std::sync::Arc<Device>> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((t, d)) = slot.as_ref() {
            if *t == target {
                return Ok(d.clone());
            }
        }
        let d = std::sync::Arc::new(Device::open_target(target)?);
        *slot = Some((target, d.clone()));
        Ok(d)
    }
}

impl Clone for DeviceCache {
    fn clone(&self) -> Self {
        DeviceCache(std::sync::Mutex::new(self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()))
    }
}

impl std::fmt::Debug for DeviceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceCache")
    }
}

#[cfg(test)]
mod tests {
    /// Models hold a `DeviceCache`; Python and threads need them `Send + Sync`.
    #[test]
    fn devices_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<super::Device>();
        check::<super::DeviceCache>();
    }
}
