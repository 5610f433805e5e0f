use core::fmt;

/// Everything the core can reject. `Display` gives a one-line, human-readable message.
///
/// ```
/// use neurobits_core::{Error, gbnn::Geometry};
/// assert_eq!(Geometry::new(0, 4), Err(Error::ZeroClusters));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Error {
    /// `C = 0`.
    ZeroClusters,
    /// `L = 0`.
    ZeroNeurons,
    /// `C` exceeds [`crate::gbnn::MAX_CLUSTERS`].
    TooManyClusters(usize),
    /// `L` exceeds [`crate::gbnn::MAX_NEURONS`].
    TooManyNeurons(usize),
    /// The weight matrix's word count overflows `usize`.
    TooLarge,
    /// A fixed-capacity buffer is too small: `(needed, capacity)` in words.
    Capacity(usize, usize),
    /// A message or probe has the wrong number of symbols: `(expected, found)`.
    Arity(usize, usize),
    /// A symbol is outside `[0, L)`: `(cluster, symbol)`.
    Symbol(usize, u16),
    /// More distinct probes were asked for than messages exist: `(asked, available)`.
    TooManyProbes(u64, u64),
    /// More erased clusters were asked for than there are clusters: `(asked, clusters)`.
    TooManyErased(usize, usize),
    /// A retrieval rule the literature does not define for a probe mode: `(rule, mode)`.
    Unsupported(&'static str, &'static str),
    /// FlyHash parameters outside `1 ≤ s ≤ d`, `1 ≤ k ≤ m`.
    FlyParams,
    /// Cortical network shape outside `1 ≤ L ≤ 40`, `1 ≤ M ≤ 128`.
    CorticalShape,
    /// An image that the bottom receptive fields cannot cut into `2^(L−1)` rectangles of `M`
    /// pixels.
    CorticalImage,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ZeroClusters => write!(f, "the number of clusters must be at least 1"),
            Error::ZeroNeurons => write!(f, "the number of neurons per cluster must be at least 1"),
            Error::TooManyClusters(c) => {
                write!(f, "{c} clusters is more than the supported {}", crate::gbnn::MAX_CLUSTERS)
            }
            Error::TooManyNeurons(l) => {
                write!(f, "{l} neurons per cluster is more than the supported {}", crate::gbnn::MAX_NEURONS)
            }
            Error::TooLarge => write!(f, "the weight matrix of this size cannot be addressed"),
            Error::Capacity(need, cap) => {
                write!(f, "needs {need} words but the buffer holds {cap}")
            }
            Error::Arity(want, got) => write!(f, "expected {want} symbols, found {got}"),
            Error::Symbol(c, s) => write!(f, "symbol {s} of cluster {c} is out of range"),
            Error::TooManyProbes(k, m) => {
                write!(f, "{k} distinct probes asked for but only {m} messages are stored")
            }
            Error::TooManyErased(e, c) => {
                write!(f, "{e} erased clusters asked for but there are only {c} clusters")
            }
            Error::Unsupported(r, m) => write!(f, "the {r} rule is not defined for {m} probes"),
            Error::FlyParams => write!(f, "FlyHash needs 1 <= s <= d and 1 <= k <= m"),
            Error::CorticalShape => write!(f, "a cortical network needs 1 to 40 levels and 1 to 128 minicolumns"),
            Error::CorticalImage => write!(
                f,
                "the image does not split into one rectangle of M pixels per bottom hypercolumn (needs H*W = 2^(L-1)*M)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
