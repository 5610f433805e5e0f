//! The network file format (version 1), little-endian throughout:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `NBGBNN\r\n` (the CR/LF catches text-mode mangling) |
//! | 8 | 4 | format version = 1 |
//! | 12 | 4 | clusters C |
//! | 16 | 4 | neurons per cluster L |
//! | 20 | 4 | bits per word = 64 |
//! | 24 | 8 | stored-message count |
//! | 32 | 8 | word count = C·L · C·⌈L/64⌉ |
//! | 40 | 8·words | W, row-major, bit-packed (row i = neurons connected to neuron i) |
//! | end | 8 | FNV-1a 64 of every byte before it |

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::digest::{fnv1a_bytes, FNV_OFFSET};
use neurobits_core::gbnn::{Geometry, Network};
use std::io::Read;
use std::path::Path;

use super::atomic::write_atomic;
use super::memory::ensure_fits;

/// The first eight bytes of a network file.
pub const MAGIC: &[u8; 8] = b"NBGBNN\r\n";
const VERSION: u32 = 1;
const HEADER: usize = 40;

/// The 40-byte header of `net`.
fn header(net: &Network) -> Vec<u8> {
    let g = net.geometry();
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&(g.clusters() as u32).to_le_bytes());
    h.extend_from_slice(&(g.neurons_per_cluster() as u32).to_le_bytes());
    h.extend_from_slice(&64u32.to_le_bytes());
    h.extend_from_slice(&net.stored().to_le_bytes());
    h.extend_from_slice(&(net.weights().len() as u64).to_le_bytes());
    h
}

/// Writes `net` atomically.
pub fn save(path: &Path, net: &Network) -> Result<()> {
    write_atomic(path, |w| encode(w, net))
}

/// Writes `net` in the network file format to `w`.
pub fn encode(w: &mut dyn std::io::Write, net: &Network) -> Result<()> {
    let h = header(net);
    let mut sum = fnv1a_bytes(FNV_OFFSET, &h);
    w.write_all(&h)?;
    let mut buf = Vec::with_capacity(1 << 16);
    for chunk in net.weights().chunks(8192) {
        buf.clear();
        for x in chunk {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        sum = fnv1a_bytes(sum, &buf);
        w.write_all(&buf)?;
    }
    w.write_all(&sum.to_le_bytes())?;
    Ok(())
}

fn u32_at(h: &[u8; HEADER], at: usize) -> u32 {
    u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}
fn u64_at(h: &[u8; HEADER], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Reads and verifies a network file.
pub fn load(path: &Path) -> Result<Network> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let size = f.metadata().with_context(|| format!("cannot read {name}"))?.len();
    decode(std::io::BufReader::new(f), size, &name)
}

/// Decodes and verifies a network file of `size` bytes from `r` (`name`: for messages). Checks
/// the header against the size before allocating, then reads W straight into the network's
/// vector in 64 KiB chunks: W is held once.
///
/// ```
/// let net = neurobits_core::gbnn::Network::new(2, 3).unwrap();
/// let mut bytes = Vec::new();
/// neurobits::io::netfile::encode(&mut bytes, &net).unwrap();
/// let back = neurobits::io::netfile::decode(&bytes[..], bytes.len() as u64, "mem").unwrap();
/// assert_eq!(back, net);
/// assert!(neurobits::io::netfile::decode(&bytes[..10], 10, "mem").is_err());
/// ```
pub fn decode(mut r: impl Read, size: u64, name: &str) -> Result<Network> {
    let mut h = [0u8; HEADER];
    if size < HEADER as u64 {
        bail!("{name}: truncated network file ({size} bytes, shorter than the {HEADER}-byte header)");
    }
    r.read_exact(&mut h).with_context(|| format!("cannot read {name}"))?;
    if &h[..8] != MAGIC {
        bail!("{name}: not a neurobits network file (bad magic)");
    }
    let version = u32_at(&h, 8);
    if version != VERSION {
        bail!("{name}: unsupported network file version {version} (this build reads {VERSION})");
    }
    let (c, l, bits) = (u32_at(&h, 12) as usize, u32_at(&h, 16) as usize, u32_at(&h, 20));
    let geom = Geometry::new(c, l).map_err(|e| anyhow!("{name}: corrupt header: {e}"))?;
    let words = u64_at(&h, 32);
    if bits != 64 || words != geom.weight_words() as u64 {
        bail!("{name}: corrupt header: {words} words of {bits} bits do not match C={c}, L={l}");
    }
    // words ≤ 2^61 by the geometry check, but stay checked: this is untrusted input.
    let expected = words.checked_mul(8).and_then(|b| b.checked_add(HEADER as u64 + 8)).unwrap_or(u64::MAX);
    if size < expected {
        bail!("{name}: truncated network file ({size} bytes, expected {expected})");
    }
    if size > expected {
        bail!("{name}: corrupt network file ({size} bytes, expected {expected})");
    }
    ensure_fits(&format!("{name}: W"), 8 * words as u128)?;
    let mut w: Vec<u64> = Vec::new();
    w.try_reserve_exact(words as usize).map_err(|_| anyhow!("{name}: W does not fit in memory"))?;
    let mut sum = fnv1a_bytes(FNV_OFFSET, &h);
    let mut buf = vec![0u8; 1 << 16];
    let mut left = 8 * words as usize;
    while left > 0 {
        let n = left.min(buf.len());
        r.read_exact(&mut buf[..n]).with_context(|| format!("cannot read {name}"))?;
        sum = fnv1a_bytes(sum, &buf[..n]);
        w.extend(buf[..n].chunks_exact(8).map(|b| {
            let mut x = [0u8; 8];
            x.copy_from_slice(b);
            u64::from_le_bytes(x)
        }));
        left -= n;
    }
    let mut tail = [0u8; 8];
    r.read_exact(&mut tail).with_context(|| format!("cannot read {name}"))?;
    if sum != u64::from_le_bytes(tail) {
        bail!("{name}: checksum mismatch: the network file is corrupt");
    }
    Network::from_parts(geom, u64_at(&h, 24), w).map_err(|e| anyhow!("{name}: {e}"))
}
