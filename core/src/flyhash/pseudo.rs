//! The pseudo-hash of the approximate index (DenseFly, Sharma & Navlakha 2018): a short key per
//! table from sum-pooling the dense projection, so that near vectors fall in the same or a
//! nearby bucket and the index probes a few buckets instead of scanning every code.
//!
//! * Table `t` of `b` bits reads projection outputs `t·b·w .. (t+1)·b·w`: bit `j` pools the `w`
//!   activations `t·b·w + j·w + i`, `i < w`, summed in index order from `+0.0`.
//! * The `b` pooled sums are centred on their own mean (DenseFly's per-input threshold,
//!   [`dense_mean`](super::dense_mean)'s order): the projection's weights are all positive, so
//!   uncentred sums share the input's brightness and their bits agree — on Fashion-MNIST one
//!   bucket then held 39 % of the data.
//! * Bit `j` is set iff the centred sum's key is above threshold `j`'s key (learned: the median
//!   of that sum over the training vectors, [`dense_median`](super::dense_median)), so each bit
//!   halves the training data and buckets are as even as the data allow.
//! * A bit's probe cost is its squared margin, (sum − threshold)²: the query-directed score of
//!   multi-probe LSH (Lv et al., VLDB 2007), which [`Probes`](super::Probes) orders buckets by.

use super::sort_key;

/// Bits of a pseudo-hash at most (a bucket key is a `u32`; buckets are a table of `2^bits`).
pub const PSEUDO_MAX_BITS: usize = 24;

/// The `bits` centred pooled sums of one table: `out[j] = Σ_{i<pool} act(j·pool + i) − mean`, with
/// `act` indexed from the table's first output. Sums in index order from `+0.0`; the mean is the
/// `f32` sum of the `bits` sums in order, divided by `bits`.
///
/// ```
/// use neurobits_core::flyhash::pseudo_sums;
/// let act = [1.0f32, 2.0, 3.0, 4.0, 5.0, 9.0];
/// let mut s = [0f32; 3];
/// pseudo_sums(3, 2, |i| act[i], &mut s); // pooled: 3, 7, 14; mean 8
/// assert_eq!(s, [-5.0, -1.0, 6.0]);
/// ```
#[inline]
pub fn pseudo_sums(bits: usize, pool: usize, act: impl Fn(usize) -> f32, out: &mut [f32]) {
    let mut total = 0.0f32;
    for (j, o) in out[..bits].iter_mut().enumerate() {
        let mut s = 0.0f32;
        for i in 0..pool {
            s += act(j * pool + i);
        }
        *o = s;
        total += s;
    }
    let mean = total / bits.max(1) as f32;
    for o in out[..bits].iter_mut() {
        *o -= mean;
    }
}

/// The bucket key of centred sums: bit `j` set iff `sort_key(sums[j]) > thresholds[j]`.
///
/// ```
/// use neurobits_core::flyhash::{pseudo_key, sort_key};
/// let t = [sort_key(0.0), sort_key(1.0), sort_key(-1.0)];
/// assert_eq!(pseudo_key(&[0.5, 0.5, -2.0], &t), 0b001);
/// ```
#[inline]
pub fn pseudo_key(sums: &[f32], thresholds: &[u32]) -> u32 {
    let mut key = 0u32;
    for (j, (&s, &t)) in sums.iter().zip(thresholds).enumerate() {
        if sort_key(s) > t {
            key |= 1 << j;
        }
    }
    key
}

/// The value of a [`sort_key`]: `key_value(sort_key(v)) == v` for every `v` but `-0.0` (which
/// maps to `+0.0`). Thresholds are learned as keys; the probe costs need their values.
///
/// ```
/// use neurobits_core::flyhash::{key_value, sort_key};
/// for v in [-3.5f32, 0.0, 1e-30, 7.25] {
///     assert_eq!(key_value(sort_key(v)), v);
/// }
/// ```
#[inline(always)]
pub fn key_value(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 { key & 0x7fff_ffff } else { !key })
}

/// The probe cost of each bit: `costs[j] = d·d` with `d = sums[j] − key_value(thresholds[j])`.
///
/// ```
/// use neurobits_core::flyhash::{probe_costs, sort_key};
/// let mut c = [0f32; 2];
/// probe_costs(&[0.5, -2.0], &[sort_key(0.0), sort_key(1.0)], &mut c);
/// assert_eq!(c, [0.25, 9.0]);
/// ```
#[inline]
pub fn probe_costs(sums: &[f32], thresholds: &[u32], costs: &mut [f32]) {
    for ((c, &s), &t) in costs.iter_mut().zip(sums).zip(thresholds) {
        let d = s - key_value(t);
        *c = d * d;
    }
}
