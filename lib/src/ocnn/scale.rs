//! The scale constant `a` (spec §2.2): the mean over points of the mean distance to their
//! Delaunay neighbours, in `f64`. 2-D points are triangulated by spade ([`super::planar`]) where
//! the triangulation is unique, everything else by Qhull (the library scipy uses; the `qhull`
//! crate bundles its C sources, so no system package is needed) in the data's own dimension.
//!
//! Above 3-D (the paper's and FCPS's data are 2-D and 3-D) the triangulation is replaced by the
//! 10 nearest neighbours: a Delaunay triangulation's size grows exponentially with the dimension
//! (6-D, 300 points: 4.5 s; 13-D wine or 30-D breast cancer: out of reach), and its neighbours
//! reach ever farther (4-D: the Delaunay mean is twice the 10-NN mean), so the coupling would
//! span the whole data set.

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

/// Nearest neighbours of the scale above [`DELAUNAY_MAX_DIM`].
pub const NEIGHBOURS: usize = 10;
/// Highest dimension triangulated for the scale.
pub const DELAUNAY_MAX_DIM: usize = 3;

/// `a = (1/N') Σ_i (1/|Nb(i)|) Σ_{j ∈ Nb(i)} |r_i − r_j|` over the `N'` points with at least one
/// neighbour (duplicate points have none), distances in `f64`; `Nb(i)`: the Delaunay neighbours
/// up to 3-D, the [`NEIGHBOURS`] nearest points above ([`knn_scale`]).
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
        return knn_scale(p, NEIGHBOURS);
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
/// assert!((neurobits::ocnn::scale::scale(&p).unwrap() - (2.0 + 2f64.sqrt()) / 3.0).abs() < 1e-12);
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

/// Euclidean distance, coordinates summed in ascending order.
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    squared(a, b).sqrt()
}

/// Squared distance, coordinates summed in ascending order (the weights' `d²`).
#[inline]
pub fn squared(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s
}
