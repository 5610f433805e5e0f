//! The exact FlyHash index searched by several processes ([`crate::dist`]): each rank reads only
//! its contiguous share of the codes from the index file (by byte ranges: the header and the
//! 24-byte block heads, then the words of its ids), rank 0 hashes the queries and broadcasts
//! their codes, every rank finds the k nearest of its share (CPU or its GPU), and rank 0 gathers
//! the k hits per query per rank and keeps the k smallest (distance, id) pairs, which is exactly
//! what one process finds over all codes (its top k is the k smallest pairs, ties by lower id, and
//! every one of them is in the top k of the share that holds it).
//!
//! Integrity: the header's SHA-256 is checked by every rank; a block's SHA-256 by the rank that
//! reads the whole block (a block split between ranks cannot be checked without reading it all,
//! which is what sharding the reads avoids; `neurobits flyhash index search` without
//! `--distributed` checks every block).

use neurobits_core::Word;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::data::Matrix;
use super::index::{FlyIndex, Neighbours};
use crate::device::Target;
use crate::dist::{Collectives, World};
use crate::error::{Error, Result};
use crate::io::model_file;
use crate::model::Model;

const BLOCK_MAGIC: &[u8; 8] = b"NBCODES\n";

/// One rank's part of an index file.
#[derive(Debug)]
pub struct IndexShare {
    /// The index's FlyHash, with no codes.
    pub index: FlyIndex,
    /// The codes of ids `ids`, `⌈m/64⌉` words each.
    pub codes: Vec<Word>,
    /// Which ids this rank holds.
    pub ids: Range<usize>,
    /// Codes in the whole index.
    pub total: usize,
}

/// Reads `len` bytes at `at` (fewer where the file ends).
fn read_at(f: &File, path: &Path, at: u64, len: usize) -> Result<Vec<u8>> {
    let mut b = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match f.read_at(&mut b[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    b.truncate(got);
    Ok(b)
}

/// The model-file header at the start of `f` (magic to checksum), read piece by piece so that
/// nothing of the codes is read.
fn header(f: &File, path: &Path, size: u64) -> Result<Vec<u8>> {
    let u32_at = |b: &[u8], at: usize| b.get(at..at + 4).map(|s| u32::from_le_bytes(s.try_into().expect("4")) as u64);
    let mut b = read_at(f, path, 0, 16)?;
    let Some(kind) = u32_at(&b, 12).filter(|&n| n <= 64) else { return Ok(b) };
    b = read_at(f, path, 0, (16 + kind + 4) as usize)?;
    let Some(json) = u32_at(&b, (16 + kind) as usize).filter(|&j| j <= 1 << 20) else { return Ok(b) };
    let at = 16 + kind + 4 + json;
    b = read_at(f, path, 0, (at + 8) as usize)?;
    let Some(p) = b.get(at as usize..at as usize + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8"))) else {
        return Ok(b);
    };
    // A longer payload than the file: read what is there and let the decoder say "truncated".
    let len = (at + 8).saturating_add(p).saturating_add(32).min(size);
    read_at(f, path, 0, len as usize)
}

/// The kind of model in the file at `path`, from its first bytes only (`None`: not a model file).
pub fn peek_kind(path: &Path) -> Result<Option<String>> {
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    let b = read_at(&f, path, 0, 16 + 64)?;
    Ok(model_file::peek_kind(&b).map(str::to_string))
}

/// Rank `world.rank`'s share of the exact index at `path` (ids [`World::share`] of the whole).
pub fn read_share(path: &Path, world: &World) -> Result<IndexShare> {
    let name = path.display().to_string();
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = f.metadata().map_err(|e| Error::io(path, e))?.len();
    let head = header(&f, path, size)?;
    let saved = model_file::decode(&head, &name, FlyIndex::KIND)?;
    let index = FlyIndex::from_parts(&saved, &name)?;
    let words = index.hasher().params()?.code_words() as u64;
    // The blocks: (offset of the block, codes in it).
    let mut blocks = Vec::new();
    let mut at = saved.end as u64;
    while at < size {
        let bad = |why: &str| Error::input(&name, format!("code block at byte {at}: {why}"));
        let h = read_at(&f, path, at, 24)?;
        if h.len() < 24 {
            return Err(bad("truncated (an interrupted add?)"));
        }
        if &h[..8] != BLOCK_MAGIC {
            return Err(bad("bad magic (not an index block)"));
        }
        let n = u64::from_le_bytes(h[8..16].try_into().expect("8"));
        let w = u64::from_le_bytes(h[16..24].try_into().expect("8"));
        if w != words {
            return Err(bad(&format!("{w} words per code, the index's codes have {words}")));
        }
        let len = n
            .checked_mul(8 * w)
            .filter(|&l| l <= size - at - 24)
            .ok_or_else(|| bad(&format!("{n} codes claimed, more than the file holds (an interrupted add?)")))?;
        if at + 24 + len + 32 > size {
            return Err(bad("truncated (an interrupted add?)"));
        }
        blocks.push((at, n));
        at += 24 + len + 32;
    }
    let total = blocks.iter().map(|&(_, n)| n).sum::<u64>();
    let total =
        usize::try_from(total).map_err(|_| Error::input(&name, format!("{total} codes cannot be addressed")))?;
    let ids = world.share(total);
    crate::io::memory::ensure_fits(
        &format!("{name}: rank {}'s share of the codes", world.rank),
        ids.len() as u128 * words as u128 * 8,
    )?;
    let mut codes = Vec::with_capacity(ids.len() * words as usize);
    let mut first = 0u64;
    for (at, n) in blocks {
        let (lo, hi) = ((ids.start as u64).max(first), (ids.end as u64).min(first + n));
        if lo < hi {
            let bytes = if lo == first && hi == first + n {
                // The whole block: check its checksum on the way.
                let b = read_at(&f, path, at, (24 + 8 * n * words + 32) as usize)?;
                let end = b.len() - 32;
                if Sha256::digest(&b[..end]).as_slice() != &b[end..] {
                    return Err(Error::input(
                        &name,
                        format!("code block at byte {at}: checksum mismatch: the file is corrupted"),
                    ));
                }
                b[24..end].to_vec()
            } else {
                read_at(&f, path, at + 24 + 8 * words * (lo - first), (8 * words * (hi - lo)) as usize)?
            };
            codes.extend(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))));
        }
        first += n;
    }
    Ok(IndexShare { index, codes, ids, total })
}

/// The k nearest codes of each query over the index at `path`, searched by every rank of `group`
/// on `device` (see [`crate::dist::rank_target`]); `queries` are read at rank 0 only (`None` elsewhere).
/// Rank 0 returns the neighbours, exactly those of [`FlyIndex::search`] in one process; the
/// other ranks `None`.
pub fn search(
    path: &Path,
    queries: Option<&Matrix>,
    k: usize,
    device: Target,
    group: &mut impl Collectives,
) -> Result<Option<Neighbours>> {
    if k == 0 {
        return Err(Error::config("k", 0, "must be at least 1"));
    }
    let world = group.world().clone();
    let share = read_share(path, &world)?;
    let device = crate::dist::rank_target(device, &world);
    let index = share.index.with_device(device);
    let words = index.hasher().params()?.code_words();
    // Rank 0 hashes the queries once; the codes go to every rank, after the index's size and k,
    // which every rank checks against its own (another file or other options: one error, not a
    // wrong answer).
    let mut msg = Vec::new();
    if world.is_root() {
        let x = queries.ok_or_else(|| Error::input("the queries", "rank 0 has none"))?;
        msg.extend_from_slice(&(share.total as u64).to_le_bytes());
        msg.extend_from_slice(&(k as u64).to_le_bytes());
        msg.extend(index.hasher().transform(x)?.iter().flat_map(|w| w.to_le_bytes()));
    }
    group.broadcast(&mut msg)?;
    let field = |i: usize| msg.get(8 * i..8 * i + 8).map_or(0, |s| u64::from_le_bytes(s.try_into().expect("8")));
    if (field(0), field(1)) != (share.total as u64, k as u64) {
        return Err(Error::input(
            path.display(),
            format!(
                "rank {} sees {} codes and k = {k}, rank 0 {} codes and k = {} (not the same file or options?)",
                world.rank,
                share.total,
                field(0),
                field(1)
            ),
        ));
    }
    let q: Vec<Word> = msg[16..].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
    let nq = q.len() / words.max(1);
    crate::io::memory::ensure_fits("the gathered hits", nq as u128 * k as u128 * 12 * world.size as u128)?;
    // This rank's k nearest, with global ids: (id i64, distance u32) per slot, −1 padded.
    let mut mine = Vec::with_capacity(nq * k * 12);
    let local = if share.codes.is_empty() {
        None
    } else {
        let mut idx = index;
        idx.set_codes(share.codes);
        Some(idx.search_codes(&q, k)?)
    };
    for slot in 0..nq * k {
        let (id, d) = match &local {
            Some(h) if h.ids[slot] >= 0 => (h.ids[slot] + share.ids.start as i64, h.distances[slot]),
            _ => (-1, u32::MAX),
        };
        mine.extend_from_slice(&id.to_le_bytes());
        mine.extend_from_slice(&d.to_le_bytes());
    }
    let Some(parts) = group.gather(&mine)? else { return Ok(None) };
    if let Some((r, p)) = parts.iter().enumerate().find(|(_, p)| p.len() != mine.len()) {
        return Err(Error::input(
            format!("rank {r}"),
            format!("sent {} bytes of hits, {} expected", p.len(), mine.len()),
        ));
    }
    Ok(Some(merge(&parts, nq, k)))
}

/// Per query, the k smallest (distance, id) pairs of every rank's k hits.
fn merge(parts: &[Vec<u8>], nq: usize, k: usize) -> Neighbours {
    let mut out = Neighbours { k, distances: Vec::with_capacity(nq * k), ids: Vec::with_capacity(nq * k) };
    let mut row = Vec::with_capacity(k * parts.len());
    for qi in 0..nq {
        row.clear();
        for p in parts {
            for slot in p[qi * k * 12..(qi + 1) * k * 12].chunks_exact(12) {
                let id = i64::from_le_bytes(slot[..8].try_into().expect("8"));
                if id >= 0 {
                    row.push((u32::from_le_bytes(slot[8..].try_into().expect("4")), id));
                }
            }
        }
        row.sort_unstable();
        for j in 0..k {
            let (d, id) = row.get(j).copied().unwrap_or((u32::MAX, -1));
            out.ids.push(id);
            out.distances.push(d);
        }
    }
    out
}
