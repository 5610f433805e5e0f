//! Dense fly codes on the CPU, over core's rules (`neurobits_core::flyhash::dense_*`): every
//! projection output becomes a bit, against the input's mean activation (DenseFly, Sharma &
//! Navlakha 2018) or against a threshold per bit learned from training vectors (the median
//! activation of that output). Compared with SimHash at equal code length in `flyhash eval`.

use neurobits_core::flyhash::{activation, dense_mean, dense_median, dense_pack, sort_key, FlyParams};
use neurobits_core::Word;
use rayon::prelude::*;

use super::data::Matrix;

/// The `m` activations of every row of `x` (`rows · m` floats, row-major): core's `activation`,
/// the same floats as the winner-take-all codes are built from.
pub fn activations(p: &FlyParams, proj: &[u32], x: &Matrix) -> Vec<f32> {
    let (m, s) = (p.m as usize, p.s as usize);
    let mut act = vec![0f32; x.rows * m];
    act.par_chunks_mut(m).enumerate().for_each(|(i, out)| {
        let xi = x.row(i);
        for (r, a) in out.iter_mut().enumerate() {
            *a = activation(&proj[r * s..(r + 1) * s], xi);
        }
    });
    act
}

/// DenseFly codes of `bits` bits from the first `bits` of each row's `stride` activations: bit
/// `i` set iff activation `i` exceeds the mean of those `bits` activations.
pub fn mean_codes(act: &[f32], stride: usize, bits: usize) -> Vec<Word> {
    let words = bits.div_ceil(64);
    let mut codes = vec![0; act.len() / stride * words];
    codes.par_chunks_mut(words).zip(act.par_chunks(stride)).for_each(|(code, a)| {
        let t = dense_mean(&a[..bits]);
        dense_pack(bits, |i| sort_key(a[i]), |_| t, code);
    });
    codes
}

/// The learned thresholds of the first `bits` outputs: each output's median activation over
/// the training rows `act` (as keys, see `dense_median`).
pub fn learn_medians(act: &[f32], stride: usize, bits: usize) -> Vec<u32> {
    let n = act.len() / stride;
    (0..bits).into_par_iter().map(|i| dense_median(n, |j| sort_key(act[j * stride + i]))).collect()
}

/// Codes of `thresholds.len()` bits: bit `i` set iff activation `i` exceeds threshold `i`.
pub fn threshold_codes(act: &[f32], stride: usize, thresholds: &[u32]) -> Vec<Word> {
    let bits = thresholds.len();
    let words = bits.div_ceil(64);
    let mut codes = vec![0; act.len() / stride * words];
    codes.par_chunks_mut(words).zip(act.par_chunks(stride)).for_each(|(code, a)| {
        dense_pack(bits, |i| sort_key(a[i]), |i| thresholds[i], code);
    });
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_thresholds_split_the_training_set_in_half() {
        let x = Matrix { rows: 101, cols: 8, data: (0..808).map(|i| ((i * 7919) % 251) as f32).collect() };
        let p = FlyParams::new(8, 64, 3, 1, 1).unwrap();
        let proj = super::super::cpu::projection(&p);
        let act = activations(&p, &proj, &x);
        let t = learn_medians(&act, 64, 64);
        let codes = threshold_codes(&act, 64, &t);
        for b in 0..64 {
            let ones = codes.iter().filter(|w| *w >> b & 1 == 1).count();
            // Strictly above the 51st largest: at most 50 rows, fewer only where values tie.
            assert!((35..=50).contains(&ones), "bit {b}: {ones} of 101 rows");
        }
        // DenseFly: a prefix of the activations gives the code of the shorter length.
        let (full, half) = (mean_codes(&act, 64, 64), mean_codes(&act, 64, 32));
        let mean32 = |a: &[f32]| a[..32].iter().sum::<f32>() / 32.0;
        for (r, a) in act.chunks(64).enumerate() {
            assert_eq!(half[r], (0..32).filter(|&i| a[i] > mean32(a)).fold(0, |w, i| w | 1 << i));
            assert!(full[r].count_ones() > 0);
        }
    }
}
