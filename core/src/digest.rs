//! FNV-1a (64-bit) digests of bit-packed data: the cross-target equality check and the network
//! file checksum. Words are fed as little-endian bytes so every target agrees.

use crate::Word;

/// FNV-1a offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds bytes into an FNV-1a state.
///
/// ```
/// use neurobits_core::digest::{fnv1a_bytes, FNV_OFFSET};
/// assert_eq!(fnv1a_bytes(FNV_OFFSET, b"a"), 0xaf63dc4c8601ec8c);
/// ```
#[inline]
pub fn fnv1a_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// Folds words (as little-endian bytes) into an FNV-1a state.
///
/// ```
/// use neurobits_core::digest::{fnv1a_bytes, fnv1a_words, FNV_OFFSET};
/// assert_eq!(fnv1a_words(FNV_OFFSET, &[1]), fnv1a_bytes(FNV_OFFSET, &1u64.to_le_bytes()));
/// ```
#[inline]
pub fn fnv1a_words(mut h: u64, words: &[Word]) -> u64 {
    for w in words {
        h = fnv1a_bytes(h, &w.to_le_bytes());
    }
    h
}
