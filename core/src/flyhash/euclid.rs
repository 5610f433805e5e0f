//! Squared Euclidean distance for re-ranking candidates on the original vectors, in one fixed
//! order so that every target gets the same float: lane `l` of 16 sums `(a[i] − b[i])²` for
//! `i ≡ l (mod 16)` in increasing `i` from `+0.0`, then the 16 lanes are added pairwise
//! (`l` with `l + 8`, then `+ 4`, `+ 2`, `+ 1`). Sixteen independent lanes are what lets a
//! compiler keep the loop in vector registers (SSE, AVX2, AVX-512) without reassociating it.

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
    let n = a.len().min(b.len());
    let mut lane = [0.0f32; EUCLID_LANES];
    let full = n / EUCLID_LANES * EUCLID_LANES;
    for (ca, cb) in a[..full].chunks_exact(EUCLID_LANES).zip(b[..full].chunks_exact(EUCLID_LANES)) {
        for l in 0..EUCLID_LANES {
            let d = ca[l] - cb[l];
            let sq = d * d;
            lane[l] += sq;
        }
    }
    for i in full..n {
        let d = a[i] - b[i];
        let sq = d * d;
        lane[i - full] += sq;
    }
    let mut w = EUCLID_LANES / 2;
    while w > 0 {
        for l in 0..w {
            lane[l] += lane[l + w];
        }
        w /= 2;
    }
    lane[0]
}
