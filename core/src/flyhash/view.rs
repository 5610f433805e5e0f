//! A fitted FlyNN over borrowed, read-only data: the projection as sparse indices (`s` input
//! indices per output), the class memories as saturating counts and the `γ^n` weight table, e.g.
//! `&'static` slices in a microcontroller's flash written by `neurobits flynn export`. One input
//! at a time with the exact WTA, through the same rules as every other target: [`activation`],
//! [`sort_key`], [`wta_pack_keys`], [`flynn_novelty`], [`flynn_class`].

use super::{activation, flynn_class, flynn_novelty, sort_key, wta_pack_keys, FlyParams};
use crate::{Error, Word};

/// A FlyNN classifier (exact WTA) over borrowed data.
///
/// ```
/// use neurobits_core::flyhash::{flynn_weights, FlyParams, FlynnView, FLYNN_WEIGHTS};
/// // d = 3 inputs, m = 4 outputs of s = 1 input each, k = 1 winner, 2 classes.
/// let p = FlyParams::new(3, 4, 1, 1, 1).unwrap();
/// let projection = [0u32, 1, 2, 0];
/// // Class 0 has seen output 2 once; class 1 output 1 twice.
/// let counts = [0u16, 0, 1, 0, 0, 2, 0, 0];
/// let mut w = vec![0u64; FLYNN_WEIGHTS];
/// flynn_weights(0.5, &mut w);
/// let view = FlynnView::new(p, &projection, &counts, &w[..3], 2).unwrap();
/// let (mut keys, mut cand, mut code) = ([0u32; 4], [0u32; 4], [0u64; 1]);
/// // Input 2 is the largest: output 2 wins; class 0 knows it.
/// assert_eq!(view.predict(&[0.1, 0.2, 0.9], &mut keys, &mut cand, &mut [0; 256], &mut code), Ok(0));
/// assert_eq!(view.predict(&[0.1, 0.9, 0.2], &mut keys, &mut cand, &mut [0; 256], &mut code), Ok(1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FlynnView<'a> {
    params: FlyParams,
    projection: &'a [u32],
    counts: &'a [u16],
    weights: &'a [u64],
    classes: usize,
}

impl<'a> FlynnView<'a> {
    /// Checks the lengths (`projection`: `m·s` indices below `d`; `counts`: `classes·m`; every
    /// count indexes `weights`, which may stop after the largest count). `const`, for statics.
    pub const fn new(
        params: FlyParams,
        projection: &'a [u32],
        counts: &'a [u16],
        weights: &'a [u64],
        classes: usize,
    ) -> Result<Self, Error> {
        let (m, s) = (params.m as usize, params.s as usize);
        if params.d == 0 || m == 0 || s == 0 || params.k == 0 || params.s > params.d || params.k > params.m {
            return Err(Error::FlyParams);
        }
        if projection.len() != m * s {
            return Err(Error::Capacity(m * s, projection.len()));
        }
        if classes == 0 || counts.len() != classes * m {
            return Err(Error::Capacity(classes * m, counts.len()));
        }
        let mut i = 0;
        while i < projection.len() {
            if projection[i] >= params.d {
                return Err(Error::FlyParams);
            }
            i += 1;
        }
        let mut i = 0;
        while i < counts.len() {
            if counts[i] as usize >= weights.len() {
                return Err(Error::Capacity(counts[i] as usize + 1, weights.len()));
            }
            i += 1;
        }
        Ok(FlynnView { params, projection, counts, weights, classes })
    }

    /// The FlyHash parameters.
    pub const fn params(&self) -> &FlyParams {
        &self.params
    }

    /// Number of classes.
    pub const fn classes(&self) -> usize {
        self.classes
    }

    /// The class index (ties: the lower) of input `x` (`d` values); scratch: `keys` and `cand`
    /// of `m` entries, `code` of [`FlyParams::code_words`] words (it ends holding the code).
    pub fn predict(
        &self,
        x: &[f32],
        keys: &mut [u32],
        cand: &mut [u32],
        hist: &mut [u32; 256],
        code: &mut [Word],
    ) -> Result<usize, Error> {
        let (p, m) = (&self.params, self.params.m as usize);
        if x.len() != p.d as usize {
            return Err(Error::Arity(p.d as usize, x.len()));
        }
        for (len, need) in [(keys.len(), m), (cand.len(), m), (code.len(), p.code_words())] {
            if len < need {
                return Err(Error::Capacity(need, len));
            }
        }
        let code = &mut code[..p.code_words()];
        for (key, row) in keys[..m].iter_mut().zip(self.projection.chunks_exact(p.s as usize)) {
            *key = sort_key(activation(row, x));
        }
        wta_pack_keys(&keys[..m], p.k as usize, hist, &mut cand[..m], code);
        let (counts, weights) = (self.counts, self.weights);
        Ok(flynn_class(self.classes, |c| flynn_novelty(code, |i| counts[c * m + i], |n| weights[n as usize])))
    }
}
