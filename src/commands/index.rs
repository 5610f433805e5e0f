//! `neurobits flyhash index build|add|search`: a FlyHash index kept in one file that `add`
//! appends to without rewriting.

use clap::{Args, Subcommand};
use neurobits::device::Target;
use neurobits::flyhash::index::FlyIndex;
use neurobits::model::Model;
use std::path::PathBuf;

/// `neurobits flyhash index …`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Hash vectors into a new index file (`-o`).
    Build(BuildArgs),
    /// Hash vectors with a saved index's FlyHash and append them to its file (ids continue).
    Add(AddArgs),
    /// The k nearest indexed vectors of each query, by Hamming distance of their codes (exact).
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
    /// Where to hash: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// `flyhash index add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The index file (written by `build`); the new codes are appended to it.
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
    /// CSV `query,rank,id,distance`, one neighbour per line, nearest first, ties by id (`-`:
    /// standard output).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Where to hash and search: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// Runs an index command.
pub fn run(c: &IndexCommand) -> anyhow::Result<()> {
    match c {
        IndexCommand::Build(a) => {
            let config = a.hash.config();
            config.validate()?;
            neurobits::io::atomic::check_writable(&a.out)?;
            let x = super::read_matrix(&a.input, &a.read)?;
            let mut index = FlyIndex::new(config, x.cols)?.with_device(a.device);
            index.add(&x)?;
            index.save(&a.out)?;
            let p = index.hasher().params()?;
            neurobits::noteln!(
                "index of {} codes (m={}, s={}, k={}) written to {}",
                index.len(),
                p.m,
                p.s,
                p.k,
                a.out.display()
            );
        }
        IndexCommand::Add(a) => {
            let x = super::read_matrix(&a.input, &a.read)?;
            let ids = FlyIndex::append(&a.index, &x, a.device)?;
            neurobits::noteln!("added ids {}..{} to {}", ids.start, ids.end, a.index.display());
        }
        IndexCommand::Search(a) => {
            neurobits::io::atomic::check_writable(&a.out)?;
            let index = FlyIndex::load(&a.index)?.with_device(a.device);
            let q = super::read_matrix(&a.input, &a.read)?;
            let hits = index.search(&q, a.neighbours)?;
            let mut s = String::from("query,rank,id,distance\n");
            let rows = hits.ids.chunks(hits.k).zip(hits.distances.chunks(hits.k));
            for (qi, (ids, ds)) in rows.enumerate() {
                for (rank, (id, d)) in ids.iter().zip(ds).enumerate().filter(|(_, (&id, _))| id >= 0) {
                    s += &format!("{qi},{rank},{id},{d}\n");
                }
            }
            neurobits::io::atomic::write_string(&a.out, &s)?;
        }
    }
    Ok(())
}
