//! The cross-target digests of spec §4 (SHA-256, feature `sha`).

use super::geometry::Geometry;
use sha2::{Digest, Sha256};

/// `weights_sha256`: all weights as little-endian `u16` in `[level][hc][m][i]` order (the
/// striped `[hc][i][m]` storage read column by column).
pub fn weights_sha256(geo: &Geometry, w: &[u16]) -> [u8; 32] {
    let (m, n_in) = (geo.minicolumns(), geo.inputs());
    let mut h = Sha256::new();
    let mut row = [0u8; 512];
    for col in w.chunks(geo.weights_per_column()) {
        for mm in 0..m {
            for i in 0..n_in {
                row[2 * i..2 * i + 2].copy_from_slice(&col[i * m + mm].to_le_bytes());
            }
            h.update(&row[..2 * n_in]);
        }
    }
    h.finalize().into()
}

/// `winners_sha256`: the evaluation winners (`[image][hc]`, `-1` silent), level 0 first, each
/// level an `i32` little-endian array `[image][hc of the level]`.
pub fn winners_sha256(geo: &Geometry, winners: &[i32]) -> [u8; 32] {
    let n_hc = geo.hypercolumns();
    let mut h = Sha256::new();
    for l in 0..geo.levels() {
        let (o, n) = (geo.offset(l), geo.level_len(l));
        for img in winners.chunks(n_hc) {
            for &w in &img[o..o + n] {
                h.update(w.to_le_bytes());
            }
        }
    }
    h.finalize().into()
}
