//! The pixel path's kernels (8-bit inputs, four to a word): sums in octets, then the
//! winner-take-all over them; the layouts are in the parent module's notes.

use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

/// Threads per block of `fly_pixel_act`.
pub const PIXEL_ACT_THREADS: u32 = 512;
/// Input groups (of 4) per `fly_pixel_act` block, a lane each: its shared tile holds
/// `(d + 1) · 32` words.
pub const PIXEL_TILE_GROUPS: u32 = 32;
/// Inputs per `fly_pixel_act` tile (`bp`, the padded batch, is a multiple of it).
pub const PIXEL_TILE_INPUTS: u32 = PIXEL_TILE_GROUPS * 4;
/// `m` and the rows of a `fly_pixel_act` block are multiples of it (whole code words).
pub const PIXEL_ROWS_PER_PASS: u32 = 64;
/// Threads per block of `fly_pixel_wta`: 32 inputs × 16 parts of the code.
pub const PIXEL_WTA_THREADS: u32 = 512;

/// Bins of the select's first pass that sums of `s` pixels can reach (the high byte of
/// `s · 255`, plus one).
///
/// ```
/// assert_eq!(neurobits_core::flyhash::kernels::pixel_bins(39), 39); // sums up to 9 945
/// ```
pub const fn pixel_bins(s: u32) -> u32 {
    ((s * 255) >> 8) + 1
}

/// Dynamic shared bytes of a `fly_pixel_act` block for dimension `d` and `s` ones per row: the
/// tile of `(d + 1) · 32` words of four pixels (row `d` is zero: the padding index), then the
/// first-pass histograms of its 128 inputs, 16-bit counts two to a word.
pub const fn pixel_act_shared(d: u32, s: u32) -> u32 {
    (d + 1) * PIXEL_TILE_GROUPS * 4 + (PIXEL_TILE_INPUTS * pixel_bins(s)).div_ceil(2) * 4
}

/// Rows of keys equal to the threshold a `fly_pixel_wta` part keeps for each input while it
/// writes its words (more send that part through a second scan).
pub const PIXEL_WTA_TIE_SLOTS: u32 = 8;

/// Dynamic shared bytes of a `fly_pixel_wta` block: per input a 256-bin histogram (`bin · 32 +
/// lane` words), per (part, input) a tie count, then per (part, input) the rows of its first
/// [`PIXEL_WTA_TIE_SLOTS`] ties.
pub const PIXEL_WTA_SHARED: u32 = (256 * 32 + PIXEL_WTA_THREADS + PIXEL_WTA_THREADS * PIXEL_WTA_TIE_SLOTS) * 4;

kernel_struct! {
    /// `fly_pixel_act`: blocks of [`PIXEL_ACT_THREADS`], one per (tile of
    /// [`PIXEL_TILE_GROUPS`] input groups, chunk of `rows` outputs), tile-major; a warp sums an
    /// octet of outputs for the 128 inputs of its tile through the core's `activation_chunks` over
    /// `Pixels4`, reading the tile from shared memory, writes them (2 KiB) and counts
    /// them into its inputs' first-pass histograms (`RadixSelect::new16`'s bins), added to `hist`
    /// at the end.
    PixelAct => FlyPixelAct {
        /// Code length (a multiple of [`PIXEL_ROWS_PER_PASS`]).
        m: u32,
        /// Winners.
        k: u32,
        /// Input dimension.
        d: u32,
        /// Input groups, `⌈b/4⌉`.
        groups: u32,
        /// The launch's first tile: block tiles are counted from it in `pix`, from 0 in `keys`
        /// and `hist` (which hold this launch's tiles only).
        tile0: u32,
        /// Offsets per row (`s` rounded up to a multiple of 8).
        sp: u32,
        /// Outputs per block (a multiple of [`PIXEL_ROWS_PER_PASS`]).
        rows: u32,
        /// `m · sp` byte offsets into the tile, `j · 128` for the row's indices `j` in order, then
        /// `d · 128` (the zero row) as padding; 32-byte aligned.
        offs: DevPtr<u32>,
        /// `d · groups` words of four pixels.
        pix: DevPtr<u32>,
        /// First-pass bins counted per input ([`pixel_bins`] of `s`).
        bins: u32,
        /// Inputs of the launch's tiles ([`PIXEL_TILE_INPUTS`] per tile): the stride of an
        /// octet in `keys`.
        bp: u32,
        /// `m · bp` sums in octets, written.
        keys: DevMut<u16>,
        /// `bp · 256` first-pass counts, zeroed before the launch, added to.
        hist: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_pixel_wta`: a block of [`PIXEL_WTA_THREADS`] per 32 inputs (a lane per input, a warp
    /// per sixteenth of the code): the radix select of each input's `m` sums (`RadixSelect::new16`;
    /// the first pass's counts come from `fly_pixel_act`), then the code words in index order
    /// through `select_range`.
    PixelWta => FlyPixelWta {
        /// Code length (a multiple of 64).
        m: u32,
        /// Winners.
        k: u32,
        /// Inputs of the whole batch.
        b: u32,
        /// The launch's first input: lane `l` of block `x` is input `i0 + 32x + l`, at position
        /// `32x + l` in `keys` and `hist`.
        i0: u32,
        /// Inputs in `keys` per octet (a multiple of 32).
        bp: u32,
        /// `m · bp` sums in octets.
        keys: DevPtr<u16>,
        /// `bp · 256` first-pass counts (from `fly_pixel_act`).
        hist: DevPtr<u32>,
        /// `b · ⌈m/64⌉` code words (the whole batch's), written for the launch's inputs.
        codes: DevMut<Word>,
    }
}

kernel_struct! {
    /// `fly_codes_word_major`: one thread per word of a chunk of `count` codes uploaded
    /// code-major, consecutive threads writing consecutive words of the word-major database:
    /// `dst[w · np + j0 + j] = src[j · words + w]`. The database reaches the device as the host
    /// holds it (one plain copy per chunk) and is laid out for `fly_hamming_keys` there.
    CodesWordMajor => FlyCodesWordMajor {
        /// Words per code.
        words: u32,
        /// Codes in this chunk.
        count: u32,
        /// Index of the chunk's first code.
        j0: u32,
        /// The database's stride (codes rounded up to 64).
        np: u32,
        /// `count · words` words, code-major.
        src: DevPtr<Word>,
        /// `words · np` words, word-major.
        dst: DevMut<Word>,
    }
}
