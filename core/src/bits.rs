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

/// The index of the `n`-th set bit of `x` (counting from 0, lowest first), `set_bits(x).nth(n)`
/// without walking the bits before it: six halvings, each keeping the half that holds it by
/// its population count. Branch-free, so a GPU warp whose lanes ask for different `n` stays
/// converged (the walk took up to `n` dependent steps per lane).
///
/// ```
/// use neurobits_core::bits::{nth_set_bit, set_bits};
/// let x = 0b1010_0001u64 | 1 << 63;
/// for n in 0..6 {
///     assert_eq!(nth_set_bit(x, n), set_bits(x).nth(n as usize));
/// }
/// assert_eq!(nth_set_bit(x, 3), Some(63));
/// assert_eq!(nth_set_bit(0, 0), None);
/// ```
#[inline(always)]
pub const fn nth_set_bit(x: Word, n: u32) -> Option<usize> {
    if n >= x.count_ones() {
        return None;
    }
    let (mut x, mut n, mut at) = (x, n, 0u32);
    let mut half = 32;
    while half > 0 {
        let low = (x & ((1u64 << half) - 1)).count_ones();
        let up = n >= low;
        // Branch-free select: move to the upper half when the bit is past the lower one.
        n -= if up { low } else { 0 };
        x = if up { x >> half } else { x };
        at += if up { half } else { 0 };
        half /= 2;
    }
    Some(at as usize)
}

/// Bit `i` of `x` moved to bit `2i` (the others clear): two ballots over lanes, one for each word
/// of a lane's pair, interleave into the occupancy of consecutive words as
/// `spread_even(a) | spread_even(b) << 1`.
///
/// ```
/// use neurobits_core::bits::spread_even;
/// assert_eq!(spread_even(0b1011), 0b1000101);
/// assert_eq!(spread_even(u32::MAX), 0x5555_5555_5555_5555);
/// ```
#[inline(always)]
pub const fn spread_even(x: u32) -> u64 {
    let mut x = x as u64;
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}
