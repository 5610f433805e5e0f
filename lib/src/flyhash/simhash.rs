//! SimHash (Charikar 2002): a dense Gaussian random projection and the sign of each output.

use neurobits_core::prng::{draw, stream_key};
use neurobits_core::Word;
use rayon::prelude::*;

use super::data::Matrix;

/// `bits × d` standard normal entries (Box–Muller over the portable PRNG). Row `j` does not
/// depend on `bits`, so the first `b` rows are the projection of `b` bits.
pub fn projection(bits: usize, d: usize, seed: u64) -> Vec<f32> {
    let key = stream_key(seed, 17);
    (0..bits * d)
        .map(|i| {
            let u = |j: u64| ((draw(key, 2 * i as u64 + j) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            ((-2.0 * u(0).ln()).sqrt() * (2.0 * std::f64::consts::PI * u(1)).cos()) as f32
        })
        .collect()
}

/// A dot product in eight fixed partial sums (vectorisable, and one fixed order).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            s[l] += x[l] * y[l];
        }
    }
    s.iter().sum::<f32>() + tail
}

/// Every row of `x` projected on the `bits` rows of `proj`: `rows · bits` floats.
pub fn project(proj: &[f32], bits: usize, x: &Matrix) -> Vec<f32> {
    let mut out = vec![0f32; x.rows * bits];
    out.par_chunks_mut(bits).enumerate().for_each(|(i, o)| {
        let xi = x.row(i);
        for (j, v) in o.iter_mut().enumerate() {
            *v = dot(&proj[j * x.cols..(j + 1) * x.cols], xi);
        }
    });
    out
}

/// Codes of `bits ≤ stride` bits from projections `dots` (`stride` per row): bit `j` set iff
/// projection `j` is positive.
pub fn codes(dots: &[f32], stride: usize, bits: usize) -> Vec<Word> {
    let words = bits.div_ceil(64);
    let mut codes = vec![0; dots.len() / stride * words];
    codes.par_chunks_mut(words).zip(dots.par_chunks(stride)).for_each(|(code, d)| {
        for j in 0..bits {
            if d[j] > 0.0 {
                code[j / 64] |= 1 << (j % 64);
            }
        }
    });
    codes
}

/// Codes: bit `j` set iff projection row `j` · x > 0.
pub fn hash(proj: &[f32], bits: usize, x: &Matrix) -> Vec<Word> {
    codes(&project(proj, bits, x), bits, bits)
}
