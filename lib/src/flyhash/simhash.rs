//! SimHash (Charikar 2002): a dense Gaussian random projection and the sign of each output.

use neurobits_core::prng::{draw, stream_key};
use neurobits_core::Word;
use rayon::prelude::*;

use super::data::Matrix;

/// `bits × d` standard normal entries (Box–Muller over the portable PRNG).
pub fn projection(bits: usize, d: usize, seed: u64) -> Vec<f32> {
    let key = stream_key(seed, 17);
    (0..bits * d)
        .map(|i| {
            let u = |j: u64| ((draw(key, 2 * i as u64 + j) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            ((-2.0 * u(0).ln()).sqrt() * (2.0 * std::f64::consts::PI * u(1)).cos()) as f32
        })
        .collect()
}

/// Codes: bit `j` set iff projection row `j` · x > 0.
pub fn hash(proj: &[f32], bits: usize, x: &Matrix) -> Vec<Word> {
    let words = bits.div_ceil(64);
    let mut codes = vec![0; x.rows * words];
    codes.par_chunks_mut(words).enumerate().for_each(|(i, code)| {
        let xi = x.row(i);
        for j in 0..bits {
            let dot: f32 = proj[j * x.cols..(j + 1) * x.cols].iter().zip(xi).map(|(a, b)| a * b).sum();
            if dot > 0.0 {
                code[j / 64] |= 1 << (j % 64);
            }
        }
    });
    codes
}
