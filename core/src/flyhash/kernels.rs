//! Argument structs of the FlyHash kernels (see [`crate::kernel`]). Layouts: inputs transposed,
//! `xt[j · b + i]` (input `i`, dimension `j`), and activations `act[r · b + i]`, so that
//! consecutive threads (consecutive inputs) touch consecutive words.

use super::{FlyParams, RadixSelect};
use crate::kernel::{kernel_args, DevMut, DevPtr};
use crate::Word;

/// `fly_projection`: one thread per projection row.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Projection {
    /// The FlyHash parameters.
    pub params: FlyParams,
    /// `m · s` indices, written.
    pub proj: DevMut<u32>,
}

/// `fly_activation`: one thread per (output row, input), 32-input tiles.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Activation {
    /// Code length.
    pub m: u32,
    /// Ones per row.
    pub s: u32,
    /// Inputs.
    pub b: u32,
    /// Projection.
    pub proj: DevPtr<u32>,
    /// Transposed inputs.
    pub xt: DevPtr<f32>,
    /// Activations, written.
    pub act: DevMut<f32>,
}

/// `fly_radix_init`: one thread per input.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RadixInit {
    /// Inputs.
    pub b: u32,
    /// Winners.
    pub k: u32,
    /// One selection per input, written.
    pub states: DevMut<RadixSelect>,
}

/// `fly_radix_hist`: one thread per (chunk, input).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RadixHist {
    /// Code length.
    pub m: u32,
    /// Inputs.
    pub b: u32,
    /// Outputs per chunk.
    pub chunk: u32,
    /// Activations.
    pub act: DevPtr<f32>,
    /// Selections.
    pub states: DevPtr<RadixSelect>,
    /// `b · 256` counts, added to.
    pub hist: DevMut<u32>,
}

/// `fly_radix_pick`: one thread per input.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RadixPick {
    /// Inputs.
    pub b: u32,
    /// Selections, advanced.
    pub states: DevMut<RadixSelect>,
    /// Histograms, read and cleared.
    pub hist: DevMut<u32>,
}

/// `fly_tie_count`: one thread per (chunk, input).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TieCount {
    /// Code length.
    pub m: u32,
    /// Inputs.
    pub b: u32,
    /// Outputs per chunk.
    pub chunk: u32,
    /// Activations.
    pub act: DevPtr<f32>,
    /// Selections.
    pub states: DevPtr<RadixSelect>,
    /// `chunks · b` counts, written.
    pub counts: DevMut<u32>,
}

/// `fly_select`: one thread per (chunk, input).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Select {
    /// Code length.
    pub m: u32,
    /// Inputs.
    pub b: u32,
    /// Outputs per chunk (a multiple of 64).
    pub chunk: u32,
    /// Activations.
    pub act: DevPtr<f32>,
    /// Selections.
    pub states: DevPtr<RadixSelect>,
    /// Tie counts per chunk.
    pub counts: DevPtr<u32>,
    /// Codes, written.
    pub codes: DevMut<Word>,
}

/// `fly_wta_bisect64`: one thread per input.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Bisect64 {
    /// Code length.
    pub m: u32,
    /// Winners asked for.
    pub k: u32,
    /// Inputs.
    pub b: u32,
    /// The margin ε.
    pub eps: f32,
    /// Activations.
    pub act: DevPtr<f32>,
    /// Codes, written.
    pub codes: DevMut<Word>,
}

/// `fly_hamming`: one thread per (query, database code).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Hamming {
    /// Words per code.
    pub words: u32,
    /// Database codes.
    pub n: u32,
    /// Queries.
    pub nq: u32,
    /// Database.
    pub db: DevPtr<Word>,
    /// Queries.
    pub q: DevPtr<Word>,
    /// `nq · n` distances, written.
    pub dist: DevMut<u32>,
}

/// `fly_top_r`: one thread per query.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TopR {
    /// Database codes.
    pub n: u32,
    /// Queries.
    pub nq: u32,
    /// Neighbours per query.
    pub r: u32,
    /// Distances.
    pub dist: DevPtr<u32>,
    /// `nq · r` indices, written.
    pub out: DevMut<u32>,
}

kernel_args! {
    Projection => FlyProjection,
    Activation => FlyActivation,
    RadixInit => FlyRadixInit,
    RadixHist => FlyRadixHist,
    RadixPick => FlyRadixPick,
    TieCount => FlyTieCount,
    Select => FlySelect,
    Bisect64 => FlyWtaBisect64,
    Hamming => FlyHamming,
    TopR => FlyTopR,
}
