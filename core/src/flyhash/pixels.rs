//! Four 8-bit-pixel inputs summed at once in the 16-bit lanes of one word.
//!
//! When every input value is an integer in `0..=255` (raw image pixels) and `s · 255 < 2¹⁶`, each
//! partial sum of [`activation`](super::activation) is an integer below 2¹⁶ < 2²⁴, so the `f32`
//! additions are exact and their result is the integer sum, whatever the order. The integer sums
//! therefore *are* the activations, and since [`sort_key`](super::sort_key) is increasing in the
//! value, the lane sums (as keys) select the same winners with the same ties as the `f32` path.
//! Four inputs share two 32-bit additions per projection index, with no carry between lanes.

/// Four inputs' pixel sums, one per 16-bit lane: inputs 0 and 1 in the low and high half of the
/// first word, inputs 2 and 3 in the second. Two words rather than one `u64`, so that a GPU keeps
/// two 32-bit accumulators instead of re-forming a 64-bit value after every addition.
///
/// ```
/// use neurobits_core::flyhash::{activation, activation_with, Pixels4};
/// let x = [[3u8, 255, 0, 7], [1, 2, 250, 9], [0, 0, 0, 1]]; // 3 dimensions × 4 inputs
/// let sums = activation_with(&[0, 2], |j| Pixels4::pack(x[j]));
/// for q in 0..4 {
///     let xq = [x[0][q] as f32, x[1][q] as f32, x[2][q] as f32];
///     assert_eq!(sums.lane(q) as f32, activation(&[0, 2], &xq));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pixels4(pub u32, pub u32);

impl Pixels4 {
    /// One dimension of four inputs.
    #[inline(always)]
    pub const fn pack(p: [u8; 4]) -> Self {
        Pixels4::from_bytes(u32::from_le_bytes(p))
    }

    /// One dimension of four inputs stored as the bytes of a word (input `q` in byte `q`): how
    /// the GPU keeps them, four inputs in four bytes.
    ///
    /// ```
    /// use neurobits_core::flyhash::Pixels4;
    /// assert_eq!(Pixels4::from_bytes(0x04_03_02_01), Pixels4::pack([1, 2, 3, 4]));
    /// assert_eq!(Pixels4::from_bytes(0x04_03_02_01).lane(3), 4);
    /// ```
    #[inline(always)]
    pub const fn from_bytes(w: u32) -> Self {
        let lo = (w & 0xFF) | (w & 0xFF00) << 8;
        let hi = (w >> 16 & 0xFF) | (w >> 16 & 0xFF00) << 8;
        Pixels4(lo, hi)
    }

    /// Input `q`'s sum.
    #[inline(always)]
    pub const fn lane(self, q: usize) -> u32 {
        (if q < 2 { self.0 } else { self.1 } >> (16 * (q % 2))) & 0xFFFF
    }
}

impl core::ops::Add for Pixels4 {
    type Output = Self;
    /// Lane-wise; a lane never carries into the next while [`pixel_sums_exact`] holds, so the
    /// two words add apart (a GPU adds them independently instead of through a carry).
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Pixels4(self.0.wrapping_add(o.0), self.1.wrapping_add(o.1))
    }
}

/// Whether `s` pixels of at most 255 always sum below 2¹⁶ (one lane of [`Pixels4`]).
///
/// ```
/// assert!(neurobits_core::flyhash::pixel_sums_exact(257) && !neurobits_core::flyhash::pixel_sums_exact(258));
/// ```
pub const fn pixel_sums_exact(s: u32) -> bool {
    (s as u64) * 255 < 1 << 16
}

/// Whether `v` is an 8-bit pixel value: an integer in `0..=255` (`-0.0` is not, so that the
/// integer path never has to reproduce a sign).
///
/// ```
/// use neurobits_core::flyhash::is_pixel;
/// assert!(is_pixel(0.0) && is_pixel(255.0) && !is_pixel(255.5) && !is_pixel(256.0) && !is_pixel(-0.0));
/// ```
#[inline]
pub fn is_pixel(v: f32) -> bool {
    v.to_bits() & 0x8000_0000 == 0 && v <= 255.0 && (v as u8) as f32 == v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flyhash::{activation, activation_with, projection_row, sort_key, wta_pack, FlyParams, RadixSelect};
    use crate::prng::{draw, stream_key};

    /// The integer lanes and the f32 path give the same codes, also with many ties (few levels).
    #[test]
    fn pixel_lanes_select_the_f32_winners() {
        let p = FlyParams::new(64, 512, 20, 25, 3).unwrap();
        let key = stream_key(9, 1);
        for (t, levels) in [256u64, 2, 3, 1].into_iter().enumerate() {
            let x: [[u8; 64]; 4] = core::array::from_fn(|q| {
                core::array::from_fn(|j| {
                    ((draw(key, (t * 1000 + q * 64 + j) as u64) % levels) * (255 / (levels - 1).max(1))) as u8
                })
            });
            let mut row = [0u32; 20];
            let (mut ints, mut floats) = ([[0u32; 512]; 4], [[0u32; 512]; 4]);
            for r in 0..512 {
                projection_row(&p, r as u32, &mut row);
                let sums = activation_with(&row, |j| Pixels4::pack([x[0][j], x[1][j], x[2][j], x[3][j]]));
                for q in 0..4 {
                    let xf: [f32; 64] = core::array::from_fn(|j| x[q][j] as f32);
                    floats[q][r] = sort_key(activation(&row, &xf));
                    ints[q][r] = sums.lane(q);
                }
            }
            for q in 0..4 {
                let (mut a, mut b) = ([0u64; 8], [0u64; 8]);
                wta_pack(512, 25, |r| floats[q][r], &mut [0; 256], &mut a);
                // The integer keys through the two-pass select.
                let mut st = RadixSelect::new16(25);
                while !st.done() {
                    let mut hist = [0u32; 256];
                    ints[q].iter().filter_map(|&k| st.bin(k)).for_each(|b| hist[b] += 1);
                    st.advance(&hist);
                }
                let mut ties = st.ties();
                for (r, &k) in ints[q].iter().enumerate() {
                    if k > st.threshold() || (k == st.threshold() && ties > 0) {
                        ties -= (k == st.threshold()) as u32;
                        b[r / 64] |= 1 << (r % 64);
                    }
                }
                assert_eq!(a, b, "levels {levels}, input {q}");
                assert_eq!(b.iter().map(|w| w.count_ones()).sum::<u32>(), 25);
            }
        }
    }
}
