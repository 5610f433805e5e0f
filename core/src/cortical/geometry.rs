//! The shape of a network: `L` levels of a binary converging tree (`2^L − 1` hypercolumns, ids
//! contiguous per level, bottom level first) of `M` minicolumns with `2M` inputs each.

use super::rules::MAX_MINICOLUMNS;
use crate::Error;

/// Most levels: `2^40 − 1` hypercolumns is far beyond any device's memory; the bound keeps every
/// id and counter well inside `u64`.
pub const MAX_LEVELS: u32 = 40;

/// Levels and minicolumns of a network.
///
/// ```
/// use neurobits_core::cortical::Geometry;
/// let g = Geometry::new(3, 16).unwrap();
/// assert_eq!((g.hypercolumns(), g.level_len(0), g.offset(2), g.inputs()), (7, 4, 6, 32));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Geometry {
    levels: u32,
    m: u32,
}

impl Geometry {
    /// `levels` in `1..=MAX_LEVELS`, `m` minicolumns in `1..=128`; the weight count must fit
    /// `usize`.
    ///
    /// ```
    /// use neurobits_core::cortical::Geometry;
    /// assert!(Geometry::new(0, 16).is_err());
    /// assert!(Geometry::new(3, 129).is_err());
    /// ```
    pub fn new(levels: u32, m: usize) -> Result<Self, Error> {
        if levels == 0 || levels > MAX_LEVELS || m == 0 || m > MAX_MINICOLUMNS {
            return Err(Error::CorticalShape);
        }
        let g = Geometry { levels, m: m as u32 };
        g.weights_per_column().checked_mul(g.hypercolumns_checked()?).ok_or(Error::TooLarge)?;
        Ok(g)
    }

    fn hypercolumns_checked(&self) -> Result<usize, Error> {
        1usize.checked_shl(self.levels).map(|n| n - 1).filter(|&n| n > 0).ok_or(Error::TooLarge)
    }

    /// Levels `L`.
    pub fn levels(&self) -> usize {
        self.levels as usize
    }

    /// Minicolumns per hypercolumn `M`.
    pub fn minicolumns(&self) -> usize {
        self.m as usize
    }

    /// Inputs per minicolumn, `2M`.
    pub fn inputs(&self) -> usize {
        2 * self.m as usize
    }

    /// 64-bit words of one hypercolumn's input.
    pub fn input_words(&self) -> usize {
        self.inputs().div_ceil(64)
    }

    /// Hypercolumns, `2^L − 1`.
    pub fn hypercolumns(&self) -> usize {
        (1usize << self.levels) - 1
    }

    /// Hypercolumns of level `l` (0 = bottom): `2^(L−1−l)`.
    pub fn level_len(&self, l: usize) -> usize {
        1usize << (self.levels as usize - 1 - l)
    }

    /// Id of the first hypercolumn of level `l`.
    pub fn offset(&self, l: usize) -> usize {
        // Σ_{l'<l} 2^(L−1−l') = 2^L − 2^(L−l).
        (1usize << self.levels) - (1usize << (self.levels as usize - l))
    }

    /// Weights of one hypercolumn, `2M·M`.
    pub fn weights_per_column(&self) -> usize {
        self.inputs() * self.minicolumns()
    }

    /// Weights of the network.
    pub fn weights(&self) -> usize {
        self.weights_per_column() * self.hypercolumns()
    }

    /// Input words of the bottom level (one input per bottom hypercolumn).
    pub fn bottom_words(&self) -> usize {
        self.level_len(0) * self.input_words()
    }
}
