//! The `neurobits flyhash` commands as library functions: hashing, projection files, code files
//! and search, each on the chosen [`Device`].

use anyhow::{anyhow, bail, Result};
use neurobits_core::flyhash::FlyParams;
use neurobits_core::Word;
use std::path::PathBuf;

use super::cpu::{self, Wta};
use super::data;
use crate::device::{Device, DeviceChoice};
use crate::io::atomic::{check_writable, write_string};
use crate::io::memory::ensure_fits;

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash hash`: input vectors into FlyHash codes.
pub struct HashConfig {
    #[cfg_attr(feature = "cli", arg(short = 'i', long))]
    /// Input vectors: IDX (optionally gzipped), CSV or NPY.
    pub input: PathBuf,
    /// Projection CSV written by `projection` (else drawn from --code-bits, --ones-per-row, --seed).
    #[cfg_attr(feature = "cli", arg(long))]
    pub projection: Option<PathBuf>,
    #[cfg_attr(feature = "cli", arg(long = "code-bits", alias = "m", value_name = "M"))]
    /// Code length m in bits (required without --projection).
    pub m: Option<u32>,
    #[cfg_attr(feature = "cli", arg(long = "ones-per-row", alias = "s", value_name = "S"))]
    /// Ones per projection row s (required without --projection).
    pub s: Option<u32>,
    #[cfg_attr(feature = "cli", arg(long = "winners", alias = "k", value_name = "K"))]
    /// Winners per code k.
    pub k: u32,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Wta::Exact))]
    /// Winner-take-all variant.
    pub wta: Wta,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    /// Where to compute: cpu, gpu, or auto (the GPU when it can, else the CPU).
    pub device: DeviceChoice,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = CodeFormat::Bin))]
    /// Output format of the codes.
    pub format: CodeFormat,
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    /// Output file (`-`: standard output).
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
/// Output format of FlyHash codes.
pub enum CodeFormat {
    /// `NBFLYHSH`, version, m, count, then the bit-packed codes as little-endian u64 words.
    Bin,
    /// CSV, one line per input: the k winner indices ascending.
    Indices,
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash projection`: the projection as CSV.
pub struct ProjectionConfig {
    #[cfg_attr(feature = "cli", arg(long = "input-dim", alias = "d", value_name = "D"))]
    /// Input dimension d.
    pub d: u32,
    #[cfg_attr(feature = "cli", arg(long = "code-bits", alias = "m", value_name = "M"))]
    /// Code length m in bits (projection rows).
    pub m: u32,
    #[cfg_attr(feature = "cli", arg(long = "ones-per-row", alias = "s", value_name = "S"))]
    /// Ones per projection row s.
    pub s: u32,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    /// Output file (`-`: standard output).
    pub out: PathBuf,
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash search`: top-r Hamming neighbours of query codes.
pub struct SearchConfig {
    /// Database codes (`hash --format bin`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub db: PathBuf,
    /// Query codes (`hash --format bin`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub queries: PathBuf,
    #[cfg_attr(feature = "cli", arg(long = "neighbours", alias = "r", value_name = "R", default_value_t = 100, value_parser = crate::validate::positive))]
    /// Neighbours per query r.
    pub r: usize,
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    /// Where to compute: cpu, gpu, or auto (the GPU when it can, else the CPU).
    pub device: DeviceChoice,
    /// CSV file (`-`: standard output): one line per query, `index:distance` of its r nearest,
    /// nearest first, ties by index.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash eval`: FlyHash vs SimHash precision on Fashion-MNIST.
pub struct EvalConfig {
    /// Folder of the Fashion-MNIST IDX files.
    #[cfg_attr(feature = "cli", arg(short = 'i', long = "input", alias = "data", default_value = data::FASHION_MNIST))]
    pub data: PathBuf,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1000, value_parser = crate::validate::positive))]
    /// Fashion-MNIST query vectors (the first of the test set; the training set is the database).
    pub queries: usize,
    /// scikit-learn's digits (`digits.csv[.gz]`, 1 797 rows of 64 pixels and a label): the
    /// second data set.
    #[cfg_attr(feature = "cli", arg(long, default_value = "data/digits/digits.csv.gz"))]
    pub digits: PathBuf,
    /// Digits query vectors (the first rows; the rest is the database).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 300, value_parser = crate::validate::positive))]
    pub digit_queries: usize,
    #[cfg_attr(feature = "cli", arg(long = "winners", alias = "ks", value_name = "K", value_delimiter = ',', default_value = "16,32,64", value_parser = clap::value_parser!(u32).range(1..=4096)))]
    /// Winners k of the fly codes (m = 20k) to compare, comma-separated.
    pub ks: Vec<u32>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = crate::validate::positive))]
    /// Neighbours per query whose precision is measured.
    pub neighbours: usize,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    /// Seed of the portable random streams (messages, probes, projection).
    pub seed: u64,
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    /// A folder for `eval.csv`, `eval.json` and one `eval-<data set>.svg` per data set.
    pub out: PathBuf,
}

fn indices_csv(m: u32, codes: &[Word]) -> String {
    let words = (m as usize).div_ceil(64);
    let mut s = String::new();
    for c in codes.chunks(words) {
        let idx: Vec<String> =
            (0..m as usize).filter(|&i| c[i / 64] >> (i % 64) & 1 == 1).map(|i| i.to_string()).collect();
        s += &idx.join(",");
        s.push('\n');
    }
    s
}

pub use super::model::hash_matrix;

/// `flyhash projection`.
pub fn projection(a: &ProjectionConfig) -> Result<()> {
    check_writable(&a.out)?;
    {
        let p = FlyParams::new(a.d, a.m, a.s, 1, a.seed)?;
        ensure_fits("the projection", a.m as u128 * a.s as u128 * 12)?;
        let proj = cpu::projection(&p);
        let mut s = String::new();
        for row in proj.chunks(a.s as usize) {
            s += &row.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",");
            s.push('\n');
        }
        write_string(&a.out, &s)
    }
}

/// `flyhash hash`.
pub fn hash(a: &HashConfig) -> Result<()> {
    check_writable(&a.out)?;
    {
        let x = data::read(&a.input)?;
        if x.rows == 0 || x.cols == 0 {
            bail!("{}: no input vectors", a.input.display());
        }
        let (p, proj) = match &a.projection {
            Some(path) => {
                let (m, s, proj) = crate::io::projection::load(path, x.cols)?;
                if a.m.is_some_and(|am| am != m) || a.s.is_some_and(|as_| as_ != s) {
                    bail!("--code-bits/--ones-per-row disagree with the projection file ({m} rows of {s})");
                }
                (FlyParams::new(x.cols as u32, m, s, a.k, a.seed)?, proj)
            }
            None => {
                let (m, s) = (
                    a.m.ok_or_else(|| anyhow!("--code-bits is required without --projection"))?,
                    a.s.ok_or_else(|| anyhow!("--ones-per-row is required without --projection"))?,
                );
                let p = FlyParams::new(x.cols as u32, m, s, a.k, a.seed)?;
                ensure_fits("the projection", m as u128 * s as u128 * 4)?;
                (p, cpu::projection(&p))
            }
        };
        let codes = hash_matrix(&p, &proj, &x, a.wta, &Device::open(a.device)?)?;
        match a.format {
            CodeFormat::Bin => crate::io::codes::save(&a.out, p.m, &codes),
            CodeFormat::Indices => write_string(&a.out, &indices_csv(p.m, &codes)),
        }
    }
}

/// `flyhash search`.
pub fn search(a: &SearchConfig) -> Result<()> {
    check_writable(&a.out)?;
    let (m, db) = crate::io::codes::load(&a.db)?;
    let (mq, q) = crate::io::codes::load(&a.queries)?;
    if m != mq {
        bail!("database codes have {m} bits but queries have {mq}");
    }
    let words = (m as usize).div_ceil(64);
    let (n, nq) = ((db.len() / words) as u128, (q.len() / words) as u128);
    let r = (a.r as u128).min(n);
    let device = Device::open(a.device)?;
    // Peak host memory: the hits (8 bytes each) and their text (≤ 22 bytes each); the GPU path
    // also brings back a mark bit per query and code (codes of more than 1 023 words: every
    // distance, 4 bytes each).
    let gpu_extra = match device.gpu() {
        Some(_) if words <= neurobits_gpu_host::flyhash::HAMMING_MAX_WORDS => n.div_ceil(64) * 8 * nq,
        Some(_) => n * nq * 4,
        None => 0,
    };
    ensure_fits("the search results", nq * r * 30 + gpu_extra)?;
    let res = device.run(
        |g| Ok(g.hamming_top_r(&db, &q, words, a.r)?),
        |cpu| Ok(cpu.install(|| super::search::top_r(&db, &q, words, a.r))),
    )?;
    // Plain CSV, one hit per line, nearest first: read by any CSV reader as it is.
    let mut s = String::from("query,rank,index,distance\n");
    for (q, row) in res.iter().enumerate() {
        for (rank, (i, d)) in row.iter().enumerate() {
            s += &format!("{q},{rank},{i},{d}\n");
        }
    }
    write_string(&a.out, &s)
}

/// `flyhash eval`.
pub fn eval(a: &EvalConfig) -> Result<()> {
    // The output folder before the data sets are read and hashed.
    crate::io::atomic::check_folder(&a.out)?;
    let sets = super::eval::sets(&a.data, &a.digits, a.queries, a.digit_queries)?;
    let rows = super::eval::run(&sets, &a.ks, a.neighbours, a.seed, &a.out)?;
    crate::outln!(
        "{:<14} {:>4} {:<12} {:<44} {:>6} {:>6} {:>7} {:>7}",
        "data",
        "k",
        "comparison",
        "method",
        "bits",
        "bytes",
        "recall",
        "mAP"
    )?;
    for r in rows {
        crate::outln!(
            "{:<14} {:>4} {:<12} {:<44} {:>6} {:>6} {:>7.4} {:>7.4}",
            r.data,
            r.k,
            r.comparison,
            r.method,
            r.bits,
            r.bytes,
            r.recall,
            r.map
        )?;
    }
    Ok(())
}
