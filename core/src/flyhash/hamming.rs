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

/// [`hamming`] from the bits each code has and the bits they share: `|x ⊕ y| = |x| + |y| − 2·|x ∧ y|`
/// over whole codes, an identity in integers. The form the GPU's binary tensor cores compute
/// (they count `x ∧ y` for a tile of queries and codes at once; the counts `|x|`, `|y|` come
/// beside them), so their distances are [`hamming`]'s bit for bit.
///
/// ```
/// use neurobits_core::flyhash::{hamming, hamming_from_and};
/// let (x, y) = ([0b1011u64, 1], [0b0001u64, 0]);
/// let ones = |c: &[u64]| c.iter().map(|w| w.count_ones()).sum::<u32>();
/// let and: u32 = x.iter().zip(&y).map(|(a, b)| (a & b).count_ones()).sum();
/// assert_eq!(hamming_from_and(ones(&x), ones(&y), and), hamming(&x, &y));
/// ```
#[inline(always)]
pub fn hamming_from_and(ones_x: u32, ones_y: u32, and: u32) -> u32 {
    ones_x + ones_y - 2 * and
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_and_form_is_the_xor_form() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for words in [1usize, 3, 392] {
            for _ in 0..50 {
                let x: [u64; 392] = core::array::from_fn(|_| next() & next());
                let y: [u64; 392] = core::array::from_fn(|_| next() | next());
                let (x, y) = (&x[..words], &y[..words]);
                let ones = |c: &[u64]| c.iter().map(|w| w.count_ones()).sum::<u32>();
                let and = x.iter().zip(y).map(|(a, b)| (a & b).count_ones()).sum();
                assert_eq!(hamming_from_and(ones(x), ones(y), and), hamming(x, y));
            }
        }
    }
}
