//! From hit counts to labels: the maximum spanning forest of the hit graph, the `k(θ)` curve on
//! the percent grid, the automatic threshold and the labels (rules in `neurobits_core::ocnn`).

use neurobits_core::ocnn::{k_curve, labels_at, plateau, Forest, UnionFind};

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

/// Maximum spanning forest of the pairs linked at the lowest threshold `p_min`: `(hits, i, j)`
/// edges in descending hits (Kruskal; ties by pair order, which does not change components).
fn forest(n: usize, hits: &[u32], t: u32, p_min: u32) -> Vec<(u32, u32, u32)> {
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let h = hits[tri(n, i, j)];
            if Forest::linked(h, p_min, t) {
                edges.push((h, i as u32, j as u32));
            }
        }
    }
    edges.sort_unstable_by(|a, b| b.0.cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    edges.retain(|&(_, i, j)| uf.union(i, j));
    edges
}

/// Clusters the hit counts of `n` points over `t` observed iterations at threshold `fixed`
/// (percent), or at the automatic plateau threshold of `grid` when `None`.
pub fn cluster(n: usize, hits: &[u32], t: u32, grid: &[u32], fixed: Option<u32>) -> anyhow::Result<Clustering> {
    let p_min = fixed.into_iter().chain(grid.iter().copied()).min().unwrap_or(0);
    let f = forest(n, hits, t, p_min);
    let weights: Vec<u32> = f.iter().map(|e| e.0).collect();
    let mut ks = vec![0u32; grid.len()];
    k_curve(n as u32, &weights, t, grid, &mut ks);
    let p = match fixed {
        Some(p) => p,
        None => plateau(grid, &ks, n as u32).ok_or_else(|| {
            anyhow::anyhow!("no threshold of the grid gives between 2 and N−1 clusters: give --threshold P")
        })?,
    };
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    for &(h, i, j) in &f {
        if Forest::linked(h, p, t) {
            uf.union(i, j);
        }
    }
    let mut labels = vec![0u32; n];
    let k = labels_at(&mut uf, &mut labels);
    let mut size = vec![0u32; k as usize];
    labels.iter().for_each(|&l| size[l as usize] += 1);
    let k_non_singleton = size.iter().filter(|&&s| s > 1).count() as u32;
    Ok(Clustering { p, labels, k, k_non_singleton, curve: grid.iter().copied().zip(ks).collect() })
}
