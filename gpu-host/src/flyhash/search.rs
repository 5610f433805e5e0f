//! Hamming top-r on the GPU over a resident database: `fly_hamming_keys` turns every (code,
//! query) distance into a 16-bit select key, `fly_hamming_select` marks each query's `r` largest
//! keys (nearest codes, ties to the lower index: the core's rule; the database cut in chunks over
//! every SM), and the host reads the marked indices and their distances back. Exact; at most 1 023 words per code (distances < 2¹⁶).

use cudarc::driver::CudaSlice;
use neurobits_core::bits::set_bits;
use neurobits_core::flyhash::kernels::{self as k, HAMMING_TILE_QUERIES};
use neurobits_core::flyhash::{hamming, sort_hits};
use neurobits_core::Word;
use std::time::Instant;

use crate::gpu::STAGING_HALF;
use crate::launch::{launch, launch_shaped, rd, resident_blocks_shaped, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// A database of codes resident on the device (word-major, zero past the last code): upload it
/// once with [`Gpu::upload_codes`] and search it with every batch of queries.
pub struct DeviceCodes {
    words: usize,
    n: usize,
    np: usize,
    db: CudaSlice<Word>,
}

/// A [`DeviceCodes`] with the GPU it lives on and the host codes it came from (the hits'
/// distances are read there).
pub struct HammingIndex<'g, 'a> {
    gpu: &'g Gpu,
    host: &'a [Word],
    codes: DeviceCodes,
}

/// Hits of a search and its time.
pub struct HammingHits {
    /// Per query, `(index, distance)` nearest first, ties by index.
    pub hits: Vec<Vec<(u32, u32)>>,
    /// GPU time inside the kernels.
    pub kernel_ms: f64,
    /// Of which the key kernel (the database pass).
    pub keys_ms: f64,
    /// Queries uploaded, kernels, marks downloaded and read.
    pub total_ms: f64,
}

/// Which kernel computes the distances: the same keys, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKernel {
    /// `fly_hamming_keys_mma`: the binary tensor cores (`mma … .b1 … .and.popc`), the default.
    TensorCores,
    /// `fly_hamming_keys`: XOR and popcount on the CUDA cores (kept for comparison: the
    /// bench times both).
    Simt,
}

/// Longest code the key kernel takes, in words.
pub const HAMMING_MAX_WORDS: usize = 1023;

impl Gpu {
    /// Uploads `db` (codes of `words` words) word-major for [`HammingIndex::top_r`].
    pub fn hamming_index<'a>(&self, db: &'a [Word], words: usize) -> Result<HammingIndex<'_, 'a>, GpuError> {
        Ok(HammingIndex { gpu: self, host: db, codes: self.upload_codes(db, words)? })
    }

    /// Uploads `db` (codes of `words` words, as the host holds them) and lays it out word-major
    /// on the device: chunks of codes travel through the pinned staging buffer and
    /// `fly_codes_word_major` transposes each one while the next is copied.
    pub fn upload_codes(&self, db: &[Word], words: usize) -> Result<DeviceCodes, GpuError> {
        if words == 0 || words > HAMMING_MAX_WORDS || !db.len().is_multiple_of(words) || db.is_empty() {
            return Err(GpuError::Input(format!("{} words are not codes of 1..={HAMMING_MAX_WORDS} words", db.len())));
        }
        let n = db.len() / words;
        if n > u32::MAX as usize / 2 {
            return Err(GpuError::Input(format!("{n} codes exceed one index")));
        }
        let np = n.next_multiple_of(64);
        let per = (STAGING_HALF / words).min(n);
        self.ensure_fits((np + 2 * per) as u64 * words as u64 * 8)?;
        let mut out = self.stream.alloc_zeros::<Word>(np * words)?;
        // SAFETY: each part is copied into its buffer before the kernel reads it.
        let mut tmp = unsafe { [self.stream.alloc::<Word>(per * words)?, self.stream.alloc::<Word>(per * words)?] };
        self.upload_staged(db, per * words, &mut tmp, |_, range, src| {
            let count = range.len() / words;
            let a = k::CodesWordMajor {
                words: words as u32,
                count: count as u32,
                j0: (range.start / words) as u32,
                np: np as u32,
                src: rd(self, src),
                dst: wr(self, &mut out),
            };
            // SAFETY: `src` holds the part's count·words words, `dst` words·np, and
            // j0 + count ≤ n ≤ np.
            unsafe { launch(self, &mut KernelTimer::default(), (count * words) as u64, a) }
        })?;
        Ok(DeviceCodes { words, n, np, db: out })
    }
}

impl DeviceCodes {
    /// Codes held.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no code is held (never: [`Gpu::upload_codes`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Words per code.
    pub fn words(&self) -> usize {
        self.words
    }

    /// [`HammingIndex::top_r`] on `gpu` (the one it was uploaded to), `host` being the codes
    /// uploaded.
    pub fn top_r(&self, gpu: &Gpu, host: &[Word], q: &[Word], r: usize) -> Result<HammingHits, GpuError> {
        if host.len() != self.n * self.words {
            return Err(GpuError::Input(format!("{} host words for {} codes on the device", host.len(), self.n)));
        }
        HammingIndex::search(gpu, host, self, q, r, KeyKernel::TensorCores)
    }
}

impl HammingIndex<'_, '_> {
    /// Codes in the index.
    pub fn len(&self) -> usize {
        self.codes.n
    }

    /// Whether the index holds no code (never: [`Gpu::hamming_index`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.codes.n == 0
    }

    /// The `r` nearest codes of each query (`q`: codes of the index's length), nearest first,
    /// ties by index; `r` is capped at the index's size.
    pub fn top_r(&self, q: &[Word], r: usize) -> Result<HammingHits, GpuError> {
        self.top_r_with(q, r, KeyKernel::TensorCores)
    }

    /// [`HammingIndex::top_r`] with the distances from `kernel`.
    pub fn top_r_with(&self, q: &[Word], r: usize, kernel: KeyKernel) -> Result<HammingHits, GpuError> {
        Self::search(self.gpu, self.host, &self.codes, q, r, kernel)
    }

    fn search(
        g: &Gpu,
        host: &[Word],
        codes: &DeviceCodes,
        q: &[Word],
        r: usize,
        kernel: KeyKernel,
    ) -> Result<HammingHits, GpuError> {
        let start = Instant::now();
        let (words, np) = (codes.words, codes.np);
        if !q.len().is_multiple_of(words) {
            return Err(GpuError::Input(format!("{} query words are not codes of {words} words", q.len())));
        }
        let nq = q.len() / words;
        let r = r.min(codes.n);
        if nq == 0 || r == 0 {
            return Ok(HammingHits { hits: vec![Vec::new(); nq], kernel_ms: 0.0, keys_ms: 0.0, total_ms: 0.0 });
        }
        let bp = nq.next_multiple_of(32);
        let marks_words = np / 64 * nq;
        g.ensure_fits((q.len() + marks_words) as u64 * 8 + (np * bp * 2 + bp * 1024) as u64)?;
        let dq = g.stream.clone_htod(q)?;
        // SAFETY: the key kernel writes the keys of every tile of real queries and the select
        // every mark word of the nq queries (it reads the padding lanes' keys, unwritten, but
        // stores nothing for them).
        let (mut keys, mut marks) = unsafe { (g.stream.alloc::<u16>(np * bp)?, g.stream.alloc::<u64>(marks_words)?) };
        let mut hist = g.stream.alloc_zeros::<u32>(bp * 256)?;
        let shared = match kernel {
            KeyKernel::TensorCores => k::hamming_keys_mma_shared(words as u32),
            KeyKernel::Simt => k::hamming_keys_shared(words as u32),
        };
        let shape = (k::HAMMING_THREADS, shared);
        let slots = match kernel {
            KeyKernel::TensorCores => resident_blocks_shaped::<k::HammingKeysMma>(g, shape.0, shape.1)?,
            KeyKernel::Simt => resident_blocks_shaped::<k::HammingKeys>(g, shape.0, shape.1)?,
        } as usize;
        // Tiles of real queries only: the select reads the padding lanes' keys but writes no marks
        // for them.
        let tiles = nq.div_ceil(HAMMING_TILE_QUERIES as usize);
        // Octet chunks: about four blocks per resident slot over all tiles, below 8 192 octets.
        let chunks = (4 * slots).div_ceil(tiles).clamp((np / 8).div_ceil(8191), np / 8);
        let octets = (np / 8).div_ceil(chunks);
        let chunks = (np / 8).div_ceil(octets);
        let mut t = KernelTimer::default();
        let grid = ((tiles * chunks) as u32, shape.0, shape.1);
        let (db, dq, kw, hw) = (rd(g, &codes.db), rd(g, &dq), wr(g, &mut keys), wr(g, &mut hist));
        let (words, n, np32, nq32, bp32) = (words as u32, codes.n as u32, np as u32, nq as u32, bp as u32);
        // SAFETY (both): `db` holds words·np words, `dq` nq·words, `keys` np·bp, `hist` bp·256;
        // the shared size is the kernel's for these words.
        match kernel {
            KeyKernel::TensorCores => {
                let a = k::HammingKeysMma {
                    words,
                    n,
                    np: np32,
                    nq: nq32,
                    bp: bp32,
                    octets: octets as u32,
                    tiles: tiles as u32,
                    db,
                    q: dq,
                    keys: kw,
                    hist: hw,
                };
                unsafe { launch_shaped(g, Some(&mut t), grid, a)? }
            }
            KeyKernel::Simt => {
                let a = k::HammingKeys {
                    words,
                    n,
                    np: np32,
                    nq: nq32,
                    bp: bp32,
                    octets: octets as u32,
                    db,
                    q: dq,
                    keys: kw,
                    hist: hw,
                };
                unsafe { launch_shaped(g, Some(&mut t), grid, a)? }
            }
        }
        let words = words as usize;
        // The select over chunks of the database: about two resident blocks' worth per slot.
        let groups = bp / 32;
        let shape = (k::HAMMING_SELECT_THREADS, k::HAMMING_SELECT_SHARED);
        let slots = resident_blocks_shaped::<k::HammingSelect>(g, shape.0, shape.1)? as usize;
        let code_words = np / 64;
        let cw = code_words.div_ceil((2 * slots).div_ceil(groups).max(1));
        let chunks = code_words.div_ceil(cw);
        let mut hist2 = g.stream.alloc_zeros::<u32>(bp * 256)?;
        // SAFETY: phase 1 writes every part's count before phase 2 reads any.
        let mut ties = unsafe { g.stream.alloc::<u32>(chunks * k::HAMMING_SELECT_PARTS as usize * bp)? };
        for phase in 0..3 {
            let a = k::HammingSelect {
                m: np as u32,
                k: r as u32,
                b: nq as u32,
                bp: bp as u32,
                cw: cw as u32,
                phase,
                keys: rd(g, &keys),
                hist: rd(g, &hist),
                hist2: wr(g, &mut hist2),
                ties: wr(g, &mut ties),
                codes: wr(g, &mut marks),
            };
            // SAFETY: a block per (chunk of cw words, 32 queries) over np keys per query; `hist2`
            // holds bp·256 counts, `ties` chunks·parts·bp, `marks` nq·np/64 words (phase 1 writes
            // every one of the real queries').
            unsafe { launch_shaped(g, Some(&mut t), ((chunks * groups) as u32, shape.0, shape.1), a)? };
        }
        let mut m = Vec::new();
        g.download_into(&marks, &mut m)?;
        let (kernel_ms, keys_ms) = (t.total_ms()?, t.each_ms()?[0]);
        let per = np / 64;
        let hits = (0..nq)
            .map(|qi| {
                let query = &q[qi * words..(qi + 1) * words];
                let mut v = Vec::with_capacity(r);
                for (wi, &word) in m[qi * per..(qi + 1) * per].iter().enumerate() {
                    for j in set_bits(word).map(|b| wi * 64 + b) {
                        v.push((j as u32, hamming(&host[j * words..(j + 1) * words], query)));
                    }
                }
                sort_hits(&mut v);
                v
            })
            .collect();
        Ok(HammingHits { hits, kernel_ms, keys_ms, total_ms: start.elapsed().as_secs_f64() * 1e3 })
    }
}
