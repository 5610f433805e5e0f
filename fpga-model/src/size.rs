use neurobits_core::Word;

/// Most neurons a circuit may have.
pub const MAX_NEURONS: usize = 400;

/// A circuit size: `C` clusters of `L` neurons and the fixed arrays that hold its registers.
/// Declare one with [`circuit_size!`](crate::circuit_size), which rejects `C·L > 400` at compile
/// time.
pub trait Size {
    /// Clusters.
    const C: usize;
    /// Neurons per cluster.
    const L: usize;
    /// Weight flip-flops (`C·L` rows of `C·⌈L/64⌉` words).
    type Weights: AsRef<[Word]> + AsMut<[Word]> + Clone;
    /// One state vector (`C·⌈L/64⌉` words).
    type State: AsRef<[Word]> + AsMut<[Word]> + Clone + Copy + PartialEq + core::fmt::Debug;
    /// Score registers (`C·L`).
    type Scores: AsRef<[u32]> + AsMut<[u32]> + Clone;
    /// Probe symbol registers (`C`).
    type Symbols: AsRef<[u16]> + AsMut<[u16]> + Clone;
    /// All-zero registers.
    fn zero() -> (Self::Weights, Self::State, Self::Scores, Self::Symbols);
}

/// Declares a circuit size. `C·L` above [`MAX_NEURONS`] does not compile:
///
/// ```compile_fail
/// neurobits_fpga::circuit_size!(TooBig, 21, 20); // 420 neurons
/// ```
///
/// ```
/// neurobits_fpga::circuit_size!(S10x40, 10, 40);
/// use neurobits_fpga::Size;
/// assert_eq!(S10x40::C * S10x40::L, 400);
/// ```
#[macro_export]
macro_rules! circuit_size {
    ($name:ident, $c:expr, $l:expr) => {
        /// A circuit size declared with `circuit_size!`.
        #[derive(Clone, Copy, Debug)]
        pub struct $name;
        const _: () = assert!($c * $l <= $crate::MAX_NEURONS, "a GBNN circuit has at most 400 neurons");
        const _: () = assert!($c >= 1 && $l >= 1 && $c <= 64, "need 1 <= C <= 64 and L >= 1");
        impl $crate::Size for $name {
            const C: usize = $c;
            const L: usize = $l;
            type Weights = [$crate::__Word; $crate::__core::weight_words($c, $l)];
            type State = [$crate::__Word; $crate::__core::row_words($c, $l)];
            type Scores = [u32; $c * $l];
            type Symbols = [u16; $c];
            fn zero() -> (Self::Weights, Self::State, Self::Scores, Self::Symbols) {
                (
                    [0; $crate::__core::weight_words($c, $l)],
                    [0; $crate::__core::row_words($c, $l)],
                    [0; $c * $l],
                    [0; $c],
                )
            }
        }
    };
}

#[doc(hidden)]
pub use neurobits_core::gbnn as __core;
#[doc(hidden)]
pub use neurobits_core::Word as __Word;

circuit_size!(S8x50, 8, 50);
circuit_size!(S4x100, 4, 100);
circuit_size!(S16x25, 16, 25);
circuit_size!(S3x3, 3, 3);
