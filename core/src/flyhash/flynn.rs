//! FlyNN (Sinha & Ram, "Fruit-fly inspired neighborhood encoding for classification", KDD 2021):
//! one Bloom-filter-like memory per class over FlyHash codes; a point is given the class to which
//! it is least novel.
//!
//! The paper's memory `W_c ∈ [0, 1]^m` starts at 1 and multiplies by a decay `γ` at each winner
//! bit of each training code of class `c`; the novelty of a code is the sum of `W_c` over its
//! winner bits. Here `W_c[i] = γ^n` with `n` the number of class-`c` training codes that have bit
//! `i`, so the memory is a count per (class, bit), saturating at [`FLYNN_MAX_COUNT`], and `γ^n`
//! comes from one table of 65 536 fixed-point weights (`Q63`, [`flynn_weights`]) made once on the
//! host and shipped to every target: the novelty is an exact integer sum (a `u128`), and every
//! target gets the same classes whatever the order of the training codes or of the sum.
//!
//! Error-driven rounds (this project's addition, [`flynn_restore`]): after the counting pass, a
//! round classifies every training code against the memories as they stand at the round's start
//! and counts again, in its own class, each code they give another class. Memories still only
//! count (a code stored twice counts twice), and since a round reads fixed memories, its result
//! does not depend on the order of the codes either.

use crate::bits::set_bits;
use crate::Word;

/// The count at which a memory bit saturates.
pub const FLYNN_MAX_COUNT: u16 = u16::MAX;

/// Entries of the weight table: one per count.
pub const FLYNN_WEIGHTS: usize = FLYNN_MAX_COUNT as usize + 1;

/// A memory bit after one more training code of its class has it.
///
/// ```
/// use neurobits_core::flyhash::{flynn_store, FLYNN_MAX_COUNT};
/// assert_eq!(flynn_store(0), 1);
/// assert_eq!(flynn_store(FLYNN_MAX_COUNT), FLYNN_MAX_COUNT);
/// ```
#[inline(always)]
pub const fn flynn_store(count: u16) -> u16 {
    count.saturating_add(1)
}

/// The weights `γ^n` for counts `n = 0..=65 535` into `w`, in fixed point (`2^63` is 1), by
/// repeated multiplication in `f64` and rounding (no transcendental function: the same table on
/// every host). `γ` in `[0, 1]`.
///
/// ```
/// use neurobits_core::flyhash::{flynn_weights, FLYNN_WEIGHTS};
/// let mut w = vec![0u64; FLYNN_WEIGHTS];
/// flynn_weights(0.5, &mut w);
/// assert_eq!((w[0], w[1], w[2], w[64], w[65]), (1 << 63, 1 << 62, 1 << 61, 1, 0)); // 2^-64: half a unit, rounded up
/// ```
pub fn flynn_weights(gamma: f64, w: &mut [u64]) {
    let mut g = 1.0f64;
    for x in w.iter_mut() {
        // 2^63 · g ≤ 2^63 fits a u64; `as` saturates and rounds toward zero after the + 0.5.
        *x = (g * 9_223_372_036_854_775_808.0 + 0.5) as u64;
        g *= gamma;
    }
}

/// Novelty of `code` to one class whose memory counts are `count(i)`: the sum of
/// `weight(count)` over the code's winner bits.
///
/// ```
/// use neurobits_core::flyhash::{flynn_novelty, flynn_weights, FLYNN_WEIGHTS};
/// let (counts, mut w) = ([0u16, 1, 200, 2], vec![0u64; FLYNN_WEIGHTS]);
/// flynn_weights(0.5, &mut w);
/// // Bits 0, 1 and 3: counts 0, 1 and 2.
/// assert_eq!(flynn_novelty(&[0b1011], |i| counts[i], |n| w[n as usize]), (1 << 63) + (1 << 62) + (1 << 61));
/// ```
#[inline]
pub fn flynn_novelty(code: &[Word], count: impl Fn(usize) -> u16, weight: impl Fn(u16) -> u64) -> u128 {
    let mut sum = 0u128;
    for (w, &word) in code.iter().enumerate() {
        for b in set_bits(word) {
            sum += weight(count(w * 64 + b)) as u128;
        }
    }
    sum
}

/// Whether an error-driven round stores a training code of class `label` again: iff the
/// memories, as they were at the round's start, give it another class ([`flynn_class`] of its
/// novelties). The class memories are then a count of the code's training examples plus one per
/// round that misclassified it, so the hard examples of a class weigh more, as in boosting.
///
/// ```
/// use neurobits_core::flyhash::flynn_restore;
/// let n = [5u128, 3, 9];
/// assert!(flynn_restore(0, 3, |c| n[c])); // given class 1: stored again in class 0
/// assert!(!flynn_restore(1, 3, |c| n[c]));
/// ```
#[inline]
pub fn flynn_restore(label: usize, classes: usize, novelty: impl Fn(usize) -> u128) -> bool {
    flynn_class(classes, novelty) != label
}

/// The class of least novelty among `classes` (ties: the lower class).
///
/// ```
/// let n = [5u128, 3, 3, 9];
/// assert_eq!(neurobits_core::flyhash::flynn_class(4, |c| n[c]), 1);
/// ```
#[inline]
pub fn flynn_class(classes: usize, novelty: impl Fn(usize) -> u128) -> usize {
    let mut best = (u128::MAX, 0);
    for c in 0..classes {
        let n = novelty(c);
        if n < best.0 {
            best = (n, c);
        }
    }
    best.1
}
