use crate::Error;

/// FlyHash parameters: input dimension `d`, code length `m`, `s` ones per projection row, `k`
/// winners, and the PRNG seed of the projection.
///
/// ```
/// let p = neurobits_core::flyhash::FlyParams::new(784, 25_088, 39, 1_254, 1).unwrap();
/// assert_eq!(p.code_words(), 392);
/// assert!(neurobits_core::flyhash::FlyParams::new(10, 20, 11, 5, 1).is_err()); // s > d
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlyParams {
    /// Input dimension.
    pub d: u32,
    /// Code length (projection rows).
    pub m: u32,
    /// Ones per projection row.
    pub s: u32,
    /// Winners per code.
    pub k: u32,
    /// Projection seed.
    pub seed: u64,
}

impl FlyParams {
    /// Checks `1 ≤ s ≤ d` and `1 ≤ k ≤ m`.
    pub fn new(d: u32, m: u32, s: u32, k: u32, seed: u64) -> Result<Self, Error> {
        if d == 0 || m == 0 || s == 0 || k == 0 || s > d || k > m {
            return Err(Error::FlyParams);
        }
        Ok(FlyParams { d, m, s, k, seed })
    }

    /// Words of one bit-packed code.
    pub const fn code_words(&self) -> usize {
        (self.m as usize).div_ceil(crate::WORD_BITS)
    }
}
