//! The automatic clustering of the OCNN: the most stable clusters of the synchronization
//! hierarchy, selected by excess of mass as HDBSCAN selects them (Campello, Moulavi & Sander
//! 2013; McInnes & Healy 2017), over the thresholds of the percent grid.
//!
//! Raising the threshold `p` splits the linked components (single linkage on the hit counts:
//! a pair is linked at `p` when `100·H > p·T`), so the grid's components form a tree. A component
//! of at least `m` points is a *cluster*; it keeps its identity while it sheds smaller pieces and
//! ends where it splits into two or more clusters. Its stability is `Σ size·Δλ` over the grid
//! levels it lives on, with `λ(p) = 2·(1 − √(1 − p/100))`: between HDBSCAN's `1/(1 − p)` (which
//! favours the fine end of the grid, where chaotic noise breaks every cluster into pieces) and
//! the linear `p` (which favours the coarse end, where touching clusters are still linked). The
//! selection keeps a cluster when its stability is at least the summed selected stabilities of
//! its descendants; the root (everything, when the coarsest level links all points) is never
//! selected when it has children. Points outside the selected clusters take the cluster they join
//! first as the threshold falls, down to `attach_floor` percent (links near the chance level of
//! phase agreement, 50 %, carry no information); the rest stay singletons.
//!
//! All of it runs on the hit counts the engines produce, so the labels are the same on every
//! target; the arithmetic is `f64` sums in a fixed order.

use alloc::vec;
use alloc::vec::Vec;

use super::cluster::UnionFind;

const NONE: u32 = u32::MAX;

/// `√x` by Newton's method from above, in a fixed sequence of IEEE operations (no `std` here).
fn sqrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let mut r = if x > 1.0 { x } else { 1.0 };
    for _ in 0..64 {
        let next = 0.5 * (r + x / r);
        if next >= r {
            break;
        }
        r = next;
    }
    r
}

/// `λ(p) = 2·(1 − √(1 − p/100))`, `p` capped at 99.5 % so that the top of the grid has weight.
///
/// ```
/// use neurobits_core::ocnn::lambda;
/// assert_eq!(lambda(0), 0.0);
/// assert!((lambda(75) - 1.0).abs() < 1e-15);
/// assert!(lambda(100) > lambda(99) && lambda(99) > lambda(50));
/// ```
pub fn lambda(p: u32) -> f64 {
    let q = if p >= 100 { 0.995 } else { p as f64 / 100.0 };
    2.0 * (1.0 - sqrt(1.0 - q))
}

/// The smallest cluster of the automatic selection for `n` points: `max(n/10, min(5, n/2))`, at
/// least 2 (a tenth of the points from 50 up; 5 below; half of a set of fewer than 10 points).
///
/// ```
/// use neurobits_core::ocnn::default_min_cluster;
/// assert_eq!(default_min_cluster(400), 40);
/// assert_eq!(default_min_cluster(20), 5);
/// assert_eq!(default_min_cluster(6), 3);
/// assert_eq!(default_min_cluster(2), 2);
/// ```
pub const fn default_min_cluster(n: usize) -> u32 {
    let small = if n / 2 < 5 { n / 2 } else { 5 };
    let m = if n / 10 > small { n / 10 } else { small };
    if m < 2 {
        2
    } else {
        m as u32
    }
}

/// The result of [`stable_clusters`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stable {
    /// Cluster of each point, numbered 0, 1, … in the order of their smallest members.
    pub labels: Vec<u32>,
    /// Clusters, singletons included.
    pub k: u32,
    /// The finest grid level at which a selected cluster begins (its index in the grid); `None`
    /// when no component reaches `m` points.
    pub level: Option<usize>,
}

/// Union-find over the buckets of linked pairs from the finest grid level down: `each(g, uf)`
/// runs after level `g`'s pairs are in.
fn descend(n: usize, edges: &[(u32, u32)], start: &[usize], mut each: impl FnMut(usize, &mut UnionFind<'_>, &[u32])) {
    let levels = start.len() - 2;
    let mut parent = vec![0u32; n];
    let mut uf = UnionFind::new(&mut parent);
    // Union-find keeps each set's root at its smallest member; the pairs unioned are recorded so
    // that `each` can update per-root data.
    let mut joined = Vec::new();
    for g in (0..levels).rev() {
        joined.clear();
        for &(i, j) in &edges[start[g + 1]..start[g + 2]] {
            let (ri, rj) = (uf.find(i), uf.find(j));
            if ri != rj {
                uf.union(ri, rj);
                joined.push(ri.min(rj));
                joined.push(ri.max(rj));
            }
        }
        each(g, &mut uf, &joined);
    }
}

/// The most stable clusters of the hit graph (see the module's text).
///
/// `edges` holds the linked pairs bucketed by how many grid thresholds link them: bucket `b`
/// (`1 ≤ b ≤ grid.len()`) is `edges[start[b]..start[b + 1]]`, the pairs linked at `grid[..b]`
/// and not above; `start.len() == grid.len() + 2`. `m`: the smallest cluster; `attach_floor`:
/// the lowest threshold (percent) at which a left-over point joins a selected cluster.
///
/// ```
/// use neurobits_core::ocnn::stable_clusters;
/// // Two groups of 6 points linked at every threshold of the grid 50..=99, and one bridge
/// // pair linked up to 55 %; point 12 is linked to group 0 up to 70 %.
/// let grid: Vec<u32> = (50..=99).collect();
/// let mut buckets = vec![Vec::new(); grid.len() + 1];
/// for g in [0u32, 6] {
///     for i in g + 1..g + 6 {
///         buckets[grid.len()].push((g, i));
///     }
/// }
/// buckets[6].push((5, 6));
/// buckets[21].push((3, 12));
/// let mut start = vec![0, 0];
/// let mut edges = Vec::new();
/// for b in 1..=grid.len() {
///     edges.extend_from_slice(&buckets[b]);
///     start.push(edges.len());
/// }
/// let s = stable_clusters(13, &edges, &start, &grid, 5, 60);
/// assert_eq!(s.labels, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0]);
/// assert_eq!((s.k, s.level), (2, Some(6)));
/// ```
pub fn stable_clusters(
    n: usize,
    edges: &[(u32, u32)],
    start: &[usize],
    grid: &[u32],
    m: u32,
    attach_floor: u32,
) -> Stable {
    stable_clusters_attached(n, (edges, start), (edges, start), grid, m, attach_floor)
}

/// [`stable_clusters`] with the clusters selected over the pairs `select` (bucketed as `edges`
/// and `start` there) and the left-over points joined over the pairs `attach`: the default
/// consensus selects over the mutual-neighbour links (`mutual_pairs`) and lets a point the
/// link graph cut off join the cluster it synchronizes with, over every pair.
///
/// ```
/// use neurobits_core::ocnn::stable_clusters_attached;
/// // Two groups of 6 linked at every threshold of 50..=99 (bucket 50); point 12 has no link
/// // pair, but among all pairs it is linked to point 7 up to 80 % (bucket 31).
/// let grid: Vec<u32> = (50..=99).collect();
/// let sel: Vec<(u32, u32)> = (1..6).map(|i| (0, i)).chain((7..12).map(|i| (6, i))).collect();
/// let start: Vec<usize> = [0; 51].into_iter().chain([sel.len()]).collect();
/// let all: Vec<(u32, u32)> = [&[(7, 12)][..], &sel[..]].concat();
/// let all_start: Vec<usize> = [0; 32].into_iter().chain([1; 19]).chain([all.len()]).collect();
/// let s = stable_clusters_attached(13, (&sel, &start), (&all, &all_start), &grid, 5, 60);
/// assert_eq!(s.labels, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
/// // Over the link pairs alone point 12 stays a singleton.
/// let s = stable_clusters_attached(13, (&sel, &start), (&sel, &start), &grid, 5, 60);
/// assert_eq!((s.labels[12], s.k), (2, 3));
/// ```
pub fn stable_clusters_attached(
    n: usize,
    (edges, start): (&[(u32, u32)], &[usize]),
    (attach_edges, attach_start): (&[(u32, u32)], &[usize]),
    grid: &[u32],
    m: u32,
    attach_floor: u32,
) -> Stable {
    let levels = grid.len();
    assert_eq!(attach_start.len(), levels + 2, "one bucket per grid threshold");
    assert_eq!(start.len(), levels + 2, "one bucket per grid threshold");
    // Weight of level g: the λ-width it spans, up to the next threshold (100 % after the last).
    let w: Vec<f64> = (0..levels).map(|g| lambda(*grid.get(g + 1).unwrap_or(&100)) - lambda(grid[g])).collect();

    // Pass 1: the cluster tree, built from the fine end. Nodes are numbered in creation order, so
    // every child precedes its parent.
    let mut size = vec![1u32; n];
    let mut node = vec![NONE; n]; // cluster of each root
    let (mut stab, mut parent, mut top, mut rep): (Vec<f64>, Vec<u32>, Vec<usize>, Vec<u32>) = Default::default();
    let (mut first_child, mut next_sibling): (Vec<u32>, Vec<u32>) = Default::default();
    let mut big: Vec<u32> = (0..n as u32).filter(|_| m <= 1).collect();
    descend(n, edges, start, |g, uf, joined| {
        for pair in joined.chunks(2) {
            // `pair[0]` is the new root (the smaller); both were roots before this union.
            let (r, o) = (pair[0] as usize, pair[1] as usize);
            let (a, b) = (node[r], node[o]);
            size[r] += size[o];
            node[r] = match (a, b) {
                (NONE, x) | (x, NONE) => x,
                _ => {
                    let id = stab.len() as u32;
                    stab.push(0.0);
                    parent.push(NONE);
                    top.push(g);
                    rep.push(r as u32);
                    first_child.push(a);
                    next_sibling.push(NONE);
                    next_sibling[a as usize] = b;
                    parent[a as usize] = id;
                    parent[b as usize] = id;
                    id
                }
            };
        }
        // The roots of at least m points (every root with a node is one), ascending: those of
        // before that are still roots, and the roots that grew here. The same roots in the same
        // order as a scan of all points, at the cost of the clusters and the joins.
        big.extend(joined.chunks(2).map(|pair| pair[0]).filter(|&r| size[r as usize] >= m));
        big.retain(|&i| uf.find(i) == i);
        // A sorted run and a short tail: the run-detecting stable sort merges them in linear time
        // (with a small `m` there are many such roots).
        big.sort();
        big.dedup();
        for &i in &big {
            let i = i as usize;
            if node[i] == NONE && size[i] >= m {
                node[i] = stab.len() as u32;
                stab.push(0.0);
                parent.push(NONE);
                top.push(g);
                rep.push(i as u32);
                first_child.push(NONE);
                next_sibling.push(NONE);
            }
            if node[i] != NONE {
                stab[node[i] as usize] += size[i] as f64 * w[g];
                top[node[i] as usize] = g;
            }
        }
    });

    // Excess of mass, children first.
    let count = stab.len();
    let (mut best, mut keep) = (vec![0f64; count], vec![false; count]);
    for c in 0..count {
        let mut below = 0.0;
        let mut ch = first_child[c];
        while ch != NONE {
            below += best[ch as usize];
            ch = next_sibling[ch as usize];
        }
        keep[c] = first_child[c] == NONE || stab[c] >= below;
        best[c] = if keep[c] { stab[c] } else { below };
    }
    let roots: Vec<u32> = (0..count as u32).filter(|&c| parent[c as usize] == NONE).collect();
    let mut chosen = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for &r in &roots {
        if roots.len() == 1 && first_child[r as usize] != NONE {
            // The single root is everything linked at the coarsest level: not a clustering.
            let mut ch = first_child[r as usize];
            while ch != NONE {
                stack.push(ch);
                ch = next_sibling[ch as usize];
            }
        } else {
            stack.push(r);
        }
        while let Some(c) = stack.pop() {
            if keep[c as usize] {
                chosen.push(c);
            } else {
                let mut ch = first_child[c as usize];
                while ch != NONE {
                    stack.push(ch);
                    ch = next_sibling[ch as usize];
                }
            }
        }
    }

    // Pass 2: each chosen cluster's points, as its component at its coarsest level.
    let mut label = vec![NONE; n];
    let mut mark = vec![NONE; n];
    descend(n, edges, start, |g, uf, _| {
        let at: Vec<(usize, u32)> =
            chosen.iter().enumerate().filter(|&(_, &c)| top[c as usize] == g).map(|(k, &c)| (k, c)).collect();
        if at.is_empty() {
            return;
        }
        for &(k, c) in &at {
            mark[uf.find(rep[c as usize]) as usize] = k as u32;
        }
        for (i, l) in label.iter_mut().enumerate() {
            let r = uf.find(i as u32) as usize;
            if mark[r] != NONE {
                *l = mark[r];
            }
        }
        for &(_, c) in &at {
            let r = uf.find(rep[c as usize]) as usize;
            mark[r] = NONE;
        }
    });

    // Pass 3: left-over points join the cluster they meet first going down, to the floor.
    let mut first = vec![NONE; n]; // smallest clustered point of each root
    (0..n).filter(|&i| label[i] != NONE).for_each(|i| first[i] = i as u32);
    let mut joined_label = label.clone();
    let mut left: Vec<u32> = (0..n as u32).filter(|&i| label[i as usize] == NONE).collect();
    descend(n, attach_edges, attach_start, |g, uf, joined| {
        for pair in joined.chunks(2) {
            let (r, o) = (pair[0] as usize, pair[1] as usize);
            first[r] = first[r].min(first[o]);
        }
        if grid[g] < attach_floor {
            return;
        }
        // Only the points still without a label are looked at (fewer at each level).
        left.retain(|&i| {
            let f = first[uf.find(i) as usize];
            if f != NONE {
                joined_label[i as usize] = label[f as usize];
            }
            f == NONE
        });
    });

    // Number the clusters by their smallest member; left-over points are singletons.
    let mut number = vec![NONE; chosen.len()];
    let mut labels = vec![0u32; n];
    let mut k = 0u32;
    for (l, &j) in labels.iter_mut().zip(&joined_label) {
        *l = match j {
            NONE => {
                k += 1;
                k - 1
            }
            c => {
                if number[c as usize] == NONE {
                    number[c as usize] = k;
                    k += 1;
                }
                number[c as usize]
            }
        };
    }
    let level = chosen.iter().map(|&c| top[c as usize]).max();
    Stable { labels, k, level }
}
