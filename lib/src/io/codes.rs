//! FlyHash code files (`bin` format), little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `NBFLYHSH` |
//! | 8 | 4 | format version = 1 |
//! | 12 | 4 | code length m in bits (≥ 1) |
//! | 16 | 8 | number of codes n |
//! | 24 | 8·n·⌈m/64⌉ | the codes, bit-packed, code-major; bits ≥ m of each last word are 0 |

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::Word;
use std::path::Path;

use super::atomic::write_atomic;

const MAGIC: &[u8; 8] = b"NBFLYHSH";

/// Writes codes of `m` bits atomically.
pub fn save(path: &Path, m: u32, codes: &[Word]) -> Result<()> {
    let words = (m as usize).div_ceil(64);
    write_atomic(path, |w| {
        w.write_all(MAGIC)?;
        w.write_all(&1u32.to_le_bytes())?;
        w.write_all(&m.to_le_bytes())?;
        w.write_all(&((codes.len() / words) as u64).to_le_bytes())?;
        for c in codes {
            w.write_all(&c.to_le_bytes())?;
        }
        Ok(())
    })
}

/// Reads a code file: `(m, words)`.
pub fn load(path: &Path) -> Result<(u32, Vec<Word>)> {
    let name = path.display().to_string();
    decode(&std::fs::read(path).with_context(|| format!("cannot read {name}"))?, &name)
}

/// Decodes a code file's bytes: `(m, words)`. Refuses set padding bits (past bit m of a code):
/// they would silently change Hamming distances.
///
/// ```
/// use neurobits::io::codes::decode;
/// let mut b = b"NBFLYHSH".to_vec();
/// b.extend(1u32.to_le_bytes()); b.extend(3u32.to_le_bytes()); b.extend(1u64.to_le_bytes());
/// b.extend(0b101u64.to_le_bytes());
/// assert_eq!(decode(&b, "mem").unwrap(), (3, vec![0b101]));
/// b[24] = 0b1101; // bit 3 is padding
/// assert!(decode(&b, "mem").is_err());
/// ```
pub fn decode(b: &[u8], name: &str) -> Result<(u32, Vec<Word>)> {
    let field =
        |at: usize, n: usize| b.get(at..at + n).ok_or_else(|| anyhow!("{name}: not a neurobits FlyHash code file"));
    if field(0, 8)? != MAGIC || b.len() < 24 {
        bail!("{name}: not a neurobits FlyHash code file");
    }
    let u32_at = |at| -> Result<u32> { Ok(u32::from_le_bytes(field(at, 4)?.try_into()?)) };
    let version = u32_at(8)?;
    if version != 1 {
        bail!("{name}: unsupported code file version {version}");
    }
    let m = u32_at(12)?;
    let n = u64::from_le_bytes(field(16, 8)?.try_into()?);
    let words = (m as u64).div_ceil(64);
    let need = n.checked_mul(words).and_then(|x| x.checked_mul(8)).and_then(|x| x.checked_add(24));
    if m == 0 || need != Some(b.len() as u64) {
        bail!("{name}: truncated or corrupt code file ({} bytes for {n} codes of {m} bits)", b.len());
    }
    let codes: Vec<Word> =
        b[24..].chunks_exact(8).map(|c| c.iter().rev().fold(0u64, |x, &y| x << 8 | y as u64)).collect();
    let pad = if m % 64 == 0 { 0 } else { !0u64 << (m % 64) };
    if let Some(i) = codes.chunks(words as usize).position(|c| c[c.len() - 1] & pad != 0) {
        bail!("{name}: code {i} has bits set past bit {m} (corrupt code file)");
    }
    Ok((m, codes))
}
