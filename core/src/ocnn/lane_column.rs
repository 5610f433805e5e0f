//! How a lane row stores the column of each entry.

/// The stored column of a lane-row entry. Entry `k·32 + l` belongs to lane `l`, whose columns are
/// `≡ l (mod 32)`: a column is `32·q + l`, so storing `q` alone is enough — one byte per entry up
/// to 8 192 neurons ([`Quot8`]), two up to 2 097 152 ([`Quot16`]) — against four for the column
/// itself (`u32`, what the GPU reads). A CPU's update is bound by streaming the rows, and a
/// narrower column is fewer bytes per weight.
///
/// ```
/// use neurobits_core::ocnn::{LaneColumn, Quot8};
/// // Column 70 is in lane 6 (70 = 2·32 + 6).
/// assert_eq!(Quot8::encode(70).column(6), 70);
/// assert_eq!(70u32.column(6), 70);
/// assert!(Quot8::fits(8192) && !Quot8::fits(8193));
/// ```
pub trait LaneColumn: Copy + Send + Sync + 'static {
    /// Whether every column of `n` neurons can be stored.
    fn fits(n: usize) -> bool;
    /// The stored form of column `col` (an entry of lane `col % 32`); `col` must fit.
    fn encode(col: usize) -> Self;
    /// The column of an entry of lane `lane` (`< 32`).
    fn column(self, lane: u32) -> u32;
}

impl LaneColumn for u32 {
    #[inline(always)]
    fn fits(n: usize) -> bool {
        n as u64 <= 1 << 32
    }
    #[inline(always)]
    fn encode(col: usize) -> Self {
        col as u32
    }
    #[inline(always)]
    fn column(self, _lane: u32) -> u32 {
        self
    }
}

/// A lane-row column type storing the column's quotient by 32 in `$int` (lane-row columns
/// of up to `$max` neurons).
macro_rules! quotient {
    ($(#[$doc:meta])* $name:ident($int:ty), $max:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(transparent)]
        pub struct $name(pub $int);

        impl LaneColumn for $name {
            #[inline(always)]
            fn fits(n: usize) -> bool {
                n <= $max
            }
            #[inline(always)]
            fn encode(col: usize) -> Self {
                $name((col >> 5) as $int)
            }
            #[inline(always)]
            fn column(self, lane: u32) -> u32 {
                (self.0 as u32) << 5 | lane
            }
        }
    };
}

quotient!(
    /// A lane-row column stored as its quotient by 32 in one byte (up to 8 192 neurons).
    ///
    /// ```
    /// use neurobits_core::ocnn::{LaneColumn, Quot8};
    /// assert_eq!(Quot8::encode(8191), Quot8(255));
    /// ```
    Quot8(u8),
    256 * 32
);

quotient!(
    /// A lane-row column stored as its quotient by 32 in two bytes (up to 2 097 152 neurons).
    ///
    /// ```
    /// use neurobits_core::ocnn::{LaneColumn, Quot16};
    /// assert_eq!(Quot16::encode(100_000).column(100_000 % 32), 100_000);
    /// ```
    Quot16(u16),
    65_536 * 32
);
