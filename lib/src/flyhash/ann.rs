//! An approximate FlyHash index (DenseFly's multi-probe search, Sharma & Navlakha 2018, over
//! several tables as in multi-probe LSH): the exact index's codes, plus `tables` short
//! pseudo-hashes of each vector (sum-pooled dense projection outputs against learned medians,
//! `neurobits_core::flyhash::pseudo_*`) filed in buckets. A search probes each table's buckets
//! nearest the query's key first ([`neurobits_core::flyhash::Probes`]) and re-ranks the ids
//! found exactly — by the Hamming distance of the full fly codes, or by the squared Euclidean
//! distance of the original vectors when the index keeps them.
//!
//! **One knob**: `probes`, the buckets read per table, from 1 to `2^bits`. More probes, more
//! candidates: higher recall, lower speed. At `2^bits` every id is a candidate and the search
//! is exact (with Hamming re-ranking it equals [`FlyIndex::search`](crate::flyhash::index::FlyIndex::search), ids and distances).
//!
//! `add` files new ids in their buckets (nothing is rebuilt); the medians are learned from the
//! first `add` and kept, as faiss's `IndexLSH` keeps its trained thresholds.
//!
//! Saved as a model of kind `flyhash-ann`: header = the FlyHash (as the exact index's) and the
//! [`AnnConfig`]; payload = thresholds, every id's bucket keys, the kept vectors (`f32` bits, or
//! none), the codes; all under the file's SHA-256. Buckets are refilled from the keys on load.
//! The exact index's `flyhash-index` files are unchanged and still load as [`FlyIndex`].

use neurobits_core::flyhash::{dense_median, is_pixel, sort_key, PIXEL_EUCLID_MAX_DIM, PSEUDO_MAX_BITS};
use serde::{Deserialize, Serialize};

use super::ann_gpu::{AnnDevice, Resident};
use super::ann_search::{self, Rank, Shape, Tables};
use super::data::Matrix;
use super::index::FlyIndex;
use super::model::{FlyHashConfig, SavedHasher};
use crate::device::Target;
use crate::error::{Error, Result};
use crate::io::model_file::{self, Payload, Reader};
use crate::model::{check_features, Model};

/// How candidates are re-ranked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Rerank {
    /// Hamming distance of the full fly codes (the index keeps codes only, as faiss's binary
    /// indexes).
    #[default]
    Hamming,
    /// Squared Euclidean distance of the original vectors (the index keeps them too).
    Euclidean,
}

/// The approximate index's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnnConfig {
    /// Pseudo-hash tables (each one bucket key per vector).
    pub tables: usize,
    /// Bits of a pseudo-hash key (`2^bits` buckets per table), 1..=24.
    pub bits: usize,
    /// Projection outputs sum-pooled into one pseudo-hash bit.
    pub pool: usize,
    /// Buckets probed per table by `search` (the knob), 1..=`2^bits`.
    pub probes: usize,
    /// What re-ranks the candidates.
    pub rerank: Rerank,
}

impl Default for AnnConfig {
    fn default() -> Self {
        AnnConfig { tables: 8, bits: 12, pool: 4, probes: 16, rerank: Rerank::Hamming }
    }
}

impl AnnConfig {
    /// Checks the sizes and the knob.
    pub fn validate(&self) -> Result<()> {
        if self.tables == 0 || self.tables > 1024 {
            return Err(Error::config("tables", self.tables, "must be in 1..=1024"));
        }
        if self.bits == 0 || self.bits > PSEUDO_MAX_BITS {
            return Err(Error::config("bits", self.bits, format!("must be in 1..={PSEUDO_MAX_BITS}")));
        }
        if self.pool == 0 || self.pool > 1 << 16 {
            return Err(Error::config("pool", self.pool, "must be in 1..=65536"));
        }
        self.check_probes(self.probes)
    }

    /// Checks a probe count: 1..=`2^bits`.
    pub fn check_probes(&self, probes: usize) -> Result<()> {
        let max = 1usize << self.bits.min(PSEUDO_MAX_BITS);
        if probes == 0 || probes > max {
            return Err(Error::config("probes", probes, format!("must be in 1..={max} (2^bits)")));
        }
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape { tables: self.tables, bits: self.bits, pool: self.pool }
    }
}

/// Neighbours found by the approximate index: row `q` holds query `q`'s `k` nearest candidates,
/// nearest first, ties by lower id, padded with id `-1` and distance `+inf` (as faiss pads).
#[derive(Clone, Debug, PartialEq)]
pub struct AnnNeighbours {
    /// Neighbours per query.
    pub k: usize,
    /// Hamming distances (exact integers) or squared Euclidean distances, `queries × k`.
    pub distances: Vec<f32>,
    /// Ids, `queries × k`.
    pub ids: Vec<i64>,
    /// Distinct candidates re-ranked, summed over the queries.
    pub candidates: u64,
}

/// An approximate FlyHash index.
///
/// ```
/// use neurobits::flyhash::{ann::{AnnConfig, FlyAnnIndex, Rerank}, data::Matrix, model::FlyHashConfig};
/// let x = Matrix { rows: 50, cols: 8, data: (0..400).map(|i| ((i * 37) % 101) as f32).collect() };
/// let hash = FlyHashConfig { code_bits: Some(256), winners: Some(16), ..Default::default() };
/// let ann = AnnConfig { tables: 4, bits: 4, pool: 2, probes: 3, rerank: Rerank::Euclidean };
/// let mut index = FlyAnnIndex::new(hash, ann, 8)?;
/// index.add(&x)?;
/// let exact = index.search_probes(&x, 5, 16)?; // 16 = 2^bits: every id a candidate
/// assert_eq!(exact.ids.chunks(5).map(|r| r[0]).collect::<Vec<_>>(), (0..50).collect::<Vec<i64>>());
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FlyAnnIndex {
    exact: FlyIndex,
    config: AnnConfig,
    /// `tables · bits` learned medians (keys); empty until the first `add`.
    thresholds: Vec<u32>,
    /// `len · tables` bucket keys, id-major.
    keys: Vec<u32>,
    /// `tables · 2^bits` buckets of ascending ids.
    buckets: Vec<Vec<u32>>,
    /// The vectors when re-ranking is Euclidean, else none.
    vectors: Vectors,
    /// Where searches run.
    on: AnnDevice,
    /// The rows (codes or vectors) as last uploaded to GPUs; `add` drops them.
    resident: Resident,
}

/// The vectors an index keeps for Euclidean re-ranking: bytes while every value is an 8-bit
/// pixel (a quarter of the memory and of the reads per candidate; the distances are the same,
/// `neurobits_core::flyhash::sq_euclidean_pixels`), floats otherwise.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Vectors {
    Pixels(Vec<u8>),
    Floats(Vec<f32>),
}

impl Vectors {
    fn len(&self) -> usize {
        match self {
            Vectors::Pixels(v) => v.len(),
            Vectors::Floats(v) => v.len(),
        }
    }

    fn extend(&mut self, x: &[f32]) {
        let pixels = x.iter().all(|&v| is_pixel(v));
        match self {
            Vectors::Pixels(v) if pixels => v.extend(x.iter().map(|&f| f as u8)),
            Vectors::Pixels(v) => {
                let mut f: Vec<f32> = v.iter().map(|&b| b as f32).collect();
                f.extend_from_slice(x);
                *self = Vectors::Floats(f);
            }
            Vectors::Floats(v) => v.extend_from_slice(x),
        }
    }
}

impl FlyAnnIndex {
    /// An empty index for vectors of dimension `d`.
    pub fn new(hash: FlyHashConfig, config: AnnConfig, d: usize) -> Result<Self> {
        config.validate()?;
        Self::around(FlyIndex::new(hash, d)?, config)
    }

    fn around(exact: FlyIndex, config: AnnConfig) -> Result<Self> {
        let p = exact.hasher().params()?;
        let need = config.shape().outputs();
        if need > p.m as usize {
            return Err(Error::config(
                "tables",
                config.tables,
                format!("tables × bits × pool = {need} outputs, more than the code's {} (code_bits)", p.m),
            ));
        }
        crate::io::memory::ensure_fits("the buckets", (config.tables as u128) << config.bits << 5)?;
        let buckets = vec![Vec::new(); config.tables << config.bits];
        // Pixels as bytes only where the byte distance is the float one (d ≤ 4 128).
        let vectors = if p.d as usize <= PIXEL_EUCLID_MAX_DIM {
            Vectors::Pixels(Vec::new())
        } else {
            Vectors::Floats(Vec::new())
        };
        let (on, resident) = (AnnDevice::default(), Resident::default());
        Ok(FlyAnnIndex { exact, config, thresholds: Vec::new(), keys: Vec::new(), buckets, vectors, on, resident })
    }

    /// The same index, hashing and searching on `device`: on a GPU the candidates are found on
    /// the host and re-ranked on the GPU (the same ids and distances as the CPU's).
    pub fn with_device(self, device: Target) -> Self {
        self.with_ann_device(AnnDevice::One(device))
    }

    /// The same index on `on`: one device, or its ids sharded over several GPUs
    /// ([`AnnDevice::Gpus`]: queries hashed on GPU 0; the same answers as one GPU's).
    pub fn with_ann_device(mut self, on: AnnDevice) -> Self {
        self.exact = self.exact.with_device(match on {
            AnnDevice::One(t) => t,
            AnnDevice::Gpus(_) => Target::Gpu(0),
        });
        self.on = on;
        self
    }

    /// Where the index hashes and searches.
    pub fn ann_device(&self) -> AnnDevice {
        self.on
    }

    /// Where searches run, as a benchmark row names it: `cpu (N threads)`, `gpu (NAME)` or
    /// `N gpus (NAME)`.
    pub fn device_name(&self) -> Result<String> {
        let h = self.exact.hasher();
        Ok(super::ann_gpu::device_name(self.on, &*h.opened.get(h.device)?))
    }

    /// The exact index underneath (same ids, same codes).
    pub fn exact(&self) -> &FlyIndex {
        &self.exact
    }

    /// The configuration.
    pub fn config(&self) -> &AnnConfig {
        &self.config
    }

    /// Sets the default probe count of [`FlyAnnIndex::search`].
    pub fn set_probes(&mut self, probes: usize) -> Result<()> {
        self.config.check_probes(probes)?;
        self.config.probes = probes;
        Ok(())
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.exact.len()
    }

    /// Whether the index holds no vectors.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty()
    }

    fn sums(&self, x: &Matrix) -> Result<Vec<f32>> {
        let h = self.exact.hasher();
        let p = h.params()?;
        check_features("the vectors", x.rows, x.cols, p.d as usize)?;
        x.check_finite("the vectors")?;
        Ok(ann_search::pseudo_sums_batch(self.config.shape(), h.projection()?, p.s as usize, x))
    }

    /// Learns the thresholds (each pseudo-hash bit's median over `x`) without adding anything;
    /// faiss's `train`. Only an empty index trains: the ids it holds are filed under the
    /// thresholds they were added with.
    pub fn train(&mut self, x: &Matrix) -> Result<()> {
        if !self.is_empty() {
            return Err(Error::input("train", format!("the index already holds {} vectors", self.len())));
        }
        let sums = self.sums(x)?;
        self.thresholds = self.learn(&sums, x.rows);
        Ok(())
    }

    /// Whether the thresholds are learned ([`FlyAnnIndex::train`] or the first `add`).
    pub fn is_trained(&self) -> bool {
        !self.thresholds.is_empty()
    }

    fn learn(&self, sums: &[f32], rows: usize) -> Vec<u32> {
        use rayon::prelude::*;
        let per = self.config.tables * self.config.bits;
        (0..per).into_par_iter().map(|c| dense_median(rows, |i| sort_key(sums[i * per + c]))).collect()
    }

    /// Hashes `x`, files it in the buckets (an untrained index first learns the thresholds from
    /// `x`) and returns the new ids. A refused `add` adds nothing.
    pub fn add(&mut self, x: &Matrix) -> Result<std::ops::Range<usize>> {
        let sums = self.sums(x)?;
        let per = self.config.tables * self.config.bits;
        let start = self.len();
        if start as u64 + x.rows as u64 > u32::MAX as u64 {
            return Err(Error::input("the vectors", "the index holds at most 2^32 − 1 vectors"));
        }
        let keep = self.config.rerank == Rerank::Euclidean;
        crate::io::memory::ensure_fits(
            "the index",
            x.rows as u128 * (4 * self.config.tables as u128 + 4 + if keep { 4 * x.cols as u128 } else { 0 }),
        )?;
        let thresholds = if self.thresholds.is_empty() { self.learn(&sums, x.rows) } else { self.thresholds.clone() };
        let range = self.exact.add(x)?;
        self.thresholds = thresholds;
        let bits = self.config.bits;
        for (i, s) in sums.chunks(per).enumerate() {
            for (t, st) in s.chunks(bits).enumerate() {
                let key = neurobits_core::flyhash::pseudo_key(st, &self.thresholds[t * bits..(t + 1) * bits]);
                self.keys.push(key);
                self.buckets[t << bits | key as usize].push((start + i) as u32);
            }
        }
        if keep {
            self.vectors.extend(&x.data);
        }
        self.resident = Resident::default();
        Ok(range)
    }

    /// The `k` nearest of each query with the configured probe count.
    pub fn search(&self, queries: &Matrix, k: usize) -> Result<AnnNeighbours> {
        self.search_probes(queries, k, self.config.probes)
    }

    /// The `k` nearest of each query, probing `probes` buckets per table.
    pub fn search_probes(&self, queries: &Matrix, k: usize, probes: usize) -> Result<AnnNeighbours> {
        if k == 0 {
            return Err(Error::config("k", 0, "must be at least 1"));
        }
        self.config.check_probes(probes)?;
        let sums = self.sums(queries)?;
        crate::io::memory::ensure_fits("the search results", queries.rows as u128 * k as u128 * 12)?;
        let tables =
            Tables { shape: self.config.shape(), thresholds: &self.thresholds, buckets: &self.buckets, n: self.len() };
        let codes;
        let rank = match self.config.rerank {
            Rerank::Euclidean => Rank::Euclidean { db: &self.vectors, queries },
            Rerank::Hamming => {
                codes = self.exact.hasher().transform(queries)?;
                Rank::Hamming { db: self.exact.codes(), queries: &codes, words: self.words() }
            }
        };
        let h = self.exact.hasher();
        let device = h.opened.get(h.device)?;
        let cpu = |c: &crate::device::Cpu| Ok(c.install(|| ann_search::search(&tables, &sums, &rank, k, probes)));
        let gpu = |g: Option<&std::sync::Arc<neurobits_gpu_host::Gpu>>, n| {
            super::ann_gpu::search(&self.resident, &device, g, n, &tables, &sums, &rank, k, probes)
        };
        let (hits, candidates) = match self.on {
            _ if self.is_empty() => (vec![Vec::new(); queries.rows], 0),
            AnnDevice::Gpus(n) => gpu(None, n)?,
            AnnDevice::One(_) => device.run(|_| gpu(device.gpu_shared(), None), cpu)?,
        };
        let mut out = AnnNeighbours { k, distances: Vec::with_capacity(queries.rows * k), ids: Vec::new(), candidates };
        out.ids.reserve(queries.rows * k);
        for row in hits {
            for j in 0..k {
                let (id, d) = row.get(j).map_or((-1, f32::INFINITY), |&(i, d)| (i as i64, d));
                out.ids.push(id);
                out.distances.push(d);
            }
        }
        Ok(out)
    }

    fn words(&self) -> usize {
        self.exact.hasher().params().map(|p| p.code_words()).unwrap_or(1)
    }
}

#[derive(Serialize, Deserialize)]
struct SavedAnn {
    hasher: SavedHasher,
    ann: AnnConfig,
    len: u64,
}

impl Model for FlyAnnIndex {
    const KIND: &'static str = "flyhash-ann";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let saved = SavedAnn {
            hasher: SavedHasher::of(self.exact.hasher())?,
            ann: self.config.clone(),
            len: self.len() as u64,
        };
        let v = serde_json::to_value(saved).map_err(|e| Error::input(Self::KIND, e.to_string()))?;
        let mut p = Payload::default();
        p.u32s(&self.thresholds).u32s(&self.keys);
        match &self.vectors {
            Vectors::Pixels(v) => p.u64(0).bytes(v),
            Vectors::Floats(v) => p.u64(1).u32s(&v.iter().map(|f| f.to_bits()).collect::<Vec<_>>()),
        };
        p.words(self.exact.codes());
        Ok((v, p.0))
    }

    fn from_parts(saved: &model_file::Saved, name: &str) -> Result<Self> {
        let s = model_file::config::<SavedAnn>(saved, name)?;
        s.ann.validate().map_err(|e| Error::input(name, format!("approximate index configuration: {e}")))?;
        let hasher = s.hasher.hasher(name)?;
        let d = hasher.params()?.d as usize;
        let mut index = Self::around(FlyIndex::with_hasher(hasher)?, s.ann)?;
        let mut r = Reader::new(&saved.payload, name);
        let (thresholds, keys) = (r.u32s()?, r.u32s()?);
        let vectors = match r.u64()? {
            0 if d <= PIXEL_EUCLID_MAX_DIM => Vectors::Pixels(r.bytes()?.to_vec()),
            1 => Vectors::Floats(r.u32s()?.into_iter().map(f32::from_bits).collect()),
            t => return Err(Error::input(name, format!("vector storage {t} unknown (a corrupted file?)"))),
        };
        let codes = r.words()?;
        r.finish()?;
        let (n, c) = (s.len as usize, &index.config);
        let words = index.words();
        let bad =
            |what: &str| Error::input(name, format!("{what} do not match the index's {n} vectors (a corrupted file?)"));
        if !thresholds.is_empty() && thresholds.len() != c.tables * c.bits || n > 0 && thresholds.is_empty() {
            return Err(bad("the thresholds"));
        }
        if keys.len() != n * c.tables || keys.iter().any(|&k| k as u64 >= 1u64 << c.bits) {
            return Err(bad("the bucket keys"));
        }
        let keep = c.rerank == Rerank::Euclidean;
        if vectors.len() != if keep { n * d } else { 0 } || codes.len() != n * words {
            return Err(bad("the vectors or codes"));
        }
        index.exact.set_codes(codes);
        for (i, ks) in keys.chunks(c.tables.max(1)).enumerate() {
            for (t, &k) in ks.iter().enumerate() {
                index.buckets[t << c.bits | k as usize].push(i as u32);
            }
        }
        index.thresholds = thresholds;
        index.keys = keys;
        index.vectors = vectors;
        Ok(index)
    }
}
