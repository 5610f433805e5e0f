//! The approximate index's options on the command line (`flyhash index build --approx`,
//! `flyhash ann-bench`): in a module of their own, since `index build` needs them without the
//! HDF5 reader (the `ann` feature) that `ann-bench` needs.

use super::ann::{AnnConfig, Rerank};

/// The approximate index's options (also `flyhash index build --approx`).
#[derive(Debug, Clone, clap::Args)]
pub struct AnnArgs {
    /// Pseudo-hash tables.
    #[arg(long, default_value_t = AnnConfig::default().tables)]
    pub tables: usize,
    /// Bits of each table's bucket key (2^bits buckets per table).
    #[arg(long, default_value_t = AnnConfig::default().bits)]
    pub key_bits: usize,
    /// Projection outputs sum-pooled into one key bit.
    #[arg(long, default_value_t = AnnConfig::default().pool)]
    pub pool: usize,
    /// Re-ranking of the candidates: hamming (full fly codes) or euclidean (keeps the vectors).
    #[arg(long, value_enum, default_value_t = AnnConfig::default().rerank)]
    pub rerank: Rerank,
}

impl AnnArgs {
    /// The library's configuration with `probes` as the search knob.
    pub fn config(&self, probes: usize) -> AnnConfig {
        AnnConfig { tables: self.tables, bits: self.key_bits, pool: self.pool, probes, rerank: self.rerank }
    }
}
