//! The rayon CPU driver of FlyHash over the core's step functions.

use neurobits_core::flyhash::{
    activation_with, bisect64, pack_above, projection_row, sort_key, wta_pack_keys, FlyParams, Lanes,
};
use neurobits_core::Word;
use rayon::prelude::*;

use super::data::{Matrix, MatrixRef};
use crate::device::{simd_detected, simd_level, Simd};

/// How the winners are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Wta {
    /// Exactly k winners (radix select, ties to the lower index).
    #[default]
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

/// Inputs hashed together: one 512-bit vector of `f32` lanes.
const LANES: usize = 16;

/// Codes of every row of `x` (`b · ⌈m/64⌉` words).
///
/// Inputs go sixteen at a time: their values are transposed so that input dimension `j` is one
/// 64-byte vector of sixteen lanes, and each projection row adds its `s` gathered vectors
/// ([`activation_with`] over [`Lanes`]) — one pass over the projection for sixteen inputs, each
/// lane the same `f32` additions in the same order as the one-input rule. The vector loop is
/// compiled for AVX2 and AVX-512 as well and chosen at run time; all give the same bits.
pub fn hash(p: &FlyParams, proj: &[u32], x: &Matrix, wta: Wta) -> Vec<Word> {
    hash_view(simd_level(), p, proj, x.view(), wta)
}

/// [`hash`] on a chosen instruction set (capped at what the CPU has), for the tests that
/// compare the versions.
pub fn hash_on(level: Simd, p: &FlyParams, proj: &[u32], x: &Matrix, wta: Wta) -> Vec<Word> {
    hash_view(level, p, proj, x.view(), wta)
}

/// [`hash_on`] of a borrowed matrix.
pub fn hash_view(level: Simd, p: &FlyParams, proj: &[u32], x: MatrixRef<'_>, wta: Wta) -> Vec<Word> {
    let (m, cw) = (p.m as usize, p.code_words());
    let level = level.min(simd_detected());
    let mut codes = vec![0; x.rows * cw];
    codes.par_chunks_mut(cw * LANES).enumerate().for_each_init(
        || Scratch {
            xt: vec![Lanes([0f32; LANES]); x.cols],
            act: vec![0f32; LANES * m],
            keys: vec![0u32; m],
            cand: vec![0u32; m],
            hist: [0u32; 256],
        },
        |sc, (blk, codes)| {
            let (b0, nb) = (blk * LANES, codes.len() / cw);
            for (j, v) in sc.xt.iter_mut().enumerate() {
                for (l, lane) in v.0.iter_mut().enumerate() {
                    *lane = if l < nb { x.data[(b0 + l) * x.cols + j] } else { 0.0 };
                }
            }
            match level {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` ≤ `simd_detected()`, which found AVX-512 F/BW/VL (and AVX2).
                Simd::Avx512 => unsafe { block_avx512(p, proj, wta, sc, codes) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `level` ≤ `simd_detected()`, which found AVX2.
                Simd::Avx2 => unsafe { block_avx2(p, proj, wta, sc, codes) },
                _ => block(p, proj, wta, sc, codes),
            }
        },
    );
    codes
}

/// One thread's buffers for a block of sixteen inputs.
struct Scratch {
    xt: Vec<Lanes<LANES>>,
    act: Vec<f32>,
    keys: Vec<u32>,
    cand: Vec<u32>,
    hist: [u32; 256],
}

/// The codes of one block: activations of all lanes (`act[l·m + r]`), then each input's WTA.
#[inline(always)]
fn block(p: &FlyParams, proj: &[u32], wta: Wta, sc: &mut Scratch, codes: &mut [Word]) {
    let (m, s, cw) = (p.m as usize, p.s as usize, p.code_words());
    for (r, row) in proj.chunks_exact(s).enumerate() {
        let a = activation_with(row, |j| sc.xt[j]);
        for (l, v) in a.0.iter().enumerate() {
            sc.act[l * m + r] = *v;
        }
    }
    for (l, code) in codes.chunks_mut(cw).enumerate() {
        let a = &sc.act[l * m..(l + 1) * m];
        match wta {
            Wta::Exact => {
                for (key, &v) in sc.keys.iter_mut().zip(a) {
                    *key = sort_key(v);
                }
                wta_pack_keys(&sc.keys, p.k as usize, &mut sc.hist, &mut sc.cand, code);
            }
            Wta::Bisect64 => {
                let mid = bisect64(m, p.k as usize, |r| a[r], BISECT_EPS);
                pack_above(m, |r| a[r], mid, code);
            }
        }
    }
}

/// [`block`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2(p: &FlyParams, proj: &[u32], wta: Wta, sc: &mut Scratch, codes: &mut [Word]) {
    block(p, proj, wta, sc, codes)
}

/// [`block`] compiled for AVX-512 (one 512-bit addition per lane vector, 16-key compares).
///
/// # Safety
/// The CPU must support AVX-512 F/BW/VL.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
unsafe fn block_avx512(p: &FlyParams, proj: &[u32], wta: Wta, sc: &mut Scratch, codes: &mut [Word]) {
    block(p, proj, wta, sc, codes)
}

/// The bisection's margin ε around the minimum and maximum.
pub const BISECT_EPS: f32 = 1e-3;
