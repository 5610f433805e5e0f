//! The pairs the automatic clustering may link: the mutual k-nearest-neighbour graph.
//!
//! The chaotic neurons of two clusters that face each other across a gap share much of their
//! input, so on small sets (a few hundred points, where the scale `a` reaches across the gap)
//! they synchronize as well as neighbours along a ring or a moon do, and no threshold separates
//! the clusters. A pair may therefore link only when each point is among the other's `k`
//! nearest neighbours: the mutual k-nearest-neighbour graph, which Maier, Hein & von Luxburg
//! (2009) show keeps clusters of different densities apart where the symmetric k-NN graph
//! joins them (a point of a sparse cluster may count a point of a denser one among its
//! neighbours, never the other way round). `k` grows as `log₂ n` ([`link_neighbours`]).
//! Every point also keeps the pair to its nearest neighbour, so no point is cut off by the
//! graph alone.
//!
//! Pure integer bookkeeping over neighbour lists the caller computes (distances in `f64`, ties
//! by index), so every target links the same pairs.

use alloc::vec::Vec;

/// Neighbours per point of the link graph for `n` points: `⌈log₂ n⌉` (≈ 1.44·ln n), at least 1.
/// A k-nearest-neighbour graph of points drawn from a connected density is connected once `k`
/// grows like `log n` (Brito, Chávez, Quiroz & Yukich 1997), the order Maier, Hein & von
/// Luxburg (2009) recommend for finding clusters: fewer neighbours break a cluster into pieces
/// (a 50-point moon at k = 5), many more reach across the gaps between clusters (two rings of
/// 50 points at k = 10).
///
/// ```
/// use neurobits_core::ocnn::link_neighbours;
/// assert_eq!(link_neighbours(100), 7);
/// assert_eq!(link_neighbours(300), 9);
/// assert_eq!(link_neighbours(1000), 10);
/// assert_eq!(link_neighbours(1024), 10);
/// assert_eq!(link_neighbours(1025), 11);
/// assert_eq!((link_neighbours(2), link_neighbours(1), link_neighbours(0)), (1, 1, 1));
/// ```
pub const fn link_neighbours(n: usize) -> usize {
    if n <= 2 {
        return 1;
    }
    (usize::BITS - (n - 1).leading_zeros()) as usize
}

/// The mutual k-nearest-neighbour pairs `(i, j)`, `i < j`, ascending, each once: `j` is among
/// the first `k` entries of `i`'s row of `near` and `i` among `j`'s, or one is the other's
/// nearest (first entry). `near` holds `n` rows of `k` neighbour indices, nearest first.
///
/// ```
/// use neurobits_core::ocnn::mutual_pairs;
/// // Points on a line at 0, 1, 2 and 10, 2 neighbours each: 3 is nobody's neighbour but keeps
/// // its nearest (2).
/// let near = [1, 2, 0, 2, 1, 0, 2, 1];
/// assert_eq!(mutual_pairs(4, 2, &near), [(0, 1), (0, 2), (1, 2), (2, 3)]);
/// ```
pub fn mutual_pairs(n: usize, k: usize, near: &[u32]) -> Vec<(u32, u32)> {
    assert_eq!(near.len(), n * k, "k neighbours per point");
    let mut sorted: Vec<u32> = near.to_vec();
    for row in sorted.chunks_mut(k.max(1)) {
        row.sort_unstable();
    }
    let has = |i: usize, j: u32| k > 0 && sorted[i * k..(i + 1) * k].binary_search(&j).is_ok();
    let mut pairs = Vec::new();
    for i in 0..n {
        for (r, &j) in near[i * k..(i + 1) * k].iter().enumerate() {
            let mutual = has(j as usize, i as u32);
            // A mutual pair is listed by its smaller point; a nearest-neighbour pair by the point
            // whose nearest it is (both, when each is the other's: dedup below).
            if (mutual && (i as u32) < j) || r == 0 {
                pairs.push(((i as u32).min(j), (i as u32).max(j)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}
