//! A FlyHash index, as faiss users know one: `add` vectors (hashed by the index's own FlyHash),
//! `search(queries, k)` for the k nearest codes by Hamming distance (exhaustive and exact, on the
//! CPU or a GPU), `save`/`load`, and [`FlyIndex::append`] to add vectors to a saved index
//! without rewriting what is there.
//!
//! The file is a saved model of kind `flyhash-index` (header: the FlyHash configuration and
//! parameters; no payload) followed by blocks of codes, one per `add`:
//!
//! | size | field |
//! |---|---|
//! | 8 | magic `NBCODES\n` |
//! | 8 | codes n in the block |
//! | 8 | words per code w = ⌈m/64⌉ |
//! | 8·n·w | the codes, little-endian words |
//! | 32 | SHA-256 of the block's bytes before it |
//!
//! An append locks the file (`flock`), checks every block already there, writes its block and
//! syncs; if anything fails the file is cut back to its previous length, so a reader sees the
//! index before or after the add, never half of it.

use neurobits_core::Word;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;

use super::data::Matrix;
use super::model::{FlyHash, FlyHashConfig, SavedHasher};
use crate::device::{Device, Target};
use crate::error::{Error, Result};
use crate::io::model_file;
use crate::model::Model;
use crate::resident::Kept;
use neurobits_gpu_host::flyhash::{DeviceCodes, HAMMING_MAX_WORDS};

const BLOCK_MAGIC: &[u8; 8] = b"NBCODES\n";

/// Neighbours of a batch of queries: row `q` holds query `q`'s `k` nearest codes, nearest first,
/// ties by lower id; where the index has fewer than `k` codes the row is padded with id `-1` and
/// distance `u32::MAX` (as faiss pads with `-1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbours {
    /// Neighbours per query.
    pub k: usize,
    /// Hamming distances, `queries × k`.
    pub distances: Vec<u32>,
    /// Ids (the order in which codes were added, from 0), `queries × k`.
    pub ids: Vec<i64>,
}

/// An exact Hamming index of FlyHash codes.
///
/// ```
/// use neurobits::flyhash::{data::Matrix, index::FlyIndex, model::FlyHashConfig};
/// use neurobits::model::Model;
/// let x = Matrix { rows: 3, cols: 4, data: vec![1., 0., 0., 2., 0., 3., 1., 0., 1., 0., 0., 2.1] };
/// let cfg = FlyHashConfig { code_bits: Some(64), winners: Some(8), ..Default::default() };
/// let mut index = FlyIndex::new(cfg, 4)?;
/// index.add(&x)?;
/// let hits = index.search(&x, 2)?;
/// assert_eq!(hits.ids[0], 0); // each vector finds itself first
/// let file = tempfile::NamedTempFile::new().unwrap();
/// index.save(file.path())?;
/// assert_eq!(FlyIndex::load(file.path())?.search(&x, 2)?, hits);
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FlyIndex {
    hasher: FlyHash,
    codes: Vec<Word>,
    /// The codes as last uploaded to a GPU: searches after the first reuse them (the upload
    /// costs more than a search); `add` and `truncate` drop them.
    resident: Kept<DeviceCodes>,
}

impl FlyIndex {
    /// An empty index for vectors of dimension `d`, hashed as `config` says.
    pub fn new(config: FlyHashConfig, d: usize) -> Result<Self> {
        let mut hasher = FlyHash::new(config);
        let p = hasher.config.params_with(d, |m| m / 20)?;
        hasher.fit_params(p)?;
        Ok(FlyIndex { hasher, codes: Vec::new(), resident: Kept::default() })
    }

    /// An empty index around a fitted FlyHash.
    pub fn with_hasher(hasher: FlyHash) -> Result<Self> {
        hasher.params()?;
        Ok(FlyIndex { hasher, codes: Vec::new(), resident: Kept::default() })
    }

    /// The same index, hashing and searching on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.hasher.device = device;
        self
    }

    /// The index's FlyHash.
    pub fn hasher(&self) -> &FlyHash {
        &self.hasher
    }

    fn words(&self) -> usize {
        self.hasher.params().map(|p| p.code_words()).unwrap_or(1)
    }

    /// Codes held.
    pub fn len(&self) -> usize {
        self.codes.len() / self.words()
    }

    /// Whether the index holds no codes.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The codes, `len() · ⌈m/64⌉` words.
    pub fn codes(&self) -> &[Word] {
        &self.codes
    }

    /// Replaces the codes (the approximate index's loader; `codes` holds whole codes).
    pub(crate) fn set_codes(&mut self, codes: Vec<Word>) {
        self.codes = codes;
        self.resident = Kept::default();
    }

    /// Hashes `x` and adds its codes; their ids continue from [`FlyIndex::len`].
    pub fn add(&mut self, x: &Matrix) -> Result<std::ops::Range<usize>> {
        let start = self.len();
        let codes = self.hasher.transform(x)?;
        crate::io::memory::ensure_fits("the index", (self.codes.len() + codes.len()) as u128 * 8)?;
        self.codes.extend_from_slice(&codes);
        self.resident = Kept::default();
        Ok(start..self.len())
    }

    /// Keeps the first `len` codes (ids `0..len`) and drops the rest: undoes [`FlyIndex::add`]s
    /// made since the index held `len` codes.
    pub fn truncate(&mut self, len: usize) {
        let words = self.words();
        self.codes.truncate(len.saturating_mul(words));
        self.resident = Kept::default();
    }

    /// The `k` nearest codes of each query vector.
    pub fn search(&self, queries: &Matrix, k: usize) -> Result<Neighbours> {
        self.search_on(queries, k, self.hasher.device)
    }

    /// [`FlyIndex::search`] on `device` for this call (`&self`: no copy of the codes, and several
    /// threads may search one index at once, each on its device).
    pub fn search_on(&self, queries: &Matrix, k: usize, device: Target) -> Result<Neighbours> {
        let device = self.hasher.opened.get(device)?;
        let q = self.hasher.transform_on(&device, queries)?;
        self.search_codes_on(&device, &q, k)
    }

    /// The `k` nearest codes of each query code (`⌈m/64⌉` words each).
    pub fn search_codes(&self, q: &[Word], k: usize) -> Result<Neighbours> {
        self.search_codes_on(&self.hasher.opened.get(self.hasher.device)?, q, k)
    }

    fn search_codes_on(&self, device: &std::sync::Arc<Device>, q: &[Word], k: usize) -> Result<Neighbours> {
        if k == 0 {
            return Err(Error::config("k", 0, "must be at least 1"));
        }
        let words = self.words();
        if q.is_empty() || !q.len().is_multiple_of(words) {
            return Err(Error::input(
                "the queries",
                format!("{} words is not a whole number of {words}-word codes", q.len()),
            ));
        }
        let nq = q.len() / words;
        let r = k.min(self.len());
        crate::io::memory::ensure_fits("the search results", nq as u128 * k as u128 * 12)?;
        let hits = if r == 0 {
            vec![Vec::new(); nq]
        } else {
            device.run(
                |g| {
                    if words > HAMMING_MAX_WORDS {
                        return Ok(g.hamming_top_r(&self.codes, q, words, r)?);
                    }
                    let codes = self.resident.get(device, || g.upload_codes(&self.codes, words))?;
                    Ok(codes.top_r(g, &self.codes, q, r)?.hits)
                },
                |cpu| Ok(cpu.install(|| super::search::top_r(&self.codes, q, words, r))),
            )?
        };
        let mut out = Neighbours { k, distances: Vec::with_capacity(nq * k), ids: Vec::with_capacity(nq * k) };
        for row in hits {
            for j in 0..k {
                let (id, d) = row.get(j).map_or((-1, u32::MAX), |&(i, d)| (i as i64, d));
                out.ids.push(id);
                out.distances.push(d);
            }
        }
        Ok(out)
    }

    /// Hashes `x` with the index saved at `path` and appends the codes to that file without
    /// rewriting it; returns the new codes' ids.
    pub fn append(path: &Path, x: &Matrix, device: Target) -> Result<std::ops::Range<usize>> {
        let file = std::fs::OpenOptions::new().read(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
        lock(&file, path)?;
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let index = Self::decode(&bytes, &name)?.with_device(device);
        let codes = index.hasher.transform(x)?;
        let start = index.len();
        let block = block(&codes, index.words());
        let written = (|| -> std::io::Result<()> {
            (&file).write_all(&block)?;
            file.sync_all()
        })();
        if let Err(e) = written {
            // Cut the file back to the index it was: a failed add adds nothing.
            let _ = file.set_len(bytes.len() as u64);
            return Err(Error::io(path, e));
        }
        Ok(start..start + codes.len() / index.words())
    }

    fn decode(b: &[u8], name: &str) -> Result<Self> {
        let saved = model_file::decode(b, name, <Self as Model>::KIND)?;
        let mut index = Self::from_parts(&saved, name)?;
        let words = index.words();
        let mut at = saved.end;
        while at < b.len() {
            let bad = |why: &str| Error::input(name, format!("code block at byte {at}: {why}"));
            let head = b.get(at..at + 24).ok_or_else(|| bad("truncated (an interrupted add?)"))?;
            if &head[..8] != BLOCK_MAGIC {
                return Err(bad("bad magic (not an index block)"));
            }
            let n = u64::from_le_bytes(head[8..16].try_into().expect("8"));
            let w = u64::from_le_bytes(head[16..24].try_into().expect("8"));
            if w != words as u64 {
                return Err(bad(&format!("{w} words per code, the index's codes have {words}")));
            }
            let len = n
                .checked_mul(8 * w)
                .and_then(|l| usize::try_from(l).ok())
                .filter(|&l| l <= b.len() - at - 24)
                .ok_or_else(|| bad(&format!("{n} codes claimed, more than the file holds (an interrupted add?)")))?;
            let end = at + 24 + len;
            let sum = b.get(end..end + 32).ok_or_else(|| bad("truncated (an interrupted add?)"))?;
            if Sha256::digest(&b[at..end]).as_slice() != sum {
                return Err(bad("checksum mismatch: the file is corrupted"));
            }
            index.codes.extend(b[at + 24..end].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))));
            at = end + 32;
        }
        Ok(index)
    }
}

fn block(codes: &[Word], words: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(56 + codes.len() * 8);
    b.extend_from_slice(BLOCK_MAGIC);
    b.extend_from_slice(&((codes.len() / words) as u64).to_le_bytes());
    b.extend_from_slice(&(words as u64).to_le_bytes());
    codes.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
    let sum = Sha256::digest(&b);
    b.extend_from_slice(&sum);
    b
}

/// An exclusive lock on the index file for one append, so that two adds at once queue instead of
/// interleaving their blocks. Released when the file is closed.
fn lock(file: &std::fs::File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor this process holds open; no memory is passed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(Error::io(path, std::io::Error::last_os_error()));
    }
    Ok(())
}

impl Model for FlyIndex {
    const KIND: &'static str = "flyhash-index";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        self.hasher.parts().map(|(config, _)| (config, Vec::new()))
    }

    fn from_parts(saved: &model_file::Saved, name: &str) -> Result<Self> {
        let hasher = model_file::config::<SavedHasher>(saved, name)?.hasher(name)?;
        if !saved.payload.is_empty() {
            return Err(Error::input(name, "an index header has no payload (a corrupted file?)"));
        }
        Ok(FlyIndex { hasher, codes: Vec::new(), resident: Kept::default() })
    }

    fn to_bytes(&self) -> Result<Vec<u8>> {
        let (config, payload) = self.parts()?;
        let mut b = model_file::encode(Self::KIND, &config, &payload)?;
        if !self.codes.is_empty() {
            b.extend_from_slice(&block(&self.codes, self.words()));
        }
        Ok(b)
    }

    fn from_bytes(b: &[u8], name: &str) -> Result<Self> {
        Self::decode(b, name)
    }

    fn save(&self, path: &Path) -> Result<()> {
        let b = self.to_bytes()?;
        crate::io::atomic::write_atomic(path, |w| Ok(w.write_all(&b)?))?;
        Ok(())
    }
}
