use super::FlyParams;
use crate::prng::{below, draw, stream_key};

const PROJECTION: u64 = 16;

/// Row `row` of the projection: `s` distinct indices in `[0, d)`, ascending, into `out[..s]`.
///
/// ```
/// use neurobits_core::flyhash::{projection_row, FlyParams};
/// let p = FlyParams::new(784, 100, 39, 5, 1).unwrap();
/// let mut r = [0u32; 39];
/// projection_row(&p, 7, &mut r);
/// assert!(r.windows(2).all(|w| w[0] < w[1]) && r[38] < 784);
/// ```
#[inline]
pub fn projection_row(p: &FlyParams, row: u32, out: &mut [u32]) {
    let (d, s) = (p.d as u64, p.s as usize);
    let key = stream_key(p.seed, PROJECTION);
    let base = row as u64 * s as u64;
    // Floyd's algorithm: exactly s distinct values, one draw each.
    for (n, j) in (d - s as u64..d).enumerate() {
        let t = below(draw(key, base + n as u64), j + 1) as u32;
        out[n] = if out[..n].contains(&t) { j as u32 } else { t };
    }
    // Insertion sort: s is small.
    for i in 1..s {
        let x = out[i];
        let mut j = i;
        while j > 0 && out[j - 1] > x {
            out[j] = out[j - 1];
            j -= 1;
        }
        out[j] = x;
    }
}

/// One output of the projection: the `f32` sum of `x` over `indices`, in their (ascending) order.
///
/// ```
/// assert_eq!(neurobits_core::flyhash::activation(&[0, 2], &[1.5, 9.0, 2.0]), 3.5);
/// ```
#[inline(always)]
pub fn activation(indices: &[u32], x: &[f32]) -> f32 {
    activation_with(indices, |i| x[i])
}

/// [`activation`] over any layout of the input: `x(i)` is input dimension `i`.
///
/// ```
/// let xt = [1.5f32, 9.0, 2.0];
/// assert_eq!(neurobits_core::flyhash::activation_with(&[0, 2], |i| xt[i]), 3.5);
/// ```
#[inline(always)]
pub fn activation_with(indices: &[u32], x: impl Fn(usize) -> f32) -> f32 {
    let mut acc = 0.0f32;
    for &i in indices {
        acc += x(i as usize);
    }
    acc
}
