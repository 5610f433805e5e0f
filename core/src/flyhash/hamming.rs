use crate::Word;

/// Hamming distance of two bit-packed codes.
///
/// ```
/// assert_eq!(neurobits_core::flyhash::hamming(&[0b1011, 1], &[0b0001, 0]), 3);
/// ```
#[inline(always)]
pub fn hamming(a: &[Word], b: &[Word]) -> u32 {
    let mut d = 0;
    for (x, y) in a.iter().zip(b) {
        d = hamming_word(d, *x, *y);
    }
    d
}

/// One word's step of [`hamming`]: `d` plus the bits in which `x` and `y` differ (drivers that
/// hold several distances at once call it per word).
///
/// ```
/// assert_eq!(neurobits_core::flyhash::hamming_word(5, 0b1011, 0b0001), 7);
/// ```
#[inline(always)]
pub fn hamming_word(d: u32, x: Word, y: Word) -> u32 {
    d + (x ^ y).count_ones()
}
