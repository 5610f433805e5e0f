//! Synchronization of pairs of neurons over the observed iterations (spec §3).

use super::Real;

/// How a pair's synchronization at one iteration is measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SyncMode<T> {
    /// Both outputs rose, or both did not: `(x_i(t) > x_i(t−1)) == (x_j(t) > x_j(t−1))`.
    Phase,
    /// The outputs are within `ε`: `|x_i(t) − x_j(t)| < ε`.
    Fragmentary(T),
}

/// Neuron `i`'s phase bit at iteration `t`: whether its output rose.
///
/// ```
/// assert!(neurobits_core::ocnn::phase_bit(0.5f32, 0.25));
/// assert!(!neurobits_core::ocnn::phase_bit(0.5f32, 0.5));
/// ```
#[inline(always)]
pub fn phase_bit<T: Real>(now: T, before: T) -> bool {
    now > before
}

/// Iterations of a packed word (bit `t` = the phase bit of iteration `t`) on which two neurons
/// agree, counting the low `valid` bits: `valid − popcount((a ^ b) & mask)`.
///
/// ```
/// assert_eq!(neurobits_core::ocnn::phase_hits(0b1011, 0b0011, 4), 3);
/// assert_eq!(neurobits_core::ocnn::phase_hits(u64::MAX, u64::MAX, 64), 64);
/// ```
#[inline(always)]
pub fn phase_hits(a: u64, b: u64, valid: u32) -> u32 {
    let mask = if valid >= 64 { u64::MAX } else { (1u64 << valid) - 1 };
    valid - ((a ^ b) & mask).count_ones()
}

/// Iterations on which two neurons agree over `blocks` consecutive words of phase bits
/// (`words(k)`: their `k`-th words), the earlier words full, the last counting its low `valid`
/// bits: [`phase_hits`] word by word, summed — an integer, so adding several blocks to a count
/// at once gives the count of adding them one by one.
///
/// ```
/// use neurobits_core::ocnn::{phase_hits, phase_hits_blocks};
/// let (a, b) = ([u64::MAX, 0b1011], [0u64, 0b0011]);
/// assert_eq!(phase_hits_blocks(2, 4, |k| (a[k], b[k])), phase_hits(a[0], b[0], 64) + phase_hits(a[1], b[1], 4));
/// assert_eq!(phase_hits_blocks(2, 4, |k| (a[k], b[k])), 3);
/// ```
#[inline(always)]
pub fn phase_hits_blocks(blocks: usize, valid: u32, words: impl Fn(usize) -> (u64, u64)) -> u32 {
    let mut hits = 0;
    for k in 0..blocks {
        let (a, b) = words(k);
        hits += phase_hits(a, b, if k + 1 == blocks { valid } else { 64 });
    }
    hits
}

impl<T: Real> SyncMode<T> {
    /// Whether two outputs are fragmentarily synchronized (`Fragmentary` only).
    ///
    /// ```
    /// use neurobits_core::ocnn::SyncMode;
    /// assert!(SyncMode::Fragmentary(0.2f32).close(0.5, 0.6));
    /// assert!(!SyncMode::Fragmentary(0.2f32).close(0.5, 0.7000001));
    /// ```
    #[inline(always)]
    pub fn close(self, a: T, b: T) -> bool {
        match self {
            SyncMode::Fragmentary(eps) => (a - b).abs() < eps,
            SyncMode::Phase => false,
        }
    }
}
