use crate::gbnn::{Geometry, ERASED};
use crate::Word;

/// Word `wi` of cluster `c` of the initial state of a probe: the known symbol's bit, or, for an
/// erased cluster, all neurons on (`erased_on`, sum-of-max / bail-out-early) or all off
/// (sum-of-sum / joint).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, rules::init_word};
/// let g = Geometry::new(2, 70).unwrap();
/// assert_eq!(init_word(&g, &[65, ERASED], 0, 1, false), 1 << 1);
/// assert_eq!(init_word(&g, &[65, ERASED], 1, 1, true), (1 << 6) - 1); // 70 − 64 valid bits
/// ```
#[inline(always)]
pub fn init_word(geom: &Geometry, symbols: &[u16], c: usize, wi: usize, erased_on: bool) -> Word {
    let s = symbols[c];
    if s == ERASED {
        if erased_on {
            geom.valid_bits(wi)
        } else {
            0
        }
    } else {
        let (word, bit) = geom.bit(c, s as usize);
        if word == c * geom.words_per_cluster() + wi {
            bit
        } else {
            0
        }
    }
}
