//! The filtered `f32` path: a sample of the projection's rows bounds each input's threshold,
//! then only the rows that may win are summed exactly.

use crate::flyhash::KeyInterval;
use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

/// Inputs per tile of the filtered `f32` path (`fly_float_sample`, `fly_float_hash`): a tile
/// holds `(d + 1) · 32` floats (row `d` zero, the padding index), 128 bytes per dimension, and a
/// lane sums four inputs of one row per 16-byte shared load.
pub const FLOAT_TILE_INPUTS: u32 = 32;
/// Threads per block of `fly_float_sample` and `fly_float_hash`.
pub const FLOAT_HASH_THREADS: u32 = 512;
/// Threads per block of `fly_float_interval` (a lane per input, a warp per sixteenth of the
/// sample).
pub const FLOAT_INTERVAL_THREADS: u32 = 512;
/// Threads per block of `fly_float_resolve` (a block per input).
pub const FLOAT_RESOLVE_THREADS: u32 = 256;
/// Sample rows per input (the first rows of the projection), at most `m`.
pub const FLOAT_SAMPLE_ROWS: u32 = 4096;

/// Rows whose indices a warp of `fly_float_sample` or `fly_float_hash` stages in shared memory
/// at once (four steps of four rows).
pub const FLOAT_STAGE_ROWS: u32 = 16;

/// Dynamic shared bytes of a `fly_float_sample` or `fly_float_hash` block for dimension `d` and
/// `sp` indices per row: the tile, two counts per input, then per warp the `u16` indices of
/// [`FLOAT_STAGE_ROWS`] rows.
pub const fn float_tile_shared(d: u32, sp: u32) -> u32 {
    (d + 1) * FLOAT_TILE_INPUTS * 4 + 2 * FLOAT_TILE_INPUTS * 4 + (FLOAT_HASH_THREADS / 32) * FLOAT_STAGE_ROWS * sp * 2
}

/// Dynamic shared bytes of a `fly_float_interval` block: two 256-bin histograms per input
/// (`(side · 256 + bin) · 32 + lane` words).
pub const FLOAT_INTERVAL_SHARED: u32 = 2 * 256 * 32 * 4;

kernel_struct! {
    /// `fly_float_sample`: a block of [`FLOAT_HASH_THREADS`] per tile of [`FLOAT_TILE_INPUTS`]
    /// inputs sums the first `n` rows (`activation_chunks` over the tile in shared memory) and
    /// writes their keys.
    FloatSample => FlyFloatSample {
        /// Input dimension.
        d: u32,
        /// Inputs.
        b: u32,
        /// Indices per row (`s` rounded up to a multiple of 4).
        sp: u32,
        /// Sample rows (a multiple of [`FLOAT_STAGE_ROWS`]).
        n: u32,
        /// `m · sp` indices, the row's in order then `d` (the zero row) as padding; 16-byte aligned.
        offs: DevPtr<u16>,
        /// Transposed inputs, `xt[j · b + i]`.
        xt: DevPtr<f32>,
        /// The batch rounded up to whole tiles: the stride of a row in `keys`.
        bp: u32,
        /// `n · bp` keys, `keys[r · bp + i]`, written.
        keys: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_float_interval`: a block of [`FLOAT_INTERVAL_THREADS`] per 32 inputs runs each
    /// input's `SampleSelect` over its `n` sample keys.
    FloatInterval => FlyFloatInterval {
        /// Code length.
        m: u32,
        /// Winners.
        k: u32,
        /// Sample rows.
        n: u32,
        /// Row stride of `keys` (a multiple of 32).
        bp: u32,
        /// The sample keys of `fly_float_sample`.
        keys: DevPtr<u32>,
        /// `bp` intervals, written.
        iv: DevMut<KeyInterval>,
    }
}

kernel_struct! {
    /// `fly_float_hash`: a block of [`FLOAT_HASH_THREADS`] per tile of [`FLOAT_TILE_INPUTS`]
    /// inputs sums every row, classifies each key against its input's interval, writes the code
    /// words of the keys above it, keeps the keys inside it as packed `candidate`s and counts both.
    FloatHash => FlyFloatHash {
        /// Code length (a multiple of 64).
        m: u32,
        /// Input dimension.
        d: u32,
        /// Inputs.
        b: u32,
        /// Indices per row.
        sp: u32,
        /// Candidates kept per input.
        cap: u32,
        /// As for [`FloatSample`].
        offs: DevPtr<u16>,
        /// Transposed inputs.
        xt: DevPtr<f32>,
        /// The intervals of `fly_float_interval`.
        iv: DevPtr<KeyInterval>,
        /// `b · m/64` code words, written.
        codes: DevMut<Word>,
        /// `b · 2` counts (above, inside), written.
        counts: DevMut<u32>,
        /// `b · cap` candidates, the first `min(inside, cap)` of each input written.
        cand: DevMut<u64>,
    }
}

kernel_struct! {
    /// `fly_float_resolve`: a block of [`FLOAT_RESOLVE_THREADS`] per input selects the winning
    /// candidates (`RadixSelect64`) and sets their bits; an input whose counts cannot decide
    /// (`FilterCounts::need`) is appended to `fail` instead.
    FloatResolve => FlyFloatResolve {
        /// Code length (a multiple of 64).
        m: u32,
        /// Winners.
        k: u32,
        /// Candidates kept per input.
        cap: u32,
        /// The intervals (the candidates' keys lie in them).
        iv: DevPtr<KeyInterval>,
        /// The counts of `fly_float_hash`.
        counts: DevPtr<u32>,
        /// Its candidates.
        cand: DevPtr<u64>,
        /// Its code words, completed.
        codes: DevMut<Word>,
        /// `1 + b` words: the count of undecided inputs (zeroed before), then their indices.
        fail: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_gather`: one thread per element of `out`: the columns `list` of the transposed inputs.
    Gather => FlyGather {
        /// Input dimension.
        d: u32,
        /// Inputs in `xt`.
        b: u32,
        /// Inputs gathered.
        n: u32,
        /// `n` input indices below `b`.
        list: DevPtr<u32>,
        /// Transposed inputs.
        xt: DevPtr<f32>,
        /// `d · n` transposed inputs, written.
        out: DevMut<f32>,
    }
}

kernel_struct! {
    /// `fly_unpack_pixels`: one thread per element of `xt`: packed pixels as transposed floats
    /// (the `f32` copy of pixel inputs, made on the device when a path needs it).
    UnpackPixels => FlyUnpackPixels {
        /// Input dimension.
        d: u32,
        /// Inputs.
        b: u32,
        /// Input groups, `⌈b/4⌉`.
        groups: u32,
        /// `d · groups` words of four pixels.
        pix: DevPtr<u32>,
        /// `d · b` floats, `xt[j · b + i]`, written.
        xt: DevMut<f32>,
    }
}
