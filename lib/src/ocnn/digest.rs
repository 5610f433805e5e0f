//! The spec's digests (§11.1 item 9): SHA-256 of the full `n × n` hit matrix as little-endian
//! `i32` (both triangles, diagonal = T) and of the final state as little-endian floats.

use neurobits_core::ocnn::Real;
use sha2::{Digest, Sha256};

use super::cpu::tri;

/// Hex SHA-256 of the full hit matrix built from the upper triangle.
pub fn hits(n: usize, upper: &[u32], t: u32) -> String {
    let mut h = Sha256::new();
    let mut row = Vec::with_capacity(4 * n);
    for i in 0..n {
        row.clear();
        for j in 0..n {
            let v = match i.cmp(&j) {
                std::cmp::Ordering::Equal => t,
                std::cmp::Ordering::Less => upper[tri(n, i, j)],
                std::cmp::Ordering::Greater => upper[tri(n, j, i)],
            };
            row.extend_from_slice(&(v as i32).to_le_bytes());
        }
        h.update(&row);
    }
    crate::io::hex(&h.finalize())
}

/// Hex SHA-256 of a sparse coupling's hits: `(i, j, hits)` as little-endian `u32`s for every
/// coupled pair `i < j`, row by row, columns ascending (the full matrix of `N = 10⁶` would be
/// 4 TB; the pairs that are not coupled are never counted).
pub fn sparse_hits(pairs: impl Iterator<Item = (u32, u32)>, hits: &[u32]) -> String {
    let mut h = Sha256::new();
    // The same bytes, handed over 4 096 pairs at a time.
    let mut buf = Vec::with_capacity(12 * 4096);
    for ((i, j), &v) in pairs.zip(hits) {
        buf.extend_from_slice(&i.to_le_bytes());
        buf.extend_from_slice(&j.to_le_bytes());
        buf.extend_from_slice(&v.to_le_bytes());
        if buf.len() == buf.capacity() {
            h.update(&buf);
            buf.clear();
        }
    }
    h.update(&buf);
    crate::io::hex(&h.finalize())
}

/// Hex SHA-256 of the state as little-endian `f32` or `f64` (its working type).
pub fn state<T: Real>(x: &[T]) -> String {
    let mut h = Sha256::new();
    for &v in x {
        if core::mem::size_of::<T>() == 4 {
            h.update((v.to_f64() as f32).to_le_bytes());
        } else {
            h.update(v.to_f64().to_le_bytes());
        }
    }
    crate::io::hex(&h.finalize())
}
