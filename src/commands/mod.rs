//! The model verbs of the CLI (`flynn fit|predict`, `flyhash index build|add|search`, `ocnn
//! cluster`, `cortical fit|predict`): each parses its flags into the library's configuration,
//! reads its inputs with the library's one reader, calls one library verb and writes the result.
//! No model logic lives here.

pub mod cortical;
pub mod flynn;
pub mod index;
pub mod ocnn;

use clap::Args;
use neurobits::device::Target;
use neurobits::flyhash::cpu::Wta;
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::io::read::{self, Format, ReadOptions};
use std::path::Path;

/// How the data of `-i/--input` is read (every model verb takes these).
#[derive(Debug, Clone, Default, Args)]
pub struct ReadArgs {
    /// Input format: auto (from the content), npy, npz, csv, text or idx.
    #[arg(long, default_value = "auto", value_parser = |s: &str| s.parse::<Format>().map_err(|e| e.to_string()))]
    pub format: Format,
    /// Field delimiter of text input (one character; `\t` for tab, ` ` for whitespace runs);
    /// default: detected.
    #[arg(long, value_parser = delimiter)]
    pub delimiter: Option<u8>,
    /// Data rows to skip after any header (FCPS's `Lsun.data` starts with 3 rows of debris).
    #[arg(long, default_value_t = 0)]
    pub skip_rows: usize,
    /// The array of an NPZ input (default: its only array).
    #[arg(long)]
    pub array: Option<String>,
}

impl ReadArgs {
    /// The library's read options.
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            delimiter: self.delimiter,
            skip_rows: self.skip_rows,
            array: self.array.clone(),
        }
    }
}

fn delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" => Ok(b'\t'),
        _ if s.len() == 1 && s.is_ascii() => Ok(s.as_bytes()[0]),
        _ => Err(format!("'{s}': expected one ASCII character (or \\t)")),
    }
}

/// The FlyHash of `flynn fit` and `flyhash index build`: its flags, once.
#[derive(Debug, Clone, Args)]
pub struct HashArgs {
    /// Code length m (default: 32·d; the library's).
    #[arg(long, alias = "m", value_parser = neurobits::validate::positive)]
    pub code_bits: Option<usize>,
    /// Inputs sampled per projection row s (default 5 % of d).
    #[arg(long, alias = "s", value_parser = neurobits::validate::positive)]
    pub ones_per_row: Option<usize>,
    /// Winners k per code (default: m/250 for FlyNN, m/20 for an index; the library's).
    #[arg(long, alias = "k", value_parser = neurobits::validate::positive)]
    pub winners: Option<usize>,
    /// Seed of the projection (default: the library's, `FlyHashConfig::default().seed`).
    #[arg(long, default_value_t = FlyHashConfig::default().seed)]
    pub seed: u64,
    /// Winner-take-all variant (default: the library's).
    #[arg(long, value_enum, default_value_t = FlyHashConfig::default().wta)]
    pub wta: Wta,
}

impl HashArgs {
    /// The library's FlyHash configuration.
    pub fn config(&self) -> FlyHashConfig {
        FlyHashConfig {
            code_bits: self.code_bits,
            ones_per_row: self.ones_per_row,
            winners: self.winners,
            seed: self.seed,
            wta: self.wta,
        }
    }
}

/// `--device`: `cpu`, `gpu`, `cuda`, `gpu:N`, `cuda:N` or `auto`.
pub fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

/// Reads vectors with the library's one reader (`-` is standard input); every value finite.
pub fn read_matrix(path: &Path, how: &ReadArgs) -> anyhow::Result<Matrix> {
    let t: read::Table<f32> = read::read(path, &how.options())?;
    if t.rows == 0 || t.cols == 0 {
        anyhow::bail!("{}: no vectors", path.display());
    }
    Ok(t.into())
}

/// Reads one integer label per row (any format the reader takes, detected from the content).
pub fn read_labels(path: &Path) -> anyhow::Result<Vec<i64>> {
    Ok(read::read_labels(path, &ReadOptions::default())?)
}
