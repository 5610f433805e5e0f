//! Argument structs of the FlyHash kernels (see [`crate::kernel`]). Layouts: inputs transposed,
//! `xt[j · b + i]` (input `i`, dimension `j`), and activations `act[r · b + i]`, so that
//! consecutive threads (consecutive inputs) touch consecutive words.
//!
//! The pixel path (inputs that are 8-bit pixels, see [`Pixels4`](super::Pixels4)) has its own
//! layouts: `pix[j · groups + g]` holds dimension `j` of inputs `4g..4g + 4` as the four bytes of
//! one word (`Pixels4::from_bytes`), and the sums are written in octets of outputs, `keys[((r / 8) · bp + i) · 8 + r % 8]`
//! (16 bits each, `bp` = `b` rounded up to a whole tile): one input's eight consecutive sums are
//! 16 contiguous bytes, and a warp of 32 inputs reads 512 contiguous bytes per octet.

use super::{FlyParams, RadixSelect};
use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

mod ann;
mod float;
mod pixel;
mod search;
pub use ann::*;
pub use float::*;
pub use pixel::*;
pub use search::*;

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
