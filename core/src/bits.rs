//! Iterating over the set bits of a word: the loop every bit-packed model runs (active neurons,
//! erased clusters, occupied words, winners).

use crate::Word;

/// The indices of the set bits of a word, lowest first.
///
/// ```
/// use neurobits_core::bits::set_bits;
/// assert!(set_bits(0b1010_0001).eq([0, 5, 7]));
/// assert_eq!(set_bits(0).next(), None);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SetBits(Word);

impl Iterator for SetBits {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(b)
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

/// Iterates over the set bits of `x`, lowest first (one `tzcnt` and one `blsr` per bit).
///
/// ```
/// let erased = 0b110u64;
/// assert_eq!(neurobits_core::bits::set_bits(erased).count(), 2);
/// ```
#[inline(always)]
pub const fn set_bits(x: Word) -> SetBits {
    SetBits(x)
}
