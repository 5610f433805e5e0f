//! Argument structs of the FlyHash kernels (see [`crate::kernel`]). Layouts: inputs transposed,
//! `xt[j · b + i]` (input `i`, dimension `j`), and activations `act[r · b + i]`, so that
//! consecutive threads (consecutive inputs) touch consecutive words.
//!
//! The pixel path (inputs that are 8-bit pixels, see [`Pixels4`](super::Pixels4)) has its own
//! layouts: `pix[j · groups + g]` holds dimension `j` of inputs `4g..4g + 4` as the four bytes of
//! one word (`Pixels4::from_bytes`), and the sums are written in octets of outputs, `keys[((r / 8) · bp + i) · 8 + r % 8]`
//! (16 bits each, `bp` = `b` rounded up to a whole tile): one input's eight consecutive sums are
//! 16 contiguous bytes, and a warp of 32 inputs reads 512 contiguous bytes per octet.

use super::{FlyParams, KeyInterval, RadixSelect};
use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

kernel_struct! {
    /// `fly_projection`: one thread per projection row.
    Projection => FlyProjection {
        /// The FlyHash parameters.
        params: FlyParams,
        /// `m · s` indices, written.
        proj: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_activation`: one thread per (output row, input), 32-input tiles.
    Activation => FlyActivation {
        /// Code length.
        m: u32,
        /// Ones per row.
        s: u32,
        /// Inputs.
        b: u32,
        /// Projection.
        proj: DevPtr<u32>,
        /// Transposed inputs.
        xt: DevPtr<f32>,
        /// Activations, written.
        act: DevMut<f32>,
    }
}

kernel_struct! {
    /// `fly_radix_init`: one thread per input.
    RadixInit => FlyRadixInit {
        /// Inputs.
        b: u32,
        /// Winners.
        k: u32,
        /// One selection per input, written.
        states: DevMut<RadixSelect>,
    }
}

kernel_struct! {
    /// `fly_radix_hist`: one thread per (chunk, input).
    RadixHist => FlyRadixHist {
        /// Code length.
        m: u32,
        /// Inputs.
        b: u32,
        /// Outputs per chunk.
        chunk: u32,
        /// Activations.
        act: DevPtr<f32>,
        /// Selections.
        states: DevPtr<RadixSelect>,
        /// `b · 256` counts, added to.
        hist: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_radix_pick`: one thread per input.
    RadixPick => FlyRadixPick {
        /// Inputs.
        b: u32,
        /// Selections, advanced.
        states: DevMut<RadixSelect>,
        /// Histograms, read and cleared.
        hist: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_tie_count`: one thread per (chunk, input).
    TieCount => FlyTieCount {
        /// Code length.
        m: u32,
        /// Inputs.
        b: u32,
        /// Outputs per chunk.
        chunk: u32,
        /// Activations.
        act: DevPtr<f32>,
        /// Selections.
        states: DevPtr<RadixSelect>,
        /// `chunks · b` counts, written.
        counts: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_select`: one thread per (chunk, input).
    Select => FlySelect {
        /// Code length.
        m: u32,
        /// Inputs.
        b: u32,
        /// Outputs per chunk (a multiple of 64).
        chunk: u32,
        /// Activations.
        act: DevPtr<f32>,
        /// Selections.
        states: DevPtr<RadixSelect>,
        /// Tie counts per chunk.
        counts: DevPtr<u32>,
        /// Codes, written.
        codes: DevMut<Word>,
    }
}

kernel_struct! {
    /// `fly_wta_bisect64`: one thread per input.
    Bisect64 => FlyWtaBisect64 {
        /// Code length.
        m: u32,
        /// Winners asked for.
        k: u32,
        /// Inputs.
        b: u32,
        /// The margin ε.
        eps: f32,
        /// Activations.
        act: DevPtr<f32>,
        /// Codes, written.
        codes: DevMut<Word>,
    }
}

kernel_struct! {
    /// `fly_hamming`: one thread per (query, database code).
    Hamming => FlyHamming {
        /// Words per code.
        words: u32,
        /// Database codes.
        n: u32,
        /// Queries.
        nq: u32,
        /// Database.
        db: DevPtr<Word>,
        /// Queries.
        q: DevPtr<Word>,
        /// `nq · n` distances, written.
        dist: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_top_r`: one thread per query.
    TopR => FlyTopR {
        /// Database codes.
        n: u32,
        /// Queries.
        nq: u32,
        /// Neighbours per query.
        r: u32,
        /// Distances.
        dist: DevPtr<u32>,
        /// `nq · r` indices, written.
        out: DevMut<u32>,
    }
}

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

/// Queries per `fly_hamming_keys` tile (a half-warp's lanes).
pub const HAMMING_TILE_QUERIES: u32 = 16;
/// Threads per block of `fly_hamming_keys`.
pub const HAMMING_THREADS: u32 = 512;

/// Dynamic shared bytes of a `fly_hamming_keys` block for codes of `words` words: the tile's
/// queries (word-major), then their first-pass counts (16-bit, two to a word).
pub const fn hamming_keys_shared(words: u32) -> u32 {
    words * HAMMING_TILE_QUERIES * 8 + HAMMING_TILE_QUERIES * 256 / 2 * 4
}

kernel_struct! {
    /// `fly_hamming_keys`: blocks of [`HAMMING_THREADS`], one per (tile of
    /// [`HAMMING_TILE_QUERIES`] queries, chunk of `octets` octets of database codes), tile-major.
    /// A thread holds eight distances (an octet of codes against one query, through the core's
    /// `hamming_word`) and writes them as keys `65 535 − distance` in the octet layout of the
    /// pixel sums (so that `fly_pixel_wta`, selecting the `r` largest keys, finds the `r` nearest
    /// codes with ties to the lower index), counting the select's first pass.
    HammingKeys => FlyHammingKeys {
        /// Words per code (at most 1 023: distances below 2¹⁶).
        words: u32,
        /// Database codes.
        n: u32,
        /// Codes rounded up to 64: the stride of `db`, the keys per query.
        np: u32,
        /// Queries.
        nq: u32,
        /// Queries rounded up to 32: the stride of an octet in `keys`.
        bp: u32,
        /// Octets of codes per block (below 8 192: 16-bit counts).
        octets: u32,
        /// `words · np` database words, word-major (`db[w · np + j]`), zero past `n`.
        db: DevPtr<Word>,
        /// `nq · words` query words.
        q: DevPtr<Word>,
        /// `np · bp` keys in octets, written for the launch's tiles (0 for codes past `n`).
        keys: DevMut<u16>,
        /// `bp · 256` first-pass counts, zeroed before the launch, added to.
        hist: DevMut<u32>,
    }
}

kernel_struct! {
    /// `flynn_train`: one thread per (class, code bit), class-major: the saturating count of the
    /// class's training codes that have the bit (the core's `flynn_store` per code).
    FlynnTrain => FlynnTrain {
        /// Code length in bits.
        m: u32,
        /// Classes.
        classes: u32,
        /// `⌈m/64⌉`.
        words: u32,
        /// Training codes, `n · words`.
        codes: DevPtr<Word>,
        /// Training code indices grouped by class.
        order: DevPtr<u32>,
        /// `classes + 1` offsets into `order`.
        starts: DevPtr<u32>,
        /// `classes · m` counts, written.
        counts: DevMut<u16>,
    }
}

kernel_struct! {
    /// `flynn_classify`: one thread per code: the core's `flynn_novelty` to every class and
    /// `flynn_class`.
    FlynnClassify => FlynnClassify {
        /// Code length in bits.
        m: u32,
        /// Classes.
        classes: u32,
        /// `⌈m/64⌉`.
        words: u32,
        /// Codes.
        n: u32,
        /// `n · words` codes.
        codes: DevPtr<Word>,
        /// `classes · m` counts.
        counts: DevPtr<u16>,
        /// The `FLYNN_WEIGHTS` weights of `flynn_weights`.
        weights: DevPtr<u64>,
        /// `n` classes, written.
        out: DevMut<u32>,
    }
}

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
