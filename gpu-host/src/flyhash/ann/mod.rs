//! The approximate index's re-ranking on the GPU, on one and on several. Candidate generation
//! (bucket keys, multi-probe order, bucket reads) is table lookups and stays on the host; what
//! the GPU gets is each query's candidate ids in compressed rows ([`Candidates`]), against rows
//! resident on it ([`DeviceRows`]): `fly_ann_dist` computes every candidate's distance through
//! the core's functions and `fly_ann_top_r` each query's `r` nearest through the core's `top_r`,
//! so the hits are the CPU's, ids and distances.
//!
//! [`ShardedRows`] splits the ids into contiguous shards, one per GPU (at most one GPU per id:
//! `min(gpus, n)` shards), each shard's rows resident on its GPU; a batch's candidates are split
//! by shard ([`split_candidates`]), searched on every GPU at once (a host thread each), and the
//! shards' hits merged by (distance key, id) ([`merge_hits`]): the result is one GPU's.

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::kernels::{self as k, ANN_FLOATS, ANN_HAMMING, ANN_PIXELS};
use neurobits_core::flyhash::{is_pixel, sort_hits};
use neurobits_core::kernel::DevPtr;
use neurobits_core::Word;

mod sharded;
pub use sharded::{merge_hits, shard_bounds, split_candidates, ShardedRows};

use crate::gpu::STAGING_HALF;
use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// The rows an approximate index re-ranks with, as the host keeps them.
#[derive(Clone, Copy, Debug)]
pub enum AnnRows<'a> {
    /// Fly codes of `words` words each (Hamming re-ranking).
    Codes {
        /// Words per code.
        words: usize,
        /// The codes, row-major.
        codes: &'a [Word],
    },
    /// Pixel vectors of `d` bytes each (squared Euclidean re-ranking).
    Pixels {
        /// Dimension.
        d: usize,
        /// The pixels, row-major.
        bytes: &'a [u8],
    },
    /// `f32` vectors of `d` values each (squared Euclidean re-ranking).
    Floats {
        /// Dimension.
        d: usize,
        /// The values, row-major.
        values: &'a [f32],
    },
}

impl<'a> AnnRows<'a> {
    /// Values (words, bytes or floats) per row.
    pub fn row(&self) -> usize {
        match *self {
            AnnRows::Codes { words, .. } => words,
            AnnRows::Pixels { d, .. } | AnnRows::Floats { d, .. } => d,
        }
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        let (len, row) = match *self {
            AnnRows::Codes { words, codes } => (codes.len(), words),
            AnnRows::Pixels { d, bytes } => (bytes.len(), d),
            AnnRows::Floats { d, values } => (values.len(), d),
        };
        len / row.max(1)
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn kind(&self) -> u32 {
        match self {
            AnnRows::Codes { .. } => ANN_HAMMING,
            AnnRows::Pixels { .. } => ANN_PIXELS,
            AnnRows::Floats { .. } => ANN_FLOATS,
        }
    }

    /// Rows `range` only.
    pub fn rows(&self, range: std::ops::Range<usize>) -> Self {
        let r = self.row();
        match *self {
            AnnRows::Codes { words, codes } => AnnRows::Codes { words, codes: &codes[range.start * r..range.end * r] },
            AnnRows::Pixels { d, bytes } => AnnRows::Pixels { d, bytes: &bytes[range.start * r..range.end * r] },
            AnnRows::Floats { d, values } => AnnRows::Floats { d, values: &values[range.start * r..range.end * r] },
        }
    }

    /// The rows as little-endian words, the last one zero-padded (what the device holds).
    fn words(&self) -> std::borrow::Cow<'a, [Word]> {
        let pack = |b: &[u8]| b.chunks(8).map(|c| c.iter().rev().fold(0u64, |w, &x| w << 8 | x as u64)).collect();
        match *self {
            AnnRows::Codes { codes, .. } => std::borrow::Cow::Borrowed(codes),
            AnnRows::Pixels { bytes, .. } => std::borrow::Cow::Owned(pack(bytes)),
            AnnRows::Floats { values, .. } => std::borrow::Cow::Owned(
                values.chunks(2).map(|c| c.iter().rev().fold(0u64, |w, &x| w << 32 | x.to_bits() as u64)).collect(),
            ),
        }
    }
}

/// The queries of a re-ranking, in the form of the rows: codes for [`AnnRows::Codes`], vectors
/// otherwise.
#[derive(Clone, Copy, Debug)]
pub enum AnnQueries<'a> {
    /// `nq · words` code words.
    Codes(&'a [Word]),
    /// `nq · d` values.
    Vectors(&'a [f32]),
}

/// Each query's candidate ids, ascending, as compressed rows: query `q`'s are
/// `ids[offsets[q] .. offsets[q + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct Candidates<'a> {
    /// `nq + 1` ascending offsets, from 0.
    pub offsets: &'a [u64],
    /// The ids.
    pub ids: &'a [u32],
}

/// Per query, `(id, key)` of its nearest candidates, nearest first, ties by id (key: the Hamming
/// distance, or `sort_key` of the squared Euclidean distance).
pub type AnnHits = Vec<Vec<(u32, u32)>>;

/// Rows resident on one GPU (see [`Gpu::upload_rows`]).
pub struct DeviceRows {
    kind: u32,
    row: usize,
    n: usize,
    db: CudaSlice<Word>,
}

/// Candidate entries per launch at most: bounds the device buffers of a batch (two `u32` per
/// entry) and keeps offsets in `u32`.
const CHUNK_ENTRIES: u64 = 1 << 26;

impl Gpu {
    /// Uploads `rows` (through the pinned staging buffer) for [`DeviceRows::rerank`].
    pub fn upload_rows(&self, rows: &AnnRows) -> Result<DeviceRows, GpuError> {
        let (row, n) = (rows.row(), rows.len());
        if row == 0 || row > u32::MAX as usize || n > u32::MAX as usize {
            return Err(GpuError::Input(format!("{n} rows of {row} values cannot be re-ranked on the GPU")));
        }
        let src = rows.words();
        let len = src.len().max(1);
        self.ensure_fits(len as u64 * 8 + 2 * STAGING_HALF.min(len) as u64 * 8)?;
        let mut db = self.stream.alloc_zeros::<Word>(len)?;
        if !src.is_empty() {
            let part = STAGING_HALF.min(src.len());
            // SAFETY: each half is written by its copy before the device-to-device copy reads it.
            let mut tmp = unsafe { [self.stream.alloc::<Word>(part)?, self.stream.alloc::<Word>(part)?] };
            self.upload_staged(&src, part, &mut tmp, |_, range, t| {
                let len = range.len();
                self.stream.memcpy_dtod(&t.slice(0..len), &mut db.slice_mut(range))?;
                Ok(())
            })?;
        }
        Ok(DeviceRows { kind: rows.kind(), row, n, db })
    }
}

/// The queries on one GPU: codes, or floats plus (for pixel rows) bytes and per-query flags.
struct DeviceQueries {
    codes: Option<CudaSlice<Word>>,
    floats: Option<CudaSlice<f32>>,
    pixels: Option<CudaSlice<u8>>,
    flags: Option<CudaSlice<u32>>,
}

impl DeviceRows {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn queries(&self, gpu: &Gpu, q: &AnnQueries) -> Result<(usize, DeviceQueries), GpuError> {
        let w = self.row;
        let mut out = DeviceQueries { codes: None, floats: None, pixels: None, flags: None };
        let values = match (*q, self.kind) {
            (AnnQueries::Codes(c), ANN_HAMMING) => c.len(),
            (AnnQueries::Vectors(v), ANN_PIXELS | ANN_FLOATS) => v.len(),
            _ => return Err(GpuError::Input("queries of another kind than the resident rows".into())),
        };
        if !values.is_multiple_of(w) {
            return Err(GpuError::Input(format!("{values} query values are not rows of {w}")));
        }
        let nq = values / w;
        gpu.ensure_fits(values as u64 * 9 + nq as u64 * 4 + 64)?;
        match *q {
            AnnQueries::Codes(c) => out.codes = Some(gpu.stream.clone_htod(c)?),
            AnnQueries::Vectors(v) => {
                out.floats = Some(gpu.stream.clone_htod(v)?);
                if self.kind == ANN_PIXELS {
                    // As the CPU decides: a query is compared as bytes iff every value is a pixel.
                    let flags: Vec<u32> = v.chunks(w).map(|x| x.iter().all(|&f| is_pixel(f)) as u32).collect();
                    let mut bytes = vec![0u8; v.len()];
                    for ((b, x), &f) in bytes.chunks_mut(w).zip(v.chunks(w)).zip(&flags) {
                        if f != 0 {
                            b.iter_mut().zip(x).for_each(|(b, &x)| *b = x as u8);
                        }
                    }
                    out.pixels = Some(gpu.stream.clone_htod(&bytes)?);
                    out.flags = Some(gpu.stream.clone_htod(&flags)?);
                }
            }
        }
        Ok((nq, out))
    }

    /// Each query's `r` nearest candidates on `gpu` (the one the rows were uploaded to; ids
    /// are rows of these rows), nearest first, ties by id; fewer where a query has fewer.
    pub fn rerank(&self, gpu: &Gpu, q: &AnnQueries, cand: &Candidates, r: usize) -> Result<AnnHits, GpuError> {
        if r == 0 || r > u32::MAX as usize / 2 {
            return Err(GpuError::Input(format!("{r} neighbours per query")));
        }
        let nq = cand.offsets.len().saturating_sub(1);
        check_candidates(cand, nq, self.n)?;
        if nq == 0 {
            return Ok(Vec::new());
        }
        let (nq_q, dq) = self.queries(gpu, q)?;
        if nq_q != nq {
            return Err(GpuError::Input(format!("{nq_q} queries but candidates for {nq}")));
        }
        let mut hits = Vec::with_capacity(nq);
        let mut q0 = 0;
        while q0 < nq {
            // As many queries as fit CHUNK_ENTRIES (at least one).
            let mut q1 = q0 + 1;
            while q1 < nq && cand.offsets[q1 + 1] - cand.offsets[q0] <= CHUNK_ENTRIES {
                q1 += 1;
            }
            hits.extend(self.rerank_chunk(gpu, &dq, cand, q0..q1, r)?);
            q0 = q1;
        }
        Ok(hits)
    }

    fn rerank_chunk(
        &self,
        g: &Gpu,
        dq: &DeviceQueries,
        cand: &Candidates,
        qs: std::ops::Range<usize>,
        r: usize,
    ) -> Result<AnnHits, GpuError> {
        let nq = qs.len();
        let (e0, e1) = (cand.offsets[qs.start] as usize, cand.offsets[qs.end] as usize);
        let entries = e1 - e0;
        if entries > u32::MAX as usize {
            return Err(GpuError::Input(format!("{entries} candidates of one query exceed one launch")));
        }
        let offsets: Vec<u32> =
            cand.offsets[qs.clone()].iter().chain([&cand.offsets[qs.end]]).map(|&o| (o as usize - e0) as u32).collect();
        g.ensure_fits((entries as u64 * 2 + nq as u64 * (2 * r as u64 + 1) + 1) * 4)?;
        let d_off = g.stream.clone_htod(&offsets)?;
        let d_cand = match entries {
            0 => g.stream.alloc_zeros::<u32>(1)?,
            _ => g.stream.clone_htod(&cand.ids[e0..e1])?,
        };
        // SAFETY: fly_ann_dist writes every entry's key before fly_ann_top_r reads it, and
        // fly_ann_top_r writes all nq · r slots of ids and dist.
        let (mut keys, mut ids, mut dist) = unsafe {
            (g.stream.alloc::<u32>(entries.max(1))?, g.stream.alloc::<u32>(nq * r)?, g.stream.alloc::<u32>(nq * r)?)
        };
        let w = self.row;
        // A query buffer at query `qs.start` (element size `size`), or `fallback` where unused.
        let at = |p: u64, size: usize| p + (qs.start * w * size) as u64;
        let codes = dq.codes.as_ref().map(|c| at(rd(g, c).0 as usize as u64, 8));
        let floats = dq.floats.as_ref().map(|c| at(rd(g, c).0 as usize as u64, 4));
        let pixels = dq.pixels.as_ref().map(|c| at(rd(g, c).0 as usize as u64, 1));
        let flags = dq.flags.as_ref().map(|c| rd(g, c).0 as usize as u64 + qs.start as u64 * 4);
        let any = codes.or(floats).expect("codes or floats uploaded");
        let mut t = KernelTimer::default();
        let a = k::AnnDist {
            kind: self.kind,
            row: w as u32,
            nq: nq as u32,
            entries: entries as u32,
            offsets: rd(g, &d_off),
            cand: rd(g, &d_cand),
            db: rd(g, &self.db),
            qcodes: DevPtr::from_addr(codes.unwrap_or(any)),
            qfloats: DevPtr::from_addr(floats.unwrap_or(any)),
            qpixels: DevPtr::from_addr(pixels.unwrap_or(any)),
            qflags: DevPtr::from_addr(flags.unwrap_or(any)),
            keys: wr(g, &mut keys),
        };
        // SAFETY: `offsets` holds nq + 1 ascending entries ending at `entries`, `cand` the
        // entries' ids, each < n rows of `db`; the query buffers hold the chunk's nq rows of w
        // values from the offsets taken; `keys` holds `entries`.
        unsafe { launch(g, &mut t, entries as u64, a)? };
        let a = k::AnnTopR {
            nq: nq as u32,
            r: r as u32,
            offsets: rd(g, &d_off),
            cand: rd(g, &d_cand),
            keys: rd(g, &keys),
            ids: wr(g, &mut ids),
            dist: wr(g, &mut dist),
        };
        // SAFETY: as above; `ids` and `dist` hold nq · r.
        unsafe { launch(g, &mut t, nq as u64, a)? };
        let (ids, dist) = (g.stream.clone_dtoh(&ids)?, g.stream.clone_dtoh(&dist)?);
        Ok(ids
            .chunks(r)
            .zip(dist.chunks(r))
            .map(|(i, d)| {
                let mut v: Vec<(u32, u32)> =
                    i.iter().zip(d).take_while(|p| *p.0 != u32::MAX).map(|(&i, &d)| (i, d)).collect();
                sort_hits(&mut v);
                v
            })
            .collect())
    }
}

/// Checks compressed rows: `nq + 1` ascending offsets from 0 to `ids.len()`, ids below `n`.
fn check_candidates(cand: &Candidates, nq: usize, n: usize) -> Result<(), GpuError> {
    let o = cand.offsets;
    if o.len() != nq + 1 || o[0] != 0 || o[nq] != cand.ids.len() as u64 || o.windows(2).any(|w| w[0] > w[1]) {
        return Err(GpuError::Input(format!("candidate offsets do not describe {nq} queries")));
    }
    if let Some(&id) = cand.ids.iter().find(|&&id| id as usize >= n) {
        return Err(GpuError::Input(format!("candidate id {id} is not a row of {n}")));
    }
    Ok(())
}
