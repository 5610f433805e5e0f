//! The scale constant `a` (spec §2.2): the mean over points of the mean distance to their
//! Delaunay neighbours, in `f64`. 2-D points are triangulated by spade ([`super::planar`]) where
//! the triangulation is unique, everything else by Qhull (the library scipy uses; the `qhull`
//! crate bundles its C sources, so no system package is needed) in the data's own dimension.
//!
//! Above 3-D (the paper's and FCPS's data are 2-D and 3-D) there is no triangulation: its size
//! grows exponentially with the dimension (6-D, 300 points: 4.5 s; 13-D wine or 30-D breast
//! cancer: out of reach). Nor is a mean neighbour distance a local scale there: distances
//! concentrate, so a Gaussian as wide as the distance to the 10th neighbour still gives the far
//! points most of a neuron's input (30-D breast cancer: each neuron's normalised coupling has a
//! perplexity of 366 of 569 neurons, and every run synchronizes as one cluster). Above 3-D the
//! scale is therefore calibrated as t-SNE calibrates its Gaussians (van der Maaten & Hinton
//! 2008), by the **perplexity** of the coupling a neuron sees, `J_ij / C_i`: the effective number
//! of neurons that drive it ([`perplexity_scale`], [`PERPLEXITY`] = 20, one `a` for all points).

use anyhow::{anyhow, bail, Result};
use qhull::Qh;

use super::points::Points;

/// The Delaunay edges of the points (pairs `i < j`, deduplicated, sorted): spade's in 2-D where
/// they are unique ([`super::planar::edges`]), else Qhull's ([`qhull_edges`]).
pub fn delaunay_edges(p: &Points) -> Result<Vec<(u32, u32)>> {
    if p.n <= p.dim {
        bail!("a Delaunay triangulation in {} dimensions needs more than {} points", p.dim, p.dim);
    }
    if p.dim == 2 {
        if let Some(edges) = super::planar::edges(p) {
            return Ok(edges);
        }
    }
    qhull_edges(p)
}

/// The Delaunay edges of the points by Qhull (pairs `i < j`, deduplicated, sorted): the scale's
/// triangulation in 3-D, and in 2-D where spade's is not unique.
pub fn qhull_edges(p: &Points) -> Result<Vec<(u32, u32)>> {
    if p.n <= p.dim {
        bail!("a Delaunay triangulation in {} dimensions needs more than {} points", p.dim, p.dim);
    }
    // Qhull through the qhull crate's Delaunay set-up (it lifts the points to a normalised
    // paraboloid itself). On degenerate (co-circular) input, Delaunay triangulations are not
    // unique, so `a` can differ from scipy's `d Qbb Qc Qz Q12` by a fraction of a percent (Lsun:
    // 0.22011 here, 0.21925 there); `--scale` pins it (spec OPEN-2).
    let qh = Qh::new_delaunay((0..p.n).map(|i| p.point(i).to_vec())).map_err(|e| {
        let why = e.to_string();
        let why = why.lines().find(|l| l.contains("QH")).unwrap_or("").trim().to_string();
        anyhow!("no Delaunay triangulation: the points are on one line or plane, or all on one circle or sphere ({why}); give --scale")
    })?;
    let mut edges = Vec::new();
    for s in qh.simplices().filter(|f| !f.upper_delaunay()) {
        let v: Vec<u32> = s
            .vertices()
            .ok_or_else(|| anyhow!("Qhull returned a simplex without vertices"))?
            .iter()
            .filter_map(|v| v.index(&qh).map(|i| i as u32))
            .collect();
        for a in 0..v.len() {
            for b in a + 1..v.len() {
                edges.push((v[a].min(v[b]), v[a].max(v[b])));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    Ok(edges)
}

/// Nearest neighbours of the former scale above [`DELAUNAY_MAX_DIM`] ([`knn_scale`]).
pub const NEIGHBOURS: usize = 10;
/// The median perplexity of the normalised coupling above [`DELAUNAY_MAX_DIM`]
/// ([`perplexity_scale`]): each neuron driven by about 20 others. In 2-D and 3-D the Delaunay
/// scale gives 18–90 on the synthetic families and FCPS; 20 was chosen on validation sets only
/// (5-D and 10-D blobs, 30-D blobs of varied spread, 30-D `make_classification`, digits; against
/// 10, 30 and 50 and the 10-NN mean: docs/manual/src/ocnn-quality.md).
pub const PERPLEXITY: f64 = 20.0;
/// Rows whose perplexity the search for the scale reads: evenly spaced, all of a smaller set.
pub const PERPLEXITY_ROWS: usize = 256;
/// Highest dimension triangulated for the scale.
pub const DELAUNAY_MAX_DIM: usize = 3;

/// `a = (1/N') Σ_i (1/|Nb(i)|) Σ_{j ∈ Nb(i)} |r_i − r_j|` over the `N'` points with at least one
/// neighbour (duplicate points have none), distances in `f64`; `Nb(i)`: the Delaunay neighbours
/// up to 3-D. Above 3-D: [`perplexity_scale`] with [`PERPLEXITY`].
///
/// ```
/// // A square of side 2 and its centre: each corner has two sides (2) and the centre (√2) as
/// // neighbours, the centre has the 4 corners (√2).
/// let p = neurobits::ocnn::points::parse("0 0\n2 0\n0 2\n2 2\n1 1\n", "mem").unwrap();
/// let a = neurobits::ocnn::scale::scale(&p).unwrap();
/// let want = (4.0 * (4.0 + 2f64.sqrt()) / 3.0 + 2f64.sqrt()) / 5.0;
/// assert!((a - want).abs() < 1e-12);
/// ```
pub fn scale(p: &Points) -> Result<f64> {
    if p.dim > DELAUNAY_MAX_DIM {
        return perplexity_scale(p, PERPLEXITY);
    }
    let edges = delaunay_edges(p)?;
    let (mut sum, mut count) = (vec![0f64; p.n], vec![0u32; p.n]);
    for &(i, j) in &edges {
        let d = distance(p.point(i as usize), p.point(j as usize));
        for k in [i as usize, j as usize] {
            sum[k] += d;
            count[k] += 1;
        }
    }
    let (mut total, mut with) = (0f64, 0usize);
    for (s, &c) in sum.iter().zip(&count) {
        if c > 0 {
            total += s / c as f64;
            with += 1;
        }
    }
    let a = total / with.max(1) as f64;
    if !(a.is_finite() && a > 0.0) {
        bail!("the scale constant is {a}: the points are all equal (set --scale)");
    }
    Ok(a)
}

/// The mean over points of the mean distance to their `k` nearest other points (`k` capped at
/// `N − 1`), by brute force in parallel rows; each point's own sum in ascending distance order.
///
/// ```
/// // Four corners of a unit square in 4-D: two neighbours at 1, one at √2.
/// let p = neurobits::ocnn::points::parse("0 0 0 0\n1 0 0 0\n0 1 0 0\n1 1 0 0\n", "mem").unwrap();
/// let a = neurobits::ocnn::scale::knn_scale(&p, 2).unwrap();
/// assert!((a - 1.0).abs() < 1e-12);
/// ```
pub fn knn_scale(p: &Points, k: usize) -> Result<f64> {
    use rayon::prelude::*;
    if p.n < 2 {
        bail!("the scale constant needs at least 2 points");
    }
    let k = k.min(p.n - 1);
    let means: Vec<f64> = (0..p.n)
        .into_par_iter()
        .map(|i| {
            let mut d: Vec<f64> = (0..p.n).filter(|&j| j != i).map(|j| distance(p.point(i), p.point(j))).collect();
            d.select_nth_unstable_by(k - 1, f64::total_cmp);
            let mut near = d[..k].to_vec();
            near.sort_unstable_by(f64::total_cmp);
            near.iter().sum::<f64>() / k as f64
        })
        .collect();
    let a = means.iter().sum::<f64>() / p.n as f64;
    if !(a.is_finite() && a > 0.0) {
        bail!("the scale constant is {a}: the points are all equal (set --scale)");
    }
    Ok(a)
}

/// The scale `a` at which the median perplexity of the rows of the normalised coupling,
/// `J_ij / C_i` with `J_ij = exp(−d²/(2a²))`, is `target` (capped at `(N − 1)/2`): each neuron
/// driven by about `target` others, as t-SNE sets its Gaussians (there per point, here one `a`).
/// The perplexity of a row is `exp(H)`, `H` its entropy, over the points other than the row's
/// own copies (equal coordinates couple at weight 1 at any scale); the median is over
/// [`PERPLEXITY_ROWS`] evenly spaced rows (the lower middle), and `a` is found by 64 bisections of
/// `ln a` between a hundredth of the smallest nonzero and a hundred times the largest distance,
/// in `f64` sums in a fixed order (the same `a` on every machine that rounds `exp` alike). No
/// floor: a point whose nearest neighbour lies beyond where the weight underflows (about 14.4·a
/// in `f32`) is left out of the dynamics by the clustering, not allowed to widen every neuron's
/// coupling (until issue 33's sixth round `a` was at least the largest nearest-neighbour
/// distance over 12, and one outlier of the standardised digits tripled `a`).
///
/// ```
/// // Two groups of three far apart in 4-D. The first point's mates are at 1 and √2: at a = ½
/// // their weights are e^(−2) and e^(−4), a perplexity of exp(H) ≈ 1.44 (the far group counts
/// // for nothing), so a target of 1.44 gives a ≈ ½; a larger target, a wider Gaussian.
/// let p = neurobits::ocnn::points::parse("0 0 0 0\n1 0 0 0\n0 1 0 0\n50 0 0 0\n51 0 0 0\n50 1 0 0\n", "mem").unwrap();
/// let a = neurobits::ocnn::scale::perplexity_scale(&p, 1.44).unwrap();
/// assert!((a - 0.5).abs() < 0.02, "{a}");
/// assert!(neurobits::ocnn::scale::perplexity_scale(&p, 1.9).unwrap() > a);
/// // Above 3-D, the default scale.
/// assert_eq!(neurobits::ocnn::scale::scale(&p).unwrap(), neurobits::ocnn::scale::perplexity_scale(&p, 20.0).unwrap());
/// ```
pub fn perplexity_scale(p: &Points, target: f64) -> Result<f64> {
    use rayon::prelude::*;
    if p.n < 2 {
        bail!("the scale constant needs at least 2 points");
    }
    let n = p.n;
    // Every point's nearest distinct neighbour's distance (squared): the search's lower end.
    let nearest: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            let d = (0..n).filter(|&j| j != i).map(|j| squared(p.point(i), p.point(j)));
            d.filter(|&d| d > 0.0).fold(f64::INFINITY, f64::min)
        })
        .collect();
    let smallest = nearest.iter().copied().fold(f64::INFINITY, f64::min);
    if !smallest.is_finite() {
        bail!("the scale constant cannot be set: the points are all equal (set --scale)");
    }
    let rows: Vec<usize> = if n <= PERPLEXITY_ROWS {
        (0..n).collect()
    } else {
        (0..PERPLEXITY_ROWS).map(|r| r * (n - 1) / (PERPLEXITY_ROWS - 1)).collect()
    };
    // Each sampled row's squared distances to the points other than its own copies, less the
    // smallest: the weights' common factor cancels in `J_ij / C_i`, and the shifted ones do not
    // underflow. Copies (distance 0) are left out: they couple at weight 1 whatever `a`, and a
    // point with more copies than the target perplexity would otherwise reach it at no scale.
    // Kept for the 64 steps of the search: 2 GB at 10⁶ points, so checked against the memory
    // budget first.
    crate::budget::check_items(
        format_args!("the perplexity scale's distances ({} rows of {n} points; or set --scale)", rows.len()),
        rows.len() as u128 * n as u128,
        8,
    )?;
    let shifted: Vec<Vec<f64>> = rows
        .par_iter()
        .map(|&i| {
            let d = (0..n).filter(|&j| j != i).map(|j| squared(p.point(i), p.point(j)));
            let d: Vec<f64> = d.filter(|&d| d > 0.0).collect();
            let low = d.iter().copied().fold(f64::INFINITY, f64::min);
            d.into_iter().map(|x| x - low).collect()
        })
        .collect();
    let largest = shifted.iter().flatten().copied().fold(0.0, f64::max).max(smallest);
    let target = target.min((n - 1) as f64 / 2.0);
    let median = |a: f64| {
        let mut perp: Vec<f64> = shifted
            .par_iter()
            .map(|row| {
                let (mut sum, mut moment) = (0.0, 0.0);
                for &e in row {
                    let x = e / ((2.0 * a) * a);
                    let w = (-x).exp();
                    sum += w;
                    moment += w * x;
                }
                (sum.ln() + moment / sum).exp()
            })
            .collect();
        perp.sort_unstable_by(f64::total_cmp);
        perp[(perp.len() - 1) / 2]
    };
    let (mut lo, mut hi) = (smallest.sqrt().ln() - 100f64.ln(), largest.sqrt().ln() + 100f64.ln());
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if median(mid.exp()) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let a = (0.5 * (lo + hi)).exp();
    if !(a.is_finite() && a > 0.0) {
        bail!("the scale constant is {a}: the points are all equal (set --scale)");
    }
    Ok(a)
}

/// Euclidean distance, coordinates summed in ascending order.
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    squared(a, b).sqrt()
}

pub use neurobits_core::ocnn::squared;
