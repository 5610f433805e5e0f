//! The portable PRNG: counter-based SplitMix64.
//!
//! Draw `i` (0-based) of the stream with key `k` is `mix64(k + (i + 1)·0x9E3779B97F4A7C15)`, the
//! output function of Steele, Lea & Flood's SplitMix64 (2014) with Stafford's "Mix13" constants.
//! Being counter-based, any draw can be computed on its own — a GPU thread, the firmware and the
//! host all produce the same numbers without sharing generator state. Integers in `[0, n)` are
//! taken as the high word of `draw · n` (Lemire's multiply-shift, one draw per number, bias at
//! most `n / 2⁶⁴`).

/// SplitMix64's increment (the golden ratio in 64-bit fixed point).
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output mixing function.
///
/// ```
/// // Reference value of SplitMix64 seeded with 0 (first output).
/// assert_eq!(neurobits_core::prng::mix64(neurobits_core::prng::GOLDEN), 0xE220A8397B1DCDAF);
/// ```
#[inline(always)]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Key of the sub-stream `domain` of seed `seed`, so that messages, probes and permutations
/// drawn from one user seed are independent.
///
/// ```
/// use neurobits_core::prng::stream_key;
/// assert_ne!(stream_key(1, 0), stream_key(1, 1));
/// ```
#[inline(always)]
pub const fn stream_key(seed: u64, domain: u64) -> u64 {
    mix64(seed ^ mix64(domain.wrapping_add(GOLDEN)))
}

/// Draw `i` of the stream with key `key`.
///
/// ```
/// use neurobits_core::prng::{draw, mix64, GOLDEN};
/// assert_eq!(draw(0, 0), mix64(GOLDEN));
/// ```
#[inline(always)]
pub const fn draw(key: u64, i: u64) -> u64 {
    mix64(key.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)))
}

/// Maps a 64-bit draw to `[0, n)`.
///
/// ```
/// assert_eq!(neurobits_core::prng::below(u64::MAX, 10), 9);
/// ```
#[inline(always)]
pub const fn below(x: u64, n: u64) -> u64 {
    ((x as u128 * n as u128) >> 64) as u64
}

/// Floyd's algorithm: `k ≤ n` distinct values of `[0, n)` with one draw each, draws
/// `base + t` (`t = 0..k`) of `key`. `insert(x)` adds `x` to the caller's set and returns
/// whether it was new; when it was not, the step's `j` goes in instead (never drawn before: the
/// algorithm's invariant). One sampler for every "k distinct of n" in the project.
///
/// ```
/// use neurobits_core::prng::floyd;
/// let mut set = 0u64;
/// floyd(7, 0, 64, 10, |x| { let new = set & (1 << x) == 0; set |= 1 << x; new });
/// assert_eq!(set.count_ones(), 10);
/// ```
#[inline]
pub fn floyd(key: u64, base: u64, n: u64, k: u64, mut insert: impl FnMut(u64) -> bool) {
    for (t, j) in (n - k..n).enumerate() {
        if !insert(below(draw(key, base + t as u64), j + 1)) {
            insert(j);
        }
    }
}

/// A keyed pseudo-random permutation of `[0, n)`, evaluated pointwise without memory: a 4-round
/// balanced Feistel network on the smallest even number of bits covering `n`, with cycle walking
/// (at most 4 walks expected). Used to pick distinct stored messages as probes.
///
/// ```
/// use neurobits_core::prng::Permutation;
/// let p = Permutation::new(7, 1000);
/// let mut seen = [false; 1000];
/// for i in 0..1000 { let j = p.apply(i) as usize; assert!(!seen[j]); seen[j] = true; }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// Permutation of `[0, n)` keyed by `key`.
    pub const fn new(key: u64, n: u64) -> Self {
        let bits = if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() };
        let half = bits.div_ceil(2);
        let mut keys = [0u64; 4];
        let mut r = 0;
        while r < 4 {
            keys[r] = draw(key, r as u64);
            r += 1;
        }
        Permutation { n, half, keys }
    }

    #[inline(always)]
    const fn encrypt(&self, x: u64) -> u64 {
        if self.half == 0 {
            return x;
        }
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        let mut k = 0;
        while k < 4 {
            let f = mix64(r ^ self.keys[k]) & mask;
            let t = l ^ f;
            l = r;
            r = t;
            k += 1;
        }
        (l << self.half) | r
    }

    /// The image of `i < n`.
    #[inline]
    pub const fn apply(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}
