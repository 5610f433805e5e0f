//! Dense fly codes at a given code length (Sharma & Navlakha 2018, "DenseFly"): the same sparse
//! binary projection, but instead of keeping the `k` largest of `m` activations, every output
//! becomes one bit — so an `m`-bit code carries `m` informative bits, as a SimHash code does.
//!
//! * [`dense_pack`]: bit `i` set iff activation `i`'s key is above threshold `i`'s key.
//! * DenseFly's threshold is the input's own mean activation ([`dense_mean`]).
//! * The data-dependent variant learns one threshold per bit: the median activation of that
//!   output over the training vectors ([`dense_median`], an exact radix select on the keys), so
//!   each bit splits the training data in half (most informative bits; the projection stays
//!   the random one).
//!
//! Keys are [`sort_key`](super::sort_key)s, so a comparison of keys is a comparison of values and
//! every target that computes the same activations gets the same bits.

use super::kth_largest;
use crate::Word;

/// Sets bit `i` of `code` iff `key(i) > threshold(i)`, for `i` in `0..m` (other bits cleared).
///
/// ```
/// use neurobits_core::flyhash::dense_pack;
/// let keys = [5u32, 9, 7, 1];
/// let mut code = [0u64];
/// dense_pack(4, |i| keys[i], |_| 6, &mut code);
/// assert_eq!(code[0], 0b0110);
/// ```
#[inline]
pub fn dense_pack(m: usize, key: impl Fn(usize) -> u32, threshold: impl Fn(usize) -> u32, code: &mut [Word]) {
    for w in code.iter_mut() {
        *w = 0;
    }
    for i in 0..m {
        if key(i) > threshold(i) {
            code[i / 64] |= 1 << (i % 64);
        }
    }
}

/// DenseFly's threshold for one input: the `f32` mean of its `m` activations, summed in index
/// order from `+0.0` (one fixed order: the same float on every target), as a key.
///
/// ```
/// use neurobits_core::flyhash::{dense_mean, sort_key};
/// assert_eq!(dense_mean(&[1.0, 2.0, 6.0]), sort_key(3.0));
/// ```
#[inline]
pub fn dense_mean(act: &[f32]) -> u32 {
    let mut sum = 0.0f32;
    for &a in act {
        sum += a;
    }
    super::sort_key(sum / act.len().max(1) as f32)
}

/// A learned threshold: the lower median of `n ≥ 1` keys (the `⌈n/2⌉`-th largest), so that at most
/// half of the training vectors have the bit set.
///
/// ```
/// use neurobits_core::flyhash::dense_median;
/// let keys = [5u32, 9, 7, 1];
/// assert_eq!(dense_median(4, |i| keys[i]), 7);
/// assert_eq!(dense_median(3, |i| keys[i]), 7);
/// ```
#[inline]
pub fn dense_median(n: usize, key: impl Fn(usize) -> u32) -> u32 {
    kth_largest(n, n.div_ceil(2).max(1), key, &mut [0; 256]).0
}
