//! From hit counts to labels: the `k(θ)` curve on the percent grid, the automatic selection and
//! the labels (the rules are `neurobits_core::ocnn`'s).

use neurobits_core::ocnn::{labels_at, linked_prefix, plateau, stable_clusters, stable_clusters_attached, UnionFind};

/// How the clusters are chosen from the hit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The components at a fixed threshold (percent).
    Fixed(u32),
    /// The components at the middle of the longest run of equal `k` (singletons counted), `1 < k < N`:
    /// the first automatic rule (kept as `--select plateau`).
    Plateau,
    /// The most stable clusters of at least this many points (excess of mass over the grid;
    /// `neurobits_core::ocnn::stable_clusters`), left-over points joined down to `attach_floor` %.
    Stable {
        /// Smallest cluster.
        min_cluster: u32,
        /// Lowest threshold at which a left-over point joins a cluster, percent.
        attach_floor: u32,
    },
}

/// The stable selection found no cluster (no component of the smallest cluster's size at any
/// threshold): a scale the consensus selection passes over.
#[derive(Debug)]
pub struct NoCluster(pub String);

impl std::fmt::Display for NoCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoCluster {}

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

/// Clusters the hit counts of `n` points over `t` observed iterations by `rule` over `grid`
/// (ascending percents).
///
/// One pass buckets every pair by how many grid thresholds link it (a counting sort, no
/// comparison sort of the N²/2 pairs); adding the buckets from the highest threshold down to a
/// union-find gives `k(p)` for the whole grid; a second union-find over the pairs linked at the
/// chosen `p` gives the labels.
pub fn cluster(n: usize, hits: &[u32], t: u32, grid: &[u32], rule: Rule) -> anyhow::Result<Clustering> {
    cluster_pairs(n, hits, upper_pairs(n), t, grid, rule)
}

/// [`cluster`] under each of `rules` (several only of [`Rule::Stable`]: they share the grid), the
/// buckets and the spanning forest made once.
pub fn cluster_each(n: usize, hits: &[u32], t: u32, grid: &[u32], rules: &[Rule]) -> Vec<anyhow::Result<Clustering>> {
    clusters_of(n, hits, upper_pairs(n), t, grid, rules, None)
}

/// The pairs `(i, j)`, `i < j`, of `n` points, row by row: the upper triangle's order, in which
/// the dense hit counts are stored.
fn upper_pairs(n: usize) -> impl Iterator<Item = (u32, u32)> {
    (0..n as u32).flat_map(move |i| (i + 1..n as u32).map(move |j| (i, j)))
}

/// [`cluster`] over any set of counted pairs: `hits[s]` belongs to the `s`-th pair of `pairs`
/// (a sparse coupling counts only its coupled pairs; the others are never linked).
pub fn cluster_pairs(
    n: usize,
    hits: &[u32],
    pairs: impl Iterator<Item = (u32, u32)>,
    t: u32,
    grid: &[u32],
    rule: Rule,
) -> anyhow::Result<Clustering> {
    first(clusters_of(n, hits, pairs, t, grid, &[rule], None))
}

/// [`cluster_pairs`] under each of `rules`, the buckets and the spanning forest made once.
pub fn cluster_pairs_each(
    n: usize,
    hits: &[u32],
    pairs: impl Iterator<Item = (u32, u32)>,
    t: u32,
    grid: &[u32],
    rules: &[Rule],
) -> Vec<anyhow::Result<Clustering>> {
    clusters_of(n, hits, pairs, t, grid, rules, None)
}

/// The one clustering of a one-rule call.
fn first(mut each: Vec<anyhow::Result<Clustering>>) -> anyhow::Result<Clustering> {
    each.swap_remove(0)
}

/// Clusters the hits of the upper triangle (`hits`, as [`cluster`] reads them) over the link
/// pairs `links` only (`neurobits_core::ocnn::mutual_pairs`): the curve and the selection see
/// only those pairs; under [`Rule::Stable`] the left-over points join a cluster over every pair
/// (`neurobits_core::ocnn::stable_clusters_attached`).
pub fn cluster_linked(
    n: usize,
    hits: &[u32],
    links: &[(u32, u32)],
    t: u32,
    grid: &[u32],
    rule: Rule,
) -> anyhow::Result<Clustering> {
    first(cluster_linked_each(n, hits, links, t, grid, &[rule]))
}

/// [`cluster_linked`] under each of `rules`, the buckets and the spanning forests made once.
pub fn cluster_linked_each(
    n: usize,
    hits: &[u32],
    links: &[(u32, u32)],
    t: u32,
    grid: &[u32],
    rules: &[Rule],
) -> Vec<anyhow::Result<Clustering>> {
    let linked: Vec<u32> = links.iter().map(|&(i, j)| hits[super::cpu::tri(n, i as usize, j as usize)]).collect();
    let stable = rules.iter().any(|r| matches!(r, Rule::Stable { .. }));
    let all = stable.then(|| buckets(hits, upper_pairs(n), t, grid));
    let all = all.map(|(e, s)| {
        let (e, s, _) = forest(n, &e, &s);
        (e, s)
    });
    let attach = all.as_ref().map(|(e, s)| (&e[..], &s[..]));
    clusters_of(n, &linked, links.iter().copied(), t, grid, rules, attach)
}

/// Linked pairs in buckets and where each bucket starts ([`buckets`]).
type Buckets<'a> = (&'a [(u32, u32)], &'a [usize]);

/// The linked pairs bucketed by how many grid thresholds link them: bucket `b` is
/// `edges[start[b]..start[b + 1]]` (a counting sort, no comparison sort of the pairs).
fn buckets(
    hits: &[u32],
    pairs: impl Iterator<Item = (u32, u32)>,
    t: u32,
    grid: &[u32],
) -> (Vec<(u32, u32)>, Vec<usize>) {
    use rayon::prelude::*;
    let len = grid.len();
    // Bucket of every pair (in the upper triangle's order): how many grid thresholds link it.
    // (A table of the bucket of every count up to `t`: the counts of observed iterations.)
    let table: Vec<u8> = (0..=t.min(1 << 20)).map(|h| linked_prefix(h, t, grid) as u8).collect();
    let of = |h: u32| table.get(h as usize).copied().unwrap_or_else(|| linked_prefix(h, t, grid) as u8);
    let bucket: Vec<u8> = hits.par_iter().map(|&h| of(h)).collect();
    let mut count = vec![0usize; len + 1];
    for &b in &bucket {
        count[b as usize] += 1;
    }
    let mut start = vec![0usize; len + 2];
    for b in 1..=len {
        start[b + 1] = start[b] + count[b];
    }
    // Counting sort of the linked pairs by bucket; pairs enumerated row by row, as stored.
    let mut edges = vec![(0u32, 0u32); start[len + 1]];
    let mut at = start.clone();
    for ((i, j), &b) in pairs.zip(&bucket) {
        let b = b as usize;
        if b > 0 {
            edges[at[b]] = (i, j);
            at[b] += 1;
        }
    }
    (edges, start)
}

/// The bucketed pairs ([`buckets`]) reduced to those that join two components when the buckets
/// are added from the highest down, each in its order (Kruskal's maximum spanning forest under
/// that order: at most `n − 1` pairs, bucketed the same way), and `k` after each bucket
/// (`ks[b − 1]`: the components of the pairs of buckets `b` and above).
///
/// Every later pass (the `k(p)` curve, the stable selection's three descents, the labels at a
/// threshold) adds the same buckets in the same order to a union-find whose roots are the
/// smallest members; a pair that joins nothing changes nothing there. So on the forest they make
/// the same unions in the same order as on every pair — the same tree, the same sums, the same
/// labels, bit for bit — at a cost in `n` instead of the pairs' count.
fn forest(n: usize, edges: &[(u32, u32)], start: &[usize]) -> (Vec<(u32, u32)>, Vec<usize>, Vec<u32>) {
    let len = start.len() - 2;
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    let mut ks = vec![0u32; len];
    // Kept pairs, highest bucket first, and the bucket boundaries counted from the top.
    let mut kept = Vec::with_capacity(n.min(edges.len()));
    let mut ends = vec![0usize; len + 2];
    for b in (1..=len).rev() {
        kept.extend(edges[start[b]..start[b + 1]].iter().copied().filter(|&(i, j)| uf.union(i, j)));
        ends[b] = kept.len();
        ks[b - 1] = (n - kept.len()) as u32;
    }
    // Back to ascending buckets: bucket b's kept pairs, in their order, at new_start[b]...
    let mut out = Vec::with_capacity(kept.len());
    let mut new_start = vec![0usize; len + 2];
    for b in 1..=len {
        new_start[b] = out.len();
        let from = if b == len { 0 } else { ends[b + 1] };
        out.extend_from_slice(&kept[from..ends[b]]);
    }
    new_start[len + 1] = out.len();
    (out, new_start, ks)
}

/// [`cluster_pairs`] under each of `rules`, the left-over points of the stable rule joined over
/// `attach` when given.
fn clusters_of(
    n: usize,
    hits: &[u32],
    pairs: impl Iterator<Item = (u32, u32)>,
    t: u32,
    grid: &[u32],
    rules: &[Rule],
    attach: Option<Buckets<'_>>,
) -> Vec<anyhow::Result<Clustering>> {
    // Several rules share one grid: a fixed threshold would add its point for all of them.
    debug_assert!(rules.len() < 2 || rules.iter().all(|r| matches!(r, Rule::Stable { .. })), "{rules:?}");
    // A fixed threshold outside the grid gets its own grid point, so that its pairs are buckets.
    let mut grid = grid.to_vec();
    for r in rules {
        if let Rule::Fixed(p) = *r {
            if let Err(at) = grid.binary_search(&p) {
                grid.insert(at, p);
            }
        }
    }
    let (edges, start) = buckets(hits, pairs, t, &grid);
    // k(p) for the grid from the highest threshold down: each bucket adds the pairs that the
    // next lower threshold links; the pairs that join two components are the forest.
    let (edges, start, ks) = forest(n, &edges, &start);
    let curve: Vec<(u32, u32)> = grid.iter().copied().zip(ks.iter().copied()).collect();
    let forest = (&edges[..], &start[..]);
    rules.iter().map(|&rule| select(n, forest, &ks, &grid, &curve, rule, attach)).collect()
}

/// The clustering under `rule` of the spanning forest's bucketed pairs, `ks` and `curve` its
/// `k(p)` over `grid`.
fn select(
    n: usize,
    (edges, start): Buckets<'_>,
    ks: &[u32],
    grid: &[u32],
    curve: &[(u32, u32)],
    rule: Rule,
    attach: Option<Buckets<'_>>,
) -> anyhow::Result<Clustering> {
    let curve = curve.to_vec();
    let non_singleton = |labels: &[u32], k: u32| {
        let mut size = vec![0u32; k as usize];
        labels.iter().for_each(|&l| size[l as usize] += 1);
        size.iter().filter(|&&s| s > 1).count() as u32
    };
    if let Rule::Stable { min_cluster, attach_floor } = rule {
        let s = match attach {
            Some((e, st)) => stable_clusters_attached(n, (edges, start), (e, st), grid, min_cluster, attach_floor),
            None => stable_clusters(n, edges, start, grid, min_cluster, attach_floor),
        };
        let level = s.level.ok_or_else(|| {
            anyhow::Error::new(NoCluster(format!(
                "no group of {min_cluster} points or more stays synchronized above {} %: give --threshold P or --min-cluster",
                grid[0]
            )))
        })?;
        let k_non_singleton = non_singleton(&s.labels, s.k);
        return Ok(Clustering { p: grid[level], labels: s.labels, k: s.k, k_non_singleton, curve });
    }
    let p = match rule {
        Rule::Fixed(p) => p,
        _ => plateau(grid, ks, n as u32).ok_or_else(|| {
            anyhow::anyhow!("no threshold of the grid gives between 2 and N−1 clusters: give --threshold P")
        })?,
    };
    // The pairs linked at p: the buckets above p's position in the grid.
    let pos = grid.iter().position(|&g| g == p).expect("p is a grid point");
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    for &(i, j) in &edges[start[pos + 1]..] {
        uf.union(i, j);
    }
    let mut labels = vec![0u32; n];
    let k = labels_at(&mut uf, &mut labels);
    let k_non_singleton = non_singleton(&labels, k);
    Ok(Clustering { p, labels, k, k_non_singleton, curve })
}

#[cfg(test)]
mod tests {
    use super::*;
    use neurobits_core::ocnn::{forest_key, forest_pair, linked};

    /// The maximum spanning forest of the pairs linked at `p` (Kruskal in `forest_key` order):
    /// what the GPU's Borůvka rounds build.
    fn forest(n: usize, hits: &[u32], t: u32, p: u32) -> Vec<(u32, u32, u32)> {
        let mut keys: Vec<u64> = upper_pairs(n)
            .zip(hits)
            .filter(|&(_, &h)| linked(h, p, t))
            .map(|((i, j), &h)| forest_key(h, i, j))
            .collect();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        let mut parent = vec![0u32; n];
        let mut uf = UnionFind::new(&mut parent);
        keys.into_iter().map(forest_pair).filter(|&(_, i, j)| uf.union(i, j)).collect()
    }

    /// Clustering the forest's pairs gives what clustering every pair gives: the curve, the
    /// automatic and fixed thresholds' labels — on hit matrices with few levels (many ties).
    #[test]
    fn spanning_forest_clusters_like_every_pair() {
        for (n, levels, seed) in [(60usize, 5u64, 1u64), (200, 1001, 2), (150, 3, 3), (40, 2, 4)] {
            let t = 1000;
            let hits: Vec<u32> = (0..n * (n - 1) / 2)
                .map(|s| (neurobits_core::prng::draw(seed, s as u64) % levels * (1000 / (levels - 1).max(1))) as u32)
                .collect();
            let stable = Rule::Stable { min_cluster: 5, attach_floor: 60 };
            for (phase, rule) in [
                (true, Rule::Plateau),
                (true, Rule::Fixed(35)),
                (false, Rule::Fixed(80)),
                (false, Rule::Plateau),
                (true, stable),
                (false, stable),
            ] {
                let g = grid(phase);
                let all = cluster(n, &hits, t, &g, rule);
                let lowest = if let Rule::Fixed(f) = rule { f.min(g[0]) } else { g[0] };
                let f = forest(n, &hits, t, lowest);
                assert!(f.len() < n);
                let fh: Vec<u32> = f.iter().map(|&(h, ..)| h).collect();
                let via = cluster_pairs(n, &fh, f.iter().map(|&(_, i, j)| (i, j)), t, &g, rule);
                match (all, via) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "n={n} levels={levels} rule={rule:?}"),
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("n={n}: {a:?} vs {b:?}"),
                }
            }
        }
    }
}
