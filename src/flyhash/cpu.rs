//! The rayon CPU driver of FlyHash over the core's step functions.

use neurobits_core::flyhash::{activation, bisect64, pack_above, projection_row, sort_key, wta_pack, FlyParams};
use neurobits_core::Word;
use rayon::prelude::*;

use super::data::Matrix;

/// How the winners are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Wta {
    /// Exactly k winners (radix select, ties to the lower index).
    Exact,
    /// The 64-step bisection of da Cunha et al. (2023): `x > mid`, count may differ from k.
    Bisect64,
}

/// The projection, `m` rows of `s` ascending indices.
pub fn projection(p: &FlyParams) -> Vec<u32> {
    let s = p.s as usize;
    let mut out = vec![0u32; p.m as usize * s];
    out.par_chunks_mut(s).enumerate().for_each(|(r, row)| projection_row(p, r as u32, row));
    out
}

/// Codes of every row of `x` (`b · ⌈m/64⌉` words).
pub fn hash(p: &FlyParams, proj: &[u32], x: &Matrix, wta: Wta) -> Vec<Word> {
    let (m, s, cw) = (p.m as usize, p.s as usize, p.code_words());
    let mut codes = vec![0; x.rows * cw];
    codes.par_chunks_mut(cw).enumerate().for_each_init(
        || (vec![0f32; m], [0u32; 256]),
        |(act, hist), (i, code)| {
            let xi = x.row(i);
            for (r, a) in act.iter_mut().enumerate() {
                *a = activation(&proj[r * s..(r + 1) * s], xi);
            }
            match wta {
                Wta::Exact => wta_pack(m, p.k as usize, |r| sort_key(act[r]), hist, code),
                Wta::Bisect64 => {
                    let mid = bisect64(m, p.k as usize, |r| act[r], BISECT_EPS);
                    pack_above(m, |r| act[r], mid, code);
                }
            }
        },
    );
    codes
}

/// The bisection's margin ε around the minimum and maximum.
pub const BISECT_EPS: f32 = 1e-3;
