//! The cortical network's counter-based random numbers (spec §4, D-14): every draw is a pure
//! function of (seed, stream, counter), so a minicolumn's random firing does not depend on which
//! thread, CTA, device or schedule computes it.
//!
//! The key derivation differs from [`crate::prng::stream_key`] (the spec fixes
//! `key = mix64(seed ^ mix64(stream))`); the draw itself is [`crate::prng::draw`].

use crate::prng::{draw, mix64};

/// Stream of the initial weights.
pub const INIT: u64 = 1;
/// Stream of random firing.
pub const FIRE: u64 = 2;
/// Stream of the epoch shuffles.
pub const SHUFFLE: u64 = 3;
/// Stream of the random-weights baseline network.
pub const BASELINE: u64 = 4;

/// The key of `stream` under `seed`: `mix64(seed ^ mix64(stream))`.
///
/// ```
/// use neurobits_core::cortical::rng::{key, rand64, INIT};
/// assert_eq!(rand64(key(1, INIT), 0), 0x275F2AE791FEF8A1);
/// ```
#[inline(always)]
pub const fn key(seed: u64, stream: u64) -> u64 {
    mix64(seed ^ mix64(stream))
}

/// Draw `counter` of the stream with key `key` (64 bits).
///
/// ```
/// use neurobits_core::cortical::rng::{key, rand64, FIRE};
/// assert_eq!(rand64(key(1, FIRE), 12345), 0xDCE5A9F76721A5A8);
/// ```
#[inline(always)]
pub const fn rand64(key: u64, counter: u64) -> u64 {
    draw(key, counter)
}

/// The high 32 bits of [`rand64`].
///
/// ```
/// use neurobits_core::cortical::rng::{key, rand_u32, FIRE};
/// assert_eq!(rand_u32(key(1, FIRE), 0), 0x87EB34B5);
/// ```
#[inline(always)]
pub const fn rand_u32(key: u64, counter: u64) -> u32 {
    (rand64(key, counter) >> 32) as u32
}

/// The presentation order of epoch `epoch` (spec §4): `order` is set to the identity, then for
/// `i = n−1 … 1`, `j = (rand_u32(SHUFFLE, (epoch << 32) + i) · (i + 1)) >> 32` and `order[i]`,
/// `order[j]` swap. Position `k` then holds the index of the image shown `k`-th.
///
/// ```
/// use neurobits_core::cortical::rng::fisher_yates;
/// let mut order = [0u32; 10];
/// fisher_yates(&mut order, 0, 1);
/// assert_eq!(order, [0, 6, 9, 3, 7, 2, 8, 5, 4, 1]);
/// ```
pub fn fisher_yates(order: &mut [u32], epoch: u64, seed: u64) {
    let k = key(seed, SHUFFLE);
    for (i, o) in order.iter_mut().enumerate() {
        *o = i as u32;
    }
    for i in (1..order.len()).rev() {
        let r = rand_u32(k, (epoch << 32).wrapping_add(i as u64)) as u64;
        let j = ((r * (i as u64 + 1)) >> 32) as usize;
        order.swap(i, j);
    }
}
