//! The saved-model format, one for every model (version 1), little-endian throughout:
//!
//! | size | field |
//! |---|---|
//! | 8 | magic `NBMODL\r\n` (the CR/LF catches text-mode mangling) |
//! | 4 | format version = 1 |
//! | 4 | length n of the kind (at most 64) |
//! | n | the model kind, ASCII: `gbnn`, `flyhash`, `flyhash-index`, `flyhash-ann`, `flynn`, `ocnn`, `cortical` |
//! | 4 | length j of the configuration (at most 1 MiB) |
//! | j | the model's configuration and fitted sizes, JSON (readable with `head -c`) |
//! | 8 | length p of the payload |
//! | p | the fitted state, in the model's own layout (see its `save`) |
//! | 32 | SHA-256 of every byte before it |
//!
//! A FlyHash index appends blocks of codes after the trailer ([`crate::flyhash::index`]); every
//! other kind ends there. The GBNN's older network file (`NBGBNN\r\n`, [`super::netfile`]) still
//! loads as a GBNN model.
//!
//! Every refusal is one line naming the file: not a model file, a newer format version, another
//! kind of model, a truncated file, a checksum that does not match.

use serde::{de::DeserializeOwned, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

use crate::error::{Error, Result};

/// The first eight bytes of every saved model.
pub const MAGIC: &[u8; 8] = b"NBMODL\r\n";
/// The format version this library writes and the newest it reads.
pub const VERSION: u32 = 1;
const MAX_KIND: usize = 64;
const MAX_CONFIG: usize = 1 << 20;

/// A decoded model file: its kind, configuration and payload, checked.
#[derive(Debug)]
pub struct Saved {
    /// The model kind.
    pub kind: String,
    /// The configuration, as written.
    pub config: serde_json::Value,
    /// The fitted state.
    pub payload: Vec<u8>,
    /// Offset of the first byte after the trailer (where an index's blocks start).
    pub end: usize,
}

/// The bytes of a model file: header, `payload`, trailer.
///
/// ```
/// use neurobits::io::model_file::{decode, encode};
/// let b = encode("ocnn", &serde_json::json!({"seed": 1}), b"state").unwrap();
/// let s = decode(&b, "mem", "ocnn").unwrap();
/// assert_eq!((s.config["seed"].as_u64(), s.payload.as_slice()), (Some(1), &b"state"[..]));
/// assert!(decode(&b, "mem", "flynn").unwrap_err().to_string().contains("holds a ocnn model"));
/// ```
pub fn encode(kind: &str, config: &impl Serialize, payload: &[u8]) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(config).map_err(|e| Error::input(kind, format!("configuration: {e}")))?;
    assert!(kind.len() <= MAX_KIND && kind.is_ascii(), "model kinds are short ASCII names");
    if json.len() > MAX_CONFIG {
        return Err(Error::input(kind, format!("configuration of {} bytes is over the 1 MiB limit", json.len())));
    }
    let mut b = Vec::with_capacity(64 + kind.len() + json.len() + payload.len());
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    b.extend_from_slice(kind.as_bytes());
    b.extend_from_slice(&(json.len() as u32).to_le_bytes());
    b.extend_from_slice(&json);
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(payload);
    let sum = Sha256::digest(&b);
    b.extend_from_slice(&sum);
    Ok(b)
}

/// Checks and splits the model file `b` (named `name` in errors), which must hold a `kind` model.
pub fn decode(b: &[u8], name: &str, kind: &str) -> Result<Saved> {
    let bad = |why: String| Error::input(name, why);
    if b.len() < 8 || &b[..8] != MAGIC {
        return Err(bad("not a neurobits model file (bad magic)".into()));
    }
    let mut at = 8usize;
    let mut take = |n: usize| -> Result<(usize, &[u8])> {
        let s = b.get(at..at.saturating_add(n)).ok_or_else(|| {
            bad(format!("truncated at {} bytes: the file says it is longer (an interrupted write?)", b.len()))
        })?;
        at += n;
        Ok((at, s))
    };
    let u32_at = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
    let version = u32_at(take(4)?.1);
    if version > VERSION {
        return Err(bad(format!(
            "model format version {version} is newer than this neurobits reads ({VERSION}); upgrade neurobits"
        )));
    }
    if version == 0 {
        return Err(bad("model format version 0 does not exist (a corrupted file?)".into()));
    }
    let n = u32_at(take(4)?.1) as usize;
    if n > MAX_KIND {
        return Err(bad(format!("model kind of {n} bytes (at most {MAX_KIND}): a corrupted file?")));
    }
    let found = String::from_utf8_lossy(take(n)?.1).into_owned();
    let j = u32_at(take(4)?.1) as usize;
    if j > MAX_CONFIG {
        return Err(bad(format!("configuration of {j} bytes (at most 1 MiB): a corrupted file?")));
    }
    let json = take(j)?.1.to_vec();
    let (payload_at, p) = take(8)?;
    let p = u64::from_le_bytes(p.try_into().expect("8 bytes"));
    let p = usize::try_from(p).map_err(|_| bad(format!("payload of {p} bytes cannot be addressed")))?;
    let (body, _) = take(p)?;
    let (end, sum) = take(32)?;
    if Sha256::digest(&b[..body]).as_slice() != sum {
        return Err(bad("checksum mismatch: the file is corrupted".into()));
    }
    if found != kind {
        return Err(bad(format!("holds a {found} model, not a {kind} model")));
    }
    let config = serde_json::from_slice(&json).map_err(|e| bad(format!("configuration is not JSON: {e}")))?;
    Ok(Saved { kind: found, config, payload: b[payload_at..body].to_vec(), end })
}

/// The kind named in a model file's header, unchecked (for commands that take several kinds,
/// such as an exact or an approximate FlyHash index); `decode` then checks the whole file.
///
/// ```
/// let b = neurobits::io::model_file::encode("ocnn", &serde_json::json!({}), b"").unwrap();
/// assert_eq!(neurobits::io::model_file::peek_kind(&b), Some("ocnn"));
/// assert_eq!(neurobits::io::model_file::peek_kind(b"junk"), None);
/// ```
pub fn peek_kind(b: &[u8]) -> Option<&str> {
    if b.get(..8)? != MAGIC {
        return None;
    }
    let n = u32::from_le_bytes(b.get(12..16)?.try_into().ok()?) as usize;
    std::str::from_utf8(b.get(16..16 + n.min(MAX_KIND))?).ok()
}

/// Reads a whole file (`-`: standard input), bounded by the memory budget.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    if let Ok(meta) = std::fs::metadata(path) {
        crate::io::memory::ensure_fits(&path.display().to_string(), meta.len() as u128)?;
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Reads and checks the `kind` model saved at `path`.
pub fn read(path: &Path, kind: &str) -> Result<Saved> {
    decode(&read_bytes(path)?, &path.display().to_string(), kind)
}

/// Writes a `kind` model to `path` atomically (a temporary file renamed over it, so a failed or
/// interrupted save leaves any previous file as it was).
pub fn write(path: &Path, kind: &str, config: &impl Serialize, payload: &[u8]) -> Result<()> {
    let b = encode(kind, config, payload)?;
    crate::io::atomic::write_atomic(path, |w| Ok(w.write_all(&b)?))?;
    Ok(())
}

/// The configuration of a decoded file as `T`, or an error naming the file.
pub fn config<T: DeserializeOwned>(s: &Saved, name: &str) -> Result<T> {
    serde_json::from_value(s.config.clone())
        .map_err(|e| Error::input(name, format!("{} configuration does not fit this version: {e}", s.kind)))
}

/// Little-endian payload writer.
#[derive(Default)]
pub struct Payload(pub Vec<u8>);

impl Payload {
    /// Appends a `u64`.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a length-prefixed slice of `u64`.
    pub fn words(&mut self, v: &[u64]) -> &mut Self {
        self.u64(v.len() as u64);
        v.iter().for_each(|w| self.0.extend_from_slice(&w.to_le_bytes()));
        self
    }

    /// Appends a length-prefixed slice of `u32`.
    pub fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.u64(v.len() as u64);
        v.iter().for_each(|w| self.0.extend_from_slice(&w.to_le_bytes()));
        self
    }

    /// Appends a length-prefixed slice of `u16`.
    pub fn u16s(&mut self, v: &[u16]) -> &mut Self {
        self.u64(v.len() as u64);
        v.iter().for_each(|w| self.0.extend_from_slice(&w.to_le_bytes()));
        self
    }

    /// Appends a length-prefixed byte string.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
        self
    }

    /// Appends a length-prefixed slice of `i32`.
    pub fn i32s(&mut self, v: &[i32]) -> &mut Self {
        self.u64(v.len() as u64);
        v.iter().for_each(|w| self.0.extend_from_slice(&w.to_le_bytes()));
        self
    }
}

/// Little-endian payload reader: every read is bounds-checked against the payload, so a length
/// field can never make it allocate more than the file holds.
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    name: &'a str,
}

impl<'a> Reader<'a> {
    /// Reads `b`, naming `name` in errors.
    pub fn new(b: &'a [u8], name: &'a str) -> Self {
        Reader { b, at: 0, name }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self
            .at
            .checked_add(n)
            .and_then(|e| self.b.get(self.at..e))
            .ok_or_else(|| Error::input(self.name, "payload shorter than its lengths say (a corrupted file?)"))?;
        self.at += n;
        Ok(s)
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn len(&mut self, size: usize) -> Result<usize> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n.checked_mul(size).is_some_and(|b| b <= self.b.len() - self.at))
            .ok_or_else(|| Error::input(self.name, format!("payload claims {n} values, more than it holds")))
    }

    /// A length-prefixed slice of `u64`.
    pub fn words(&mut self) -> Result<Vec<u64>> {
        let n = self.len(8)?;
        Ok(self.take(8 * n)?.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect())
    }

    /// A length-prefixed slice of `u32`.
    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.len(4)?;
        Ok(self.take(4 * n)?.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect())
    }

    /// A length-prefixed slice of `u16`.
    pub fn u16s(&mut self) -> Result<Vec<u16>> {
        let n = self.len(2)?;
        Ok(self.take(2 * n)?.chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().expect("2"))).collect())
    }

    /// A length-prefixed byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }

    /// A length-prefixed slice of `i32`.
    pub fn i32s(&mut self) -> Result<Vec<i32>> {
        let n = self.len(4)?;
        Ok(self.take(4 * n)?.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4"))).collect())
    }

    /// The rest of the payload.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.at..];
        self.at = self.b.len();
        s
    }

    /// Whether the payload has been read to its end (a member added in a later version is
    /// absent from files written before it).
    pub fn at_end(&self) -> bool {
        self.at == self.b.len()
    }

    /// Refuses bytes left over (a payload longer than its model).
    pub fn finish(&self) -> Result<()> {
        if self.at != self.b.len() {
            return Err(Error::input(self.name, "payload longer than its model (a corrupted file?)"));
        }
        Ok(())
    }
}
