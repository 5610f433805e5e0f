//! The board each target runs on under QEMU, and the firmware's capacity there: the limits an
//! exported network is checked against at compile time (`crate::capacity`, read by the module
//! `neurobits gbnn export` writes). A user porting the template edits this file and `memory/`.

/// The QEMU machine and core of this build's target (`build.rs` sets `board` from the target),
/// and the board's flash and RAM in bytes (as `memory/<target>.x` declares them).
#[cfg(board = "microbit")]
pub const BOARD: (&str, usize, usize) = ("microbit cortex-m0", 256 * 1024, 16 * 1024);
#[cfg(board = "lm3s6965evb")]
pub const BOARD: (&str, usize, usize) = ("lm3s6965evb cortex-m3", 256 * 1024, 64 * 1024);
#[cfg(board = "mps2-an386")]
pub const BOARD: (&str, usize, usize) = ("mps2-an386 cortex-m4f", 4 * 1024 * 1024, 4 * 1024 * 1024);
#[cfg(board = "mps2-an505")]
pub const BOARD: (&str, usize, usize) = ("mps2-an505 cortex-m33", 4 * 1024 * 1024, 4 * 1024 * 1024);
// FE310: 16 KiB of data SRAM; flash is the board's SPI chip (4 MiB on the HiFive1 Rev B).
#[cfg(board = "sifive_e")]
pub const BOARD: (&str, usize, usize) = ("sifive_e rv32imac", 4 * 1024 * 1024, 16 * 1024);

/// Bytes of flash set aside for the code (the firmware is ≈ 20 KiB; the rest may hold W).
const CODE_RESERVE: usize = 32 * 1024;

/// The capacity an exported network must fit (compile-time checks of the generated module).
pub mod capacity {
    /// Clusters: probe and decode buffers hold this many symbols.
    pub const MAX_CLUSTERS: usize = 64;
    /// Neurons per cluster: 16-bit symbols (the core's limit).
    pub const MAX_NEURONS_PER_CLUSTER: usize = neurobits_core::gbnn::MAX_NEURONS;
    /// Words of each of the two state buffers reserved in RAM (2 × 1 KiB).
    pub const MAX_ROW_WORDS: usize = 128;
    /// FlyNN inputs d (one `f32` buffer in RAM).
    pub const MAX_FLY_INPUTS: usize = if super::BOARD.2 >= 64 * 1024 { 1024 } else { 256 };
    /// FlyNN code length m (two `u32` scratch buffers of m entries in RAM).
    pub const MAX_FLY_OUTPUTS: usize = if super::BOARD.2 >= 64 * 1024 { 4096 } else { 512 };
    /// FlyNN classes.
    pub const MAX_FLY_CLASSES: usize = 64;
    /// Flash for W (or a FlyNN blob): the board's flash less the code's reserve.
    pub const MAX_WEIGHT_BYTES: usize = super::BOARD.1 - super::CODE_RESERVE;
}
