//! From hit counts to labels: the maximum spanning forest of the hit graph, the `k(θ)` curve on
//! the percent grid, the automatic threshold and the labels (rules in `neurobits_core::ocnn`).

use neurobits_core::ocnn::{labels_at, linked, linked_prefix, plateau, UnionFind};

use super::cpu::tri;

/// The clustering of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// The threshold used, in percent.
    pub p: u32,
    /// Cluster of each point, numbered by smallest member.
    pub labels: Vec<u32>,
    /// Clusters (singletons included).
    pub k: u32,
    /// Clusters of more than one point.
    pub k_non_singleton: u32,
    /// `(p, k(p))` over the grid.
    pub curve: Vec<(u32, u32)>,
}

/// The percent grid of a sync mode (the authors' sweeps): phase 50…99, fragmentary 30…99.
pub fn grid(phase: bool) -> Vec<u32> {
    if phase {
        (50..=99).collect()
    } else {
        (30..=99).collect()
    }
}

/// Clusters the hit counts of `n` points over `t` observed iterations at threshold `fixed`
/// (percent), or at the automatic plateau threshold of `grid` (ascending) when `None`.
///
/// One pass buckets every pair by how many grid thresholds link it (a counting sort, no
/// comparison sort of the N²/2 pairs); adding the buckets from the highest threshold down to a
/// union-find gives `k(p)` for the whole grid; a second union-find over the pairs linked at the
/// chosen `p` gives the labels.
pub fn cluster(n: usize, hits: &[u32], t: u32, grid: &[u32], fixed: Option<u32>) -> anyhow::Result<Clustering> {
    // Buckets 1..=len: pairs linked up to grid[b − 1]; bucket 0 (linked nowhere) is skipped.
    let len = grid.len();
    let mut count = vec![0usize; len + 1];
    for &h in hits {
        count[linked_prefix(h, t, grid)] += 1;
    }
    let mut start = vec![0usize; len + 2];
    for b in 1..=len {
        start[b + 1] = start[b] + count[b];
    }
    let mut edges = vec![(0u32, 0u32); start[len + 1]];
    let mut at = start.clone();
    for i in 0..n {
        for j in i + 1..n {
            let b = linked_prefix(hits[tri(n, i, j)], t, grid);
            if b > 0 {
                edges[at[b]] = (i as u32, j as u32);
                at[b] += 1;
            }
        }
    }
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    let mut ks = vec![0u32; len];
    let mut k = n as u32;
    for b in (1..=len).rev() {
        for &(i, j) in &edges[start[b]..start[b + 1]] {
            k -= uf.union(i, j) as u32;
        }
        ks[b - 1] = k;
    }
    let p = match fixed {
        Some(p) => p,
        None => plateau(grid, &ks, n as u32).ok_or_else(|| {
            anyhow::anyhow!("no threshold of the grid gives between 2 and N−1 clusters: give --threshold P")
        })?,
    };
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    for i in 0..n {
        for j in i + 1..n {
            if linked(hits[tri(n, i, j)], p, t) {
                uf.union(i as u32, j as u32);
            }
        }
    }
    let mut labels = vec![0u32; n];
    let k = labels_at(&mut uf, &mut labels);
    let mut size = vec![0u32; k as usize];
    labels.iter().for_each(|&l| size[l as usize] += 1);
    let k_non_singleton = size.iter().filter(|&&s| s > 1).count() as u32;
    Ok(Clustering { p, labels, k, k_non_singleton, curve: grid.iter().copied().zip(ks).collect() })
}
