//! From hit counts to clusters (spec §4): the integer threshold test, union-find components,
//! the automatic threshold (longest plateau of equal `k`), labels numbered by smallest member.

/// Disjoint sets over `0..n` in a caller's slice (no allocation). Every root is the smallest
/// member of its set: a union links the larger root under the smaller.
///
/// ```
/// use neurobits_core::ocnn::UnionFind;
/// let mut parent = [0u32; 5];
/// let mut uf = UnionFind::new(&mut parent);
/// assert!(uf.union(3, 1));
/// assert!(uf.union(4, 3));
/// assert!(!uf.union(1, 4));
/// assert_eq!((uf.find(4), uf.find(0)), (1, 0));
/// ```
pub struct UnionFind<'a> {
    parent: &'a mut [u32],
}

impl<'a> UnionFind<'a> {
    /// `n = parent.len()` singletons.
    pub fn new(parent: &'a mut [u32]) -> Self {
        for (i, p) in parent.iter_mut().enumerate() {
            *p = i as u32;
        }
        UnionFind { parent }
    }

    /// The root (smallest member) of `x`'s set, halving the path.
    #[inline]
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let gp = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = gp;
            x = gp;
        }
        x
    }

    /// Joins the sets of `a` and `b`; whether they were apart.
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[hi as usize] = lo;
        true
    }
}

/// Whether a pair with `hits` synchronized iterations out of `t` is linked at threshold `p`
/// percent: `100·hits > p·t`, exact in integers (spec OPEN-10).
///
/// ```
/// assert!(neurobits_core::ocnn::linked(751, 75, 1000));
/// assert!(!neurobits_core::ocnn::linked(750, 75, 1000));
/// ```
#[inline(always)]
pub const fn linked(hits: u32, p: u32, t: u32) -> bool {
    100 * hits as u64 > p as u64 * t as u64
}

/// Largest `n` (exclusive) whose pairs have a [`forest_key`].
pub const FOREST_MAX_N: u32 = 1 << 18;
/// Largest hit count (exclusive) that has a [`forest_key`].
pub const FOREST_MAX_HITS: u32 = 1 << 28;

/// The order of the pairs in a maximum spanning forest of the hit graph: more hits first, then
/// the lower pair `(min, max)` — a strict total order (no two pairs share a key), which keeps
/// Borůvka's rounds free of cycles on a GPU. A graph's components under any threshold are those
/// of its maximum spanning forest, so the forest's `n − 1` edges (at most) give the whole `k(p)`
/// curve and the labels. Needs `hits < FOREST_MAX_HITS` and `i, j < FOREST_MAX_N`, `i ≠ j`; a
/// linked pair has `hits ≥ 1`, so its key is never 0.
///
/// ```
/// use neurobits_core::ocnn::{forest_key, forest_pair};
/// assert!(forest_key(9, 4, 1) > forest_key(8, 0, 1)); // more hits first
/// assert!(forest_key(9, 0, 7) > forest_key(9, 1, 2)); // then the lower pair
/// assert_eq!(forest_key(9, 4, 1), forest_key(9, 1, 4));
/// assert_eq!(forest_pair(forest_key(9, 4, 1)), (9, 1, 4));
/// ```
#[inline(always)]
pub const fn forest_key(hits: u32, i: u32, j: u32) -> u64 {
    let (lo, hi) = if i < j { (i, j) } else { (j, i) };
    let m = (FOREST_MAX_N - 1) as u64;
    (hits as u64) << 36 | (m - lo as u64) << 18 | (m - hi as u64)
}

/// `(hits, min, max)` of a [`forest_key`].
#[inline(always)]
pub const fn forest_pair(key: u64) -> (u32, u32, u32) {
    let m = (FOREST_MAX_N - 1) as u64;
    ((key >> 36) as u32, (m - (key >> 18 & m)) as u32, (m - (key & m)) as u32)
}

/// How many of the ascending thresholds `grid` link a pair with `hits` (a pair linked at `p` is
/// linked at every lower `p`, so they are a prefix of the grid).
///
/// ```
/// assert_eq!(neurobits_core::ocnn::linked_prefix(700, 1000, &[50, 60, 70, 80]), 2);
/// ```
#[inline(always)]
pub fn linked_prefix(hits: u32, t: u32, grid: &[u32]) -> usize {
    grid.partition_point(|&p| linked(hits, p, t))
}

/// Labels from a finished union-find: each point's cluster into `labels` (clusters numbered
/// 0, 1, … in the order of their smallest members); returns the number of clusters.
///
/// ```
/// use neurobits_core::ocnn::{labels_at, UnionFind};
/// let (mut parent, mut labels) = ([0u32; 5], [0u32; 5]);
/// let mut uf = UnionFind::new(&mut parent);
/// uf.union(4, 2);
/// uf.union(3, 0);
/// assert_eq!((labels_at(&mut uf, &mut labels), labels), (3, [0, 1, 2, 0, 2]));
/// ```
pub fn labels_at(uf: &mut UnionFind<'_>, labels: &mut [u32]) -> u32 {
    let mut k = 0;
    for i in 0..labels.len() {
        let r = uf.find(i as u32) as usize;
        // Roots are smallest members, so a root is met before the rest of its set.
        labels[i] = if r == i {
            k += 1;
            k - 1
        } else {
            labels[r]
        };
    }
    k
}

/// The automatic threshold: the longest run of consecutive grid points with the same `k`,
/// `1 < k < n` (ties: the run of the lowest `p`); its middle point `p_first + (p_last − p_first)/2`
/// (of the grid's values). `None` if no `k` qualifies.
///
/// ```
/// use neurobits_core::ocnn::plateau;
/// let grid = [50, 51, 52, 53, 54, 55];
/// assert_eq!(plateau(&grid, &[1, 3, 3, 3, 5, 5], 100), Some(52));
/// assert_eq!(plateau(&grid, &[1, 1, 1, 1, 1, 100], 100), None);
/// ```
pub fn plateau(grid: &[u32], k: &[u32], n: u32) -> Option<u32> {
    let mut best: Option<(usize, usize)> = None; // (start, length)
    let mut i = 0;
    while i < k.len() {
        let mut j = i;
        while j + 1 < k.len() && k[j + 1] == k[i] {
            j += 1;
        }
        if k[i] > 1 && k[i] < n && best.is_none_or(|(_, len)| j - i + 1 > len) {
            best = Some((i, j - i + 1));
        }
        i = j + 1;
    }
    best.map(|(s, len)| grid[s] + (grid[s + len - 1] - grid[s]) / 2)
}
