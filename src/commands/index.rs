//! `neurobits flyhash index build|add|search`: a FlyHash index kept in one file — exact (codes
//! appended by `add` without rewriting) or approximate (`build --approx`: multi-probe buckets,
//! rewritten atomically by `add`). `add` and `search` take either kind of file.

use clap::{Args, Subcommand};
use neurobits::device::Target;
use neurobits::dist::Collectives;
use neurobits::flyhash::ann::FlyAnnIndex;
use neurobits::flyhash::ann_bench::AnnArgs;
use neurobits::flyhash::ann_gpu::AnnDevice;
use neurobits::flyhash::index::{FlyIndex, Neighbours};
use neurobits::flyhash::index_dist;
use neurobits::io::model_file;
use neurobits::model::Model;
use std::path::{Path, PathBuf};

/// `neurobits flyhash index …`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Hash vectors into a new index file (`-o`), exact or approximate (`--approx`).
    Build(BuildArgs),
    /// Hash vectors with a saved index's FlyHash and add them to its file (ids continue).
    Add(AddArgs),
    /// The k nearest indexed vectors of each query: exact Hamming search, or the approximate
    /// index's multi-probe search (`--probes`).
    Search(SearchArgs),
}

/// `flyhash index build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Vectors: NPY, NPZ, CSV/TSV, whitespace text or IDX (gzip or not); `-` for standard input.
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// The index file to write.
    #[arg(short, long)]
    pub out: PathBuf,
    /// The FlyHash of the vectors.
    #[command(flatten)]
    pub hash: super::HashArgs,
    /// An approximate index: multi-probe buckets on short pseudo-hashes of the fly code, with
    /// exact re-ranking of the candidates (`--tables`, `--key-bits`, `--pool`, `--rerank`,
    /// `--probes` apply to it).
    #[arg(long)]
    pub approx: bool,
    /// The approximate index's options.
    #[command(flatten)]
    pub ann: AnnArgs,
    /// Buckets probed per table by default in `search` (1..=2^key-bits).
    #[arg(long, default_value_t = neurobits::flyhash::ann::AnnConfig::default().probes)]
    pub probes: usize,
    /// Where to hash: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// `flyhash index add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The index file (written by `build`); the new codes are added to it.
    #[arg(long)]
    pub index: PathBuf,
    /// Vectors to add (formats as for `build`).
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Where to hash: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// `flyhash index search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The index file.
    #[arg(long)]
    pub index: PathBuf,
    /// Query vectors (formats as for `build`).
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Neighbours per query.
    #[arg(short = 'k', long, default_value_t = 10, value_parser = neurobits::validate::positive)]
    pub neighbours: usize,
    /// Approximate index: buckets probed per table (default: the one saved by `build`).
    #[arg(long)]
    pub probes: Option<usize>,
    /// CSV `query,rank,id,distance`, one neighbour per line, nearest first, ties by id (`-`:
    /// standard output). Distances: Hamming, or squared Euclidean for `--rerank euclidean`.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Where to hash and search: cpu, gpu, cuda:N, auto; for an approximate index also gpus
    /// (its ids sharded over every GPU here) or gpus:N (over the first N).
    #[arg(long, default_value = "cpu", value_parser = parse_ann_device)]
    pub device: AnnDevice,
    /// Search as one rank of a job of several processes (mpirun, srun, torchrun, or RANK and
    /// WORLD_SIZE set by hand; alone, a job of one): each rank reads its share of the codes and
    /// searches it on its device (gpu: the host's GPU of its local rank), rank 0 reads the
    /// queries and writes --out. Exact index only.
    #[arg(long)]
    pub distributed: bool,
}

fn parse_ann_device(s: &str) -> Result<AnnDevice, String> {
    s.parse()
}

/// Whether the index file at `path` is an approximate one (by its header; the loader checks it).
fn is_approx(path: &Path) -> anyhow::Result<bool> {
    let b = model_file::read_bytes(path)?;
    Ok(model_file::peek_kind(&b) == Some(FlyAnnIndex::KIND))
}

/// Runs an index command.
pub fn run(c: &IndexCommand) -> anyhow::Result<()> {
    match c {
        IndexCommand::Build(a) => {
            let config = a.hash.config();
            config.validate()?;
            let ann = a.ann.config(a.probes);
            if a.approx {
                ann.validate()?;
            }
            neurobits::io::atomic::check_writable(&a.out)?;
            let x = super::read_matrix(&a.input, &a.read)?;
            let (len, p) = if a.approx {
                let mut index = FlyAnnIndex::new(config, ann, x.cols)?.with_device(a.device);
                index.add(&x)?;
                index.save(&a.out)?;
                (index.len(), index.exact().hasher().params()?)
            } else {
                let mut index = FlyIndex::new(config, x.cols)?.with_device(a.device);
                index.add(&x)?;
                index.save(&a.out)?;
                (index.len(), index.hasher().params()?)
            };
            neurobits::noteln!(
                "{} index of {len} codes (m={}, s={}, k={}) written to {}",
                if a.approx { "approximate" } else { "exact" },
                p.m,
                p.s,
                p.k,
                a.out.display()
            );
        }
        IndexCommand::Add(a) => {
            let x = super::read_matrix(&a.input, &a.read)?;
            let ids = if is_approx(&a.index)? {
                // The buckets are in the payload: load, add, and replace the file atomically.
                let mut index = FlyAnnIndex::load(&a.index)?.with_device(a.device);
                let ids = index.add(&x)?;
                index.save(&a.index)?;
                ids
            } else {
                FlyIndex::append(&a.index, &x, a.device)?
            };
            neurobits::noteln!("added ids {}..{} to {}", ids.start, ids.end, a.index.display());
        }
        IndexCommand::Search(a) if a.distributed => search_distributed(a)?,
        IndexCommand::Search(a) => {
            neurobits::io::atomic::check_writable(&a.out)?;
            let approx = is_approx(&a.index)?;
            if !approx {
                if let Some(p) = a.probes {
                    anyhow::bail!("--probes {p}: {} is an exact index (build it with --approx)", a.index.display());
                }
            }
            let q = super::read_matrix(&a.input, &a.read)?;
            let s = if approx {
                let mut s = String::from("query,rank,id,distance\n");
                let mut line = |qi: usize, rank: usize, id: i64, d: String| {
                    if id >= 0 {
                        s += &format!("{qi},{rank},{id},{d}\n");
                    }
                };
                let index = FlyAnnIndex::load(&a.index)?.with_ann_device(a.device);
                let hits = index.search_probes(&q, a.neighbours, a.probes.unwrap_or(index.config().probes))?;
                let rows = hits.ids.chunks(hits.k).zip(hits.distances.chunks(hits.k));
                for (qi, (ids, ds)) in rows.enumerate() {
                    ids.iter().zip(ds).enumerate().for_each(|(rank, (&id, d))| line(qi, rank, id, d.to_string()));
                }
                s
            } else {
                let AnnDevice::One(device) = a.device else {
                    anyhow::bail!(
                        "--device gpus: {} is an exact index; only an approximate one (--approx) is sharded over GPUs",
                        a.index.display()
                    );
                };
                let index = FlyIndex::load(&a.index)?.with_device(device);
                exact_csv(&index.search(&q, a.neighbours)?)
            };
            neurobits::io::atomic::write_string(&a.out, &s)?;
        }
    }
    Ok(())
}

/// The exact search's CSV: `query,rank,id,distance`, padding (id −1) left out.
fn exact_csv(hits: &Neighbours) -> String {
    let mut s = String::from("query,rank,id,distance\n");
    let rows = hits.ids.chunks(hits.k).zip(hits.distances.chunks(hits.k));
    for (qi, (ids, ds)) in rows.enumerate() {
        for (rank, (&id, d)) in ids.iter().zip(ds).enumerate().filter(|(_, (&id, _))| id >= 0) {
            s += &format!("{qi},{rank},{id},{d}\n");
        }
    }
    s
}

/// `flyhash index search --distributed`: the ranks join first, so that a rank that fails later
/// (bad queries, an unwritable output) ends the others at once instead of at their deadline.
fn search_distributed(a: &SearchArgs) -> anyhow::Result<()> {
    let mut group = neurobits::dist::join_from_env()?;
    let root = group.world().is_root();
    if let Some(p) = a.probes {
        anyhow::bail!("--probes {p}: --distributed searches an exact index only");
    }
    let AnnDevice::One(device) = a.device else {
        anyhow::bail!("--device gpus: with --distributed each rank uses its own GPU (--device gpu)");
    };
    if index_dist::peek_kind(&a.index)?.as_deref() == Some(FlyAnnIndex::KIND) {
        anyhow::bail!(
            "{}: --distributed searches an exact index; this one is approximate (--approx)",
            a.index.display()
        );
    }
    let q = if root {
        neurobits::io::atomic::check_writable(&a.out)?;
        Some(super::read_matrix(&a.input, &a.read)?)
    } else {
        None
    };
    if let Some(hits) = index_dist::search(&a.index, q.as_ref(), a.neighbours, device, &mut group)? {
        neurobits::io::atomic::write_string(&a.out, &exact_csv(&hits))?;
    }
    Ok(())
}
