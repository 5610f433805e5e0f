//! Several processes as one job: a rank's place in it from its launcher's environment
//! ([`World::from_env`]: `mpirun`, `srun`, `torchrun`, or variables set by hand), a TCP
//! rendezvous at rank 0 ([`tcp::Group`]), and the host collectives the models need over it
//! ([`Collectives`]: gather, broadcast, all-gather, all-reduce-max of bytes).
//!
//! Why TCP and not MPI: the same binary runs under `mpirun`, `srun` and `torchrun`, and on a
//! machine with no MPI at all (the GPU machines have NCCL but no libmpi), with no link-time
//! dependency and no ABI question (OpenMPI and MPICH `MPI_Comm` differ). The launcher only
//! starts the processes and tells each its rank; what passes between host processes is small
//! (the NCCL unique id, 128 bytes, once; a search's k hits per query per rank), so a star of TCP
//! connections to rank 0 costs nothing measurable, and the heavy traffic of the GPU paths goes
//! through NCCL, whose communicator is built from that id (`ncclCommInitRank`).
//!
//! Failure: a peer that exits closes its connection, and every wait has a deadline
//! (`NEUROBITS_DIST_TIMEOUT`, seconds, default 300): either is one [`crate::Error::Io`] naming the
//! rank, never a hang.

pub mod tcp;

use crate::device::Target;
use crate::error::{Error, Result};
use std::time::Duration;

pub use tcp::Group;

/// Default rendezvous port at rank 0 when the environment names none (`MASTER_PORT`).
pub const DEFAULT_PORT: u16 = 29_517;

/// Where this process stands in its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// This process's rank, `0..size`.
    pub rank: usize,
    /// Processes in the job.
    pub size: usize,
    /// Rank among the processes of this host (picks the GPU: `cuda:local_rank`).
    pub local_rank: usize,
    /// Which launcher's variables said so (`openmpi`, `pmi`, `slurm`, `torchrun`, `single`).
    pub launcher: &'static str,
    /// The launcher's name for the job, hashed ([`job_key`]; 0: none known): rank 0 admits only
    /// ranks of its own job, and the default rendezvous port depends on it, so that two jobs on
    /// one host do not meet.
    pub job: u64,
}

/// The launchers' variables, first match wins: (name, rank, size, local rank). OpenMPI before
/// Slurm, since `srun --mpi=pmix` of an OpenMPI program sets both, and agree; torchrun last,
/// since `RANK` is a common name.
const LAUNCHERS: [(&str, &str, &str, &str); 4] = [
    ("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
];

impl World {
    /// One process alone.
    pub const SINGLE: World = World { rank: 0, size: 1, local_rank: 0, launcher: "single", job: 0 };

    /// This process's place, from the environment (see [`World::from_vars`]).
    pub fn from_env() -> Result<World> {
        World::from_vars(|k| std::env::var(k).ok())
    }

    /// This process's place from the variables `var` returns: the first launcher whose rank and
    /// size are both set; none set: [`World::SINGLE`]. A local rank that is not set is the
    /// rank (one host).
    ///
    /// ```
    /// use neurobits::dist::World;
    /// let env = |k: &str| match k { "SLURM_PROCID" => Some("3".into()), "SLURM_NTASKS" => Some("4".into()),
    ///     "SLURM_LOCALID" => Some("1".into()), _ => None };
    /// assert_eq!(World::from_vars(env)?, World { rank: 3, size: 4, local_rank: 1, launcher: "slurm", job: 0 });
    /// assert_eq!(World::from_vars(|_| None)?, World::SINGLE);
    /// # Ok::<(), neurobits::Error>(())
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<World> {
        for (launcher, rank, size, local) in LAUNCHERS {
            let (Some(r), Some(s)) = (var(rank), var(size)) else { continue };
            let num = |name: &str, v: &str| {
                v.trim()
                    .parse::<usize>()
                    .map_err(|_| Error::input("the environment", format!("{name} = {v:?}: not a rank")))
            };
            let (r, s) = (num(rank, &r)?, num(size, &s)?);
            if s == 0 || r >= s {
                return Err(Error::input("the environment", format!("{rank} = {r} with {size} = {s}: no such rank")));
            }
            let local_rank = match var(local) {
                Some(l) => num(local, &l)?,
                None => r,
            };
            return Ok(World { rank: r, size: s, local_rank, launcher, job: job_key(&var) });
        }
        Ok(World::SINGLE)
    }

    /// Rank 0 writes the outputs and gathers the results.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The contiguous share `[start, end)` of `n` items that `rank` of `size` holds: the first
    /// `n mod size` ranks one item more.
    ///
    /// ```
    /// use neurobits::dist::World;
    /// let w = |rank| World { rank, size: 3, local_rank: rank, launcher: "single", job: 0 };
    /// assert_eq!([w(0).share(10), w(1).share(10), w(2).share(10)], [0..4, 4..7, 7..10]);
    /// ```
    pub fn share(&self, n: usize) -> std::ops::Range<usize> {
        let (q, r) = (n / self.size, n % self.size);
        let at = |i: usize| i * q + i.min(r);
        at(self.rank)..at(self.rank + 1)
    }
}

/// The job's name from its launcher, hashed (FNV-1a; 0 when none is set): `NEUROBITS_JOB`, else
/// OpenMPI's job id (`OMPI_MCA_ess_base_jobid`), PMIx's namespace, Slurm's job and step ids,
/// torchrun's run id.
pub fn job_key(var: &impl Fn(&str) -> Option<String>) -> u64 {
    let slurm = || var("SLURM_JOB_ID").map(|j| format!("{j}.{}", var("SLURM_STEP_ID").unwrap_or_default()));
    let name = var("NEUROBITS_JOB")
        .or_else(|| var("OMPI_MCA_ess_base_jobid"))
        .or_else(|| var("PMIX_NAMESPACE"))
        .or_else(slurm)
        .or_else(|| var("TORCHELASTIC_RUN_ID"));
    name.map_or(0, |n| {
        n.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3)).max(1)
    })
}

/// Rank 0's rendezvous address: `NEUROBITS_MASTER` (`host:port`), else `MASTER_ADDR` and
/// `MASTER_PORT` (torchrun's names; Slurm jobs set them in the batch script), else
/// `127.0.0.1` and [`DEFAULT_PORT`] (one host), plus `job mod 1000` when the launcher names the
/// job ([`job_key`]), so that two `mpirun`s on one host choose different ports.
pub fn master_from_env() -> Result<String> {
    master_from_vars(|k| std::env::var(k).ok())
}

/// [`master_from_env`] over the variables `var` returns.
///
/// ```
/// use neurobits::dist::master_from_vars;
/// let env = |k: &str| (k == "MASTER_ADDR").then(|| "node7".to_string());
/// assert_eq!(master_from_vars(env)?, "node7:29517");
/// # Ok::<(), neurobits::Error>(())
/// ```
pub fn master_from_vars(var: impl Fn(&str) -> Option<String>) -> Result<String> {
    if let Some(m) = var("NEUROBITS_MASTER") {
        if !m.contains(':') {
            return Err(Error::input("the environment", format!("NEUROBITS_MASTER = {m:?}: not host:port")));
        }
        return Ok(m);
    }
    let host = var("MASTER_ADDR").unwrap_or_else(|| "127.0.0.1".into());
    let port = match var("MASTER_PORT") {
        Some(p) => p
            .trim()
            .parse::<u16>()
            .map_err(|_| Error::input("the environment", format!("MASTER_PORT = {p:?}: not a port")))?,
        None => DEFAULT_PORT + (job_key(&var) % 1000) as u16,
    };
    Ok(format!("{host}:{port}"))
}

/// How long any wait for a peer may last: `NEUROBITS_DIST_TIMEOUT` seconds, default 300.
pub fn timeout_from_env() -> Result<Duration> {
    match std::env::var("NEUROBITS_DIST_TIMEOUT") {
        Ok(s) => match s.trim().parse::<f64>() {
            Ok(t) if t > 0.0 && t.is_finite() => Ok(Duration::from_secs_f64(t)),
            _ => Err(Error::input(
                "the environment",
                format!("NEUROBITS_DIST_TIMEOUT = {s:?}: not a positive number of seconds"),
            )),
        },
        Err(_) => Ok(Duration::from_secs(300)),
    }
}

/// Joins this process's job as its environment describes it ([`World::from_env`],
/// [`master_from_env`], [`timeout_from_env`]); alone, a group of one that sends nothing.
pub fn join_from_env() -> Result<Group> {
    let world = World::from_env()?;
    if world.size == 1 {
        return Ok(Group::single());
    }
    Group::join(world, &master_from_env()?, timeout_from_env()?)
}

/// The device rank `world` uses for `t`: a GPU choice means this host's GPU `local rank`
/// (plus `N` for `cuda:N`), modulo the GPUs this process sees (one, where the launcher gives each
/// rank its own through `CUDA_VISIBLE_DEVICES`); `auto` likewise when a GPU is seen, else the CPU.
pub fn rank_target(t: Target, world: &World) -> Target {
    let seen = neurobits_gpu_host::Gpu::count();
    match t {
        Target::Gpu(n) if seen > 0 => Target::Gpu((n + world.local_rank) % seen),
        Target::Auto if seen > 0 => Target::Gpu(world.local_rank % seen),
        Target::Auto => Target::CPU,
        t => t,
    }
}

/// Seconds as people write them: `300`, `0.5`.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// A deadline for work that cannot be interrupted (NCCL's collectives wait for every rank, for
/// ever, when one is gone): armed before the work, dropped after it; if the deadline passes
/// first, the process ends with one line on stderr and exit code 1, as a lost TCP peer does.
pub struct Watchdog {
    done: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Ends the process if not dropped within `timeout`; `what` names the work in the line.
    pub fn arm(what: impl Into<String>, timeout: Duration) -> Watchdog {
        let what = what.into();
        let done = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let d = done.clone();
        let thread = std::thread::spawn(move || {
            let (lock, cv) = &*d;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = cv.wait_timeout_while(guard, timeout, |done| !*done).unwrap_or_else(|e| e.into_inner());
            if !*guard {
                eprintln!(
                    "error: {what}: not finished within {} s (NEUROBITS_DIST_TIMEOUT): a rank is gone or stuck",
                    secs(timeout)
                );
                std::process::exit(1);
            }
        });
        Watchdog { done, thread: Some(thread) }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, cv) = &*self.done;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The host collectives of a job, rooted at rank 0 where a root is needed. Every rank calls the
/// same collectives in the same order (as in MPI); a rank that stops calling makes the others
/// fail at their deadline, never wait for ever.
pub trait Collectives {
    /// This process's place.
    fn world(&self) -> &World;

    /// Every rank's `mine`, in rank order, at rank 0 (`None` elsewhere).
    fn gather(&mut self, mine: &[u8]) -> Result<Option<Vec<Vec<u8>>>>;

    /// Rank 0's `data` at every rank (`data` is replaced on the others).
    fn broadcast(&mut self, data: &mut Vec<u8>) -> Result<()>;

    /// Every rank's `mine`, in rank order, at every rank.
    fn all_gather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let parts = self.gather(mine)?;
        let mut flat = Vec::new();
        if let Some(parts) = &parts {
            for p in parts {
                flat.extend_from_slice(&(p.len() as u64).to_le_bytes());
                flat.extend_from_slice(p);
            }
        }
        self.broadcast(&mut flat)?;
        let mut out = Vec::with_capacity(self.world().size);
        let mut at = 0;
        while at < flat.len() {
            let n = u64::from_le_bytes(flat[at..at + 8].try_into().expect("8 bytes")) as usize;
            out.push(flat[at + 8..at + 8 + n].to_vec());
            at += 8 + n;
        }
        Ok(out)
    }

    /// The largest of every rank's `x`, at every rank.
    fn all_reduce_max(&mut self, x: u64) -> Result<u64> {
        let all = self.all_gather(&x.to_le_bytes())?;
        Ok(all.iter().map(|b| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))).max().unwrap_or(x))
    }

    /// Returns once every rank has called it.
    fn barrier(&mut self) -> Result<()> {
        self.all_reduce_max(0).map(drop)
    }
}

#[cfg(test)]
mod tests;
