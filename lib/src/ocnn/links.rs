//! The pairs the default automatic clustering may link (the core's
//! `neurobits_core::ocnn::mutual_pairs` over the points' nearest neighbours): each point's
//! `link_neighbours(n)` nearest other points by brute force, in parallel rows, then the mutual
//! pairs. The same pairs on every target: computed once on the host from the points.

use anyhow::{bail, Result};
use neurobits_core::ocnn::{link_neighbours, mutual_pairs};
use rayon::prelude::*;

use super::points::Points;
use super::scale::squared;

/// Each point's `k` nearest other points (`k` capped at `n − 1`), nearest first, ties by index;
/// returns the rows and the `k` used.
///
/// ```
/// let p = neurobits::ocnn::points::parse("0\n1\n3\n10\n", "mem").unwrap();
/// assert_eq!(neurobits::ocnn::links::nearest(&p, 2), (vec![1, 2, 0, 2, 1, 0, 2, 1], 2));
/// ```
pub fn nearest(p: &Points, k: usize) -> (Vec<u32>, usize) {
    let k = k.min(p.n.saturating_sub(1));
    let rows: Vec<Vec<u32>> = (0..p.n)
        .into_par_iter()
        .map(|i| {
            let mut d: Vec<(f64, u32)> =
                (0..p.n).filter(|&j| j != i).map(|j| (squared(p.point(i), p.point(j)), j as u32)).collect();
            let order = |x: &(f64, u32), y: &(f64, u32)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
            if k < d.len() {
                d.select_nth_unstable_by(k, order);
                d.truncate(k);
            }
            d.sort_unstable_by(order);
            d.into_iter().map(|(_, j)| j).collect()
        })
        .collect();
    (rows.concat(), k)
}

/// The mutual `link_neighbours(n)`-nearest-neighbour pairs of the points (`i < j`, ascending).
/// Checks the neighbour lists against memory first (`n · k` indices and a sorted copy).
///
/// ```
/// // Two groups of four on a line: 8 points give k = ⌈log₂ 8⌉ = 3, so each point's neighbours
/// // are the rest of its group, and every pair within a group is mutual; none across.
/// let p = neurobits::ocnn::points::parse("0\n1\n2.5\n4\n20\n21\n22.5\n24\n", "mem").unwrap();
/// let within = |g: u32| [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)].map(|(i, j)| (i + g, j + g));
/// assert_eq!(neurobits::ocnn::links::mutual(&p).unwrap(), [within(0), within(4)].concat());
/// ```
pub fn mutual(p: &Points) -> Result<Vec<(u32, u32)>> {
    if p.n < 2 {
        bail!("the link graph needs at least 2 points");
    }
    let k = link_neighbours(p.n).min(p.n - 1);
    crate::io::memory::ensure_fits(
        &format!("the {k} nearest neighbours of {} points", p.n),
        p.n as u128 * k as u128 * 8,
    )?;
    let (near, k) = nearest(p, k);
    Ok(mutual_pairs(p.n, k, &near))
}
