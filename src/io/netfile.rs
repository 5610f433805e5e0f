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

const MAGIC: &[u8; 8] = b"NBGBNN\r\n";
const VERSION: u32 = 1;
const HEADER: usize = 40;

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
    write_atomic(path, |w| {
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
    })
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Reads and verifies a network file.
pub fn load(path: &Path) -> Result<Network> {
    let name = path.display();
    let mut f = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let size = f.metadata().with_context(|| format!("cannot read {name}"))?.len();
    let mut h = [0u8; HEADER];
    if size < HEADER as u64 {
        bail!("{name}: truncated network file ({size} bytes, shorter than the {HEADER}-byte header)");
    }
    f.read_exact(&mut h).with_context(|| format!("cannot read {name}"))?;
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
    let expected = HEADER as u64 + 8 * words + 8;
    if size < expected {
        bail!("{name}: truncated network file ({size} bytes, expected {expected})");
    }
    if size > expected {
        bail!("{name}: corrupt network file ({size} bytes, expected {expected})");
    }
    ensure_fits(&format!("{name}: W"), 8 * words as u128)?;
    let mut body = vec![0u8; 8 * words as usize + 8];
    f.read_exact(&mut body).with_context(|| format!("cannot read {name}"))?;
    let (wbytes, tail) = body.split_at(8 * words as usize);
    let sum = fnv1a_bytes(fnv1a_bytes(FNV_OFFSET, &h), wbytes);
    if sum != u64::from_le_bytes(tail.try_into().unwrap()) {
        bail!("{name}: checksum mismatch: the network file is corrupt");
    }
    let w = wbytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    Network::from_parts(geom, u64_at(&h, 24), w).map_err(|e| anyhow!("{name}: {e}"))
}
