//! Squared Euclidean distance for re-ranking candidates on the original vectors, in one fixed
//! order so that every target gets the same float: lane `l` of 16 sums `(a[i] − b[i])²` for
//! `i ≡ l (mod 16)` in increasing `i` from `+0.0`, then the 16 lanes are added pairwise
//! (`l` with `l + 8`, then `+ 4`, `+ 2`, `+ 1`). Sixteen independent lanes are what lets a
//! compiler keep the loop in vector registers (SSE, AVX2, AVX-512) without reassociating it.
//!
//! Pixel vectors (`u8`, Fashion-MNIST's 0..255) have an integer path, [`sq_euclidean_pixels`],
//! with the same result bit for bit: each squared difference is an integer ≤ 65 025, so while a
//! lane holds at most 258 of them its `f32` sum is an integer below 2²⁴ — exact, hence equal to
//! the `u32` lane sum — and the lanes then go through the same `f32` tree. An index that keeps
//! pixels as bytes reads a quarter of the memory per candidate, which is what re-ranking waits on.

/// Lanes of [`sq_euclidean`].
pub const EUCLID_LANES: usize = 16;

/// `Σ (a[i] − b[i])²` over `min(a.len(), b.len())` values, in the order above.
///
/// ```
/// use neurobits_core::flyhash::sq_euclidean;
/// assert_eq!(sq_euclidean(&[1.0, 2.0, 3.0], &[1.0, 0.0, 6.0]), 13.0);
/// ```
#[inline(always)]
pub fn sq_euclidean(a: &[f32], b: &[f32]) -> f32 {
    sq_euclidean_by(a, b, |x, y| x - y)
}

/// [`sq_euclidean`] of a pixel row (`u8`) and a float vector: each pixel widened to `f32`, then
/// the same operations in the same order, so `sq_euclidean_mixed(a, b) == sq_euclidean(&a as
/// f32s, b)` bit for bit. The GPU's re-ranking calls it where the index keeps pixels and a query
/// is not all pixels (a thread cannot widen a row into a buffer first, as the CPU does).
///
/// ```
/// use neurobits_core::flyhash::{sq_euclidean, sq_euclidean_mixed};
/// let (a, b) = ([0u8, 255, 7], [0.5f32, 3.25, 7.0]);
/// assert_eq!(sq_euclidean_mixed(&a, &b), sq_euclidean(&[0.0, 255.0, 7.0], &b));
/// ```
#[inline(always)]
pub fn sq_euclidean_mixed(a: &[u8], b: &[f32]) -> f32 {
    sq_euclidean_by(a, b, |x, y| x as f32 - y)
}

/// The one summation order of [`sq_euclidean`] over `diff(a[i], b[i])`.
#[inline(always)]
fn sq_euclidean_by<A: Copy, B: Copy>(a: &[A], b: &[B], diff: impl Fn(A, B) -> f32) -> f32 {
    let n = a.len().min(b.len());
    let mut lane = [0.0f32; EUCLID_LANES];
    let full = n / EUCLID_LANES * EUCLID_LANES;
    for (ca, cb) in a[..full].chunks_exact(EUCLID_LANES).zip(b[..full].chunks_exact(EUCLID_LANES)) {
        for l in 0..EUCLID_LANES {
            let d = diff(ca[l], cb[l]);
            let sq = d * d;
            lane[l] += sq;
        }
    }
    for i in full..n {
        let d = diff(a[i], b[i]);
        let sq = d * d;
        lane[i - full] += sq;
    }
    lane_tree(lane)
}

/// The lanes added pairwise: `l` with `l + 8`, then `+ 4`, `+ 2`, `+ 1`.
#[inline(always)]
fn lane_tree(mut lane: [f32; EUCLID_LANES]) -> f32 {
    let mut w = EUCLID_LANES / 2;
    while w > 0 {
        for l in 0..w {
            lane[l] += lane[l + w];
        }
        w /= 2;
    }
    lane[0]
}

/// Longest pixel vectors for which [`sq_euclidean_pixels`] equals [`sq_euclidean`]: 258 values
/// per lane (258 · 65 025 < 2²⁴ ≤ 259 · 65 025).
pub const PIXEL_EUCLID_MAX_DIM: usize = EUCLID_LANES * 258;

/// [`sq_euclidean`] of pixel vectors: the lanes summed as `u32`, then the same `f32` tree. Equal
/// to `sq_euclidean` of the values as `f32`, bit for bit, for lengths up to
/// [`PIXEL_EUCLID_MAX_DIM`].
///
/// ```
/// use neurobits_core::flyhash::{sq_euclidean, sq_euclidean_pixels};
/// let (a, b) = ([0u8, 255, 7, 9], [255u8, 0, 7, 1]);
/// let f = |v: &[u8]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
/// assert_eq!(sq_euclidean_pixels(&a, &b), sq_euclidean(&f(&a), &f(&b)));
/// ```
#[inline(always)]
pub fn sq_euclidean_pixels(a: &[u8], b: &[u8]) -> f32 {
    let n = a.len().min(b.len());
    let mut lane = [0u32; EUCLID_LANES];
    let full = n / EUCLID_LANES * EUCLID_LANES;
    for (ca, cb) in a[..full].chunks_exact(EUCLID_LANES).zip(b[..full].chunks_exact(EUCLID_LANES)) {
        for l in 0..EUCLID_LANES {
            let d = ca[l] as i32 - cb[l] as i32;
            lane[l] += (d * d) as u32;
        }
    }
    for i in full..n {
        let d = a[i] as i32 - b[i] as i32;
        lane[i - full] += (d * d) as u32;
    }
    let mut f = [0f32; EUCLID_LANES];
    for l in 0..EUCLID_LANES {
        f[l] = lane[l] as f32;
    }
    lane_tree(f)
}
