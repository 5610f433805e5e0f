//! The search kernels: Hamming distances as selection keys, and FlyNN's class memories.

use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

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
    /// pixel sums (so that `fly_hamming_select`, selecting the `r` largest keys, finds the `r` nearest
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

/// Dynamic shared bytes of a `fly_hamming_keys_mma` block: [`hamming_keys_shared`] and the
/// tile's queries' bit counts.
pub const fn hamming_keys_mma_shared(words: u32) -> u32 {
    hamming_keys_shared(words) + HAMMING_TILE_QUERIES * 4
}

kernel_struct! {
    /// `fly_hamming_keys_mma`: the keys of [`HammingKeys`], in the same layout with the same
    /// first-pass counts, from the binary tensor cores: a warp per octet of codes takes the
    /// tile's 16 queries against its 8 codes 256 bits at a time (`mma … .b1 … .and.popc`: the
    /// bits each query shares with each code), and the core's `hamming_from_and` turns the
    /// counts into distances. Blocks of [`HAMMING_THREADS`], one per (chunk of `octets` octets,
    /// tile), **chunk-major**: the tiles of a chunk run side by side, so its codes are read from
    /// memory once and from L2 by the other tiles.
    HammingKeysMma => FlyHammingKeysMma {
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
        /// Tiles of [`HAMMING_TILE_QUERIES`] queries (the blocks of a chunk).
        tiles: u32,
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

/// Threads per block of `fly_hamming_select`: 32 queries (a lane each) × 16 parts of a chunk.
pub const HAMMING_SELECT_THREADS: u32 = 512;
/// Parts of a `fly_hamming_select` chunk (a warp each).
pub const HAMMING_SELECT_PARTS: u32 = HAMMING_SELECT_THREADS / 32;
/// Dynamic shared bytes of a `fly_hamming_select` block: per query a 256-bin histogram (`bin ·
/// 32 + lane` words), then two words per thread (its part's tie count, its share of the earlier
/// chunks' ties).
pub const HAMMING_SELECT_SHARED: u32 = (256 * 32 + 2 * HAMMING_SELECT_THREADS) * 4;

kernel_struct! {
    /// `fly_hamming_select`: the select of the search keys spread over the whole GPU — the
    /// radix select of `fly_pixel_wta` (`RadixSelect::new16`, the first pass counted by the key
    /// kernel) with the database cut into chunks of `cw` code words instead of a block per 32
    /// queries over all of it (100 queries over 10⁶ codes kept four blocks busy). Blocks of
    /// [`HAMMING_SELECT_THREADS`], one per (chunk, 32 queries), chunk-major; launched three times:
    /// `phase` 0 counts the second pass into `hist2`; 1 writes each query's mark words of the
    /// keys above the threshold and counts each part's keys at it into `ties`; 2 adds the
    /// winning ties (lowest index first, the core's `ties_left`/`select_range`) to the parts
    /// that hold them. The marks equal `fly_pixel_wta`'s bit for bit.
    HammingSelect => FlyHammingSelect {
        /// Keys per query (codes rounded up to 64).
        m: u32,
        /// Winners per query.
        k: u32,
        /// Queries.
        b: u32,
        /// Queries rounded up to 32: the stride of an octet in `keys`.
        bp: u32,
        /// Code words (64 keys each) per chunk.
        cw: u32,
        /// 0, 1 or 2 (above).
        phase: u32,
        /// `m · bp` keys in octets (as `fly_hamming_keys` writes them).
        keys: DevPtr<u16>,
        /// `bp · 256` first-pass counts (from the key kernel).
        hist: DevPtr<u32>,
        /// `bp · 256` second-pass counts: zeroed before phase 0, added to by it.
        hist2: DevMut<u32>,
        /// `chunks · parts · bp` counts of keys at the threshold, written by phase 1.
        ties: DevMut<u32>,
        /// `b · m/64` mark words, written by phases 1 and 2.
        codes: DevMut<Word>,
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
