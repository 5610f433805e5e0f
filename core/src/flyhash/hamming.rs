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
        d += (x ^ y).count_ones();
    }
    d
}
