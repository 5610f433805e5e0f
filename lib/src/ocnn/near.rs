//! The points within a radius of each point: a uniform grid of cells a little wider than the
//! radius, points (and a copy of their coordinates) sorted by cell, and per query the `3^dim`
//! cells around the point's own, read as `3^(dim − 1)` contiguous runs of three. Used by
//! the sparse coupling (`--cutoff`) and by the dense coupling's lane rows, whose nonzero weights
//! are the pairs closer than where the Gaussian underflows. Above 3-D (27 cells per query and
//! mostly empty ones) and where the cells cannot be numbered in 64 bits, every pair is tested
//! instead: the same pairs, found by brute force.

use rayon::prelude::*;

use super::points::Points;
use super::scale::squared;

/// The neighbour search of one point set and radius.
pub struct Near<'p> {
    p: &'p Points,
    /// `None`: brute force over every pair.
    grid: Option<Grid>,
}

struct Grid {
    /// Cell width.
    h: f64,
    /// Lowest coordinate per dimension.
    lo: Vec<f64>,
    /// Key stride per dimension (cells numbered from 1, so a neighbour's key never underflows).
    stride: Vec<u64>,
    /// Key differences of the `3^(dim − 1)` neighbouring rows of cells along the first dimension
    /// (each row's three cells have consecutive keys).
    offsets: Vec<i64>,
    /// Keys of the occupied cells, ascending.
    keys: Vec<u64>,
    /// Cell `c`'s points are `order[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    /// Where the cells of key `≥ k` begin in `order`, for every key `k` up to the last one's
    /// neighbours, when there are few enough keys (at most [`TABLE_PER_POINT`] per point; else
    /// the occupied keys are searched).
    table: Option<Vec<u32>>,
    /// Point indices sorted by cell (ascending index within a cell).
    order: Vec<u32>,
    /// The points' coordinates in `order`'s order: a query reads its cells' points from a few
    /// contiguous runs instead of from all over the point set.
    coords: Vec<f64>,
}

/// Most cell keys per point for which [`Grid::table`] is built.
const TABLE_PER_POINT: u64 = 4;

/// Highest dimension searched through the grid.
const GRID_MAX_DIM: usize = 3;

impl<'p> Near<'p> {
    /// The search for pairs at distance `≤ radius` (any tighter test is the caller's: [`Near::each`]
    /// reports every pair within `radius` and possibly a few beyond).
    pub fn new(p: &'p Points, radius: f64) -> Self {
        Near { p, grid: Grid::new(p, radius) }
    }

    /// Calls `f(j, d²)` for every `j ≠ i` with `d² ≤ r2` (`d²`: [`squared`], the weights' own),
    /// in no particular order. `r2` must not exceed the square of the radius given to
    /// [`Near::new`].
    pub fn each(&self, i: usize, r2: f64, mut f: impl FnMut(u32, f64)) {
        let p = self.p;
        let Some(g) = &self.grid else {
            for j in 0..p.n as u32 {
                let d2 = squared(p.point(i), p.point(j as usize));
                if j as usize != i && d2 <= r2 {
                    f(j, d2);
                }
            }
            return;
        };
        let (x, dim) = (p.point(i), p.dim);
        let home = g.key(x);
        // The cells of the first dimension's neighbours have consecutive keys: one run each.
        for &o in &g.offsets {
            let row = (home as i64 + o) as u64;
            let (from, to) = (g.first(row - 1), g.first(row + 2));
            for at in from..to {
                let j = g.order[at];
                let d2 = squared(x, &g.coords[at * dim..at * dim + dim]);
                if j as usize != i && d2 <= r2 {
                    f(j, d2);
                }
            }
        }
    }
}

impl Near<'_> {
    /// Appends to `out` every `(j, d²)` that [`Near::each`] reports for `i` (in no particular
    /// order): through the grid, each candidate is written and kept by advancing the end, without
    /// a branch to mispredict (a third of the candidates are within the radius).
    pub fn collect(&self, i: usize, r2: f64, out: &mut Vec<(u32, f64)>) {
        let (p, dim) = (self.p, self.p.dim);
        let Some(g) = &self.grid else {
            self.each(i, r2, |j, d2| out.push((j, d2)));
            return;
        };
        let x = p.point(i);
        let home = g.key(x);
        for &o in &g.offsets {
            let row = (home as i64 + o) as u64;
            let (from, to) = (g.first(row - 1), g.first(row + 2));
            let mut len = out.len();
            out.resize(len + (to - from), (0, 0.0));
            for at in from..to {
                let j = g.order[at];
                let d2 = match dim {
                    // The same `squared`, its loop unrolled for two coordinates.
                    2 => squared(
                        &<[f64; 2]>::try_from(x).unwrap(),
                        &<[f64; 2]>::try_from(&g.coords[2 * at..2 * at + 2]).unwrap(),
                    ),
                    _ => squared(x, &g.coords[at * dim..at * dim + dim]),
                };
                out[len] = (j, d2);
                len += (j as usize != i && d2 <= r2) as usize;
            }
            out.truncate(len);
        }
    }
}

impl Grid {
    fn new(p: &Points, radius: f64) -> Option<Grid> {
        let dim = p.dim;
        if dim > GRID_MAX_DIM || !(radius.is_finite() && radius > 0.0) {
            return None;
        }
        // Cells 10⁻⁴ wider than the radius: a pair within the radius is then in neighbouring
        // cells despite the rounding of `(x − lo)/h` (an error of ulps, even at 10¹¹ cells).
        let h = radius * 1.0001;
        let lo: Vec<f64> = (0..dim).map(|d| (0..p.n).map(|i| p.point(i)[d]).fold(f64::INFINITY, f64::min)).collect();
        let hi: Vec<f64> =
            (0..dim).map(|d| (0..p.n).map(|i| p.point(i)[d]).fold(f64::NEG_INFINITY, f64::max)).collect();
        let mut stride = Vec::with_capacity(dim);
        let mut next = 1u64;
        for d in 0..dim {
            stride.push(next);
            // Cells 1..=cells, and one empty cell on either side for the neighbours' keys.
            let cells = ((hi[d] - lo[d]) / h).floor();
            if cells.is_nan() || cells >= 1e15 {
                return None;
            }
            next = next.checked_mul(cells as u64 + 3)?;
        }
        // The neighbouring rows of cells along the first dimension (whose stride is 1): each is
        // searched from key − 1 to key + 1.
        let offsets = (0..3usize.pow(dim as u32 - 1))
            .map(|mut c| {
                (1..dim).fold(0i64, |key, d| {
                    let o = (c % 3) as i64 - 1;
                    c /= 3;
                    key + o * stride[d] as i64
                })
            })
            .collect();
        let mut g = Grid {
            h,
            lo,
            stride,
            offsets,
            keys: Vec::new(),
            start: Vec::new(),
            table: None,
            order: Vec::new(),
            coords: Vec::new(),
        };
        let key: Vec<u64> = (0..p.n).into_par_iter().map(|i| g.key(p.point(i))).collect();
        let mut order: Vec<u32> = (0..p.n as u32).collect();
        order.par_sort_unstable_by_key(|&i| (key[i as usize], i));
        for (at, &i) in order.iter().enumerate() {
            if g.keys.last() != Some(&key[i as usize]) {
                g.keys.push(key[i as usize]);
                g.start.push(at as u32);
            }
        }
        g.start.push(p.n as u32);
        if next <= TABLE_PER_POINT * p.n as u64 + 1024 {
            // Cells numbered 1..=cells per dimension, so every neighbour's key + 2 is ≤ next.
            let mut table = vec![0u32; next as usize + 1];
            let mut c = 0;
            for (k, t) in table.iter_mut().enumerate() {
                while c < g.keys.len() && g.keys[c] < k as u64 {
                    c += 1;
                }
                *t = g.start[c];
            }
            g.table = Some(table);
        }
        g.coords = order.iter().flat_map(|&i| p.point(i as usize).iter().copied()).collect();
        g.order = order;
        Some(g)
    }

    /// Where the cells of key `≥ key` begin in `order`.
    #[inline]
    fn first(&self, key: u64) -> usize {
        match &self.table {
            Some(t) => t[key as usize] as usize,
            None => self.start[self.keys.partition_point(|&k| k < key)] as usize,
        }
    }

    /// The key of the cell holding `x`.
    fn key(&self, x: &[f64]) -> u64 {
        x.iter().zip(&self.lo).zip(&self.stride).map(|((v, l), s)| (((v - l) / self.h).floor() as u64 + 1) * s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid finds exactly the pairs that brute force finds, in 1-D to 4-D, with duplicate
    /// points and points on cell borders; `collect` finds them with the same distances.
    #[test]
    fn the_grid_finds_every_pair_within_the_radius() {
        for dim in 1..=4 {
            let mut coords: Vec<f64> = (0..300 * dim)
                .map(|i| ((neurobits_core::prng::draw(3, i as u64) >> 40) % 1000) as f64 * 0.01)
                .collect();
            coords.extend_from_within(..dim);
            let p = Points { n: coords.len() / dim, dim, coords };
            for radius in [0.5, 1.0, 3.7] {
                let near = Near::new(&p, radius);
                assert_eq!(near.grid.is_some(), dim <= GRID_MAX_DIM);
                for i in 0..p.n {
                    let mut got = Vec::new();
                    near.each(i, radius * radius, |j, _| got.push(j));
                    got.sort_unstable();
                    let want: Vec<u32> = (0..p.n as u32)
                        .filter(|&j| j as usize != i && squared(p.point(i), p.point(j as usize)) <= radius * radius)
                        .collect();
                    assert_eq!(got, want, "dim {dim}, radius {radius}, point {i}");
                    // `collect`: the same pairs with the same squared distances, bit for bit.
                    let mut all = vec![(7, 7.0)];
                    near.collect(i, radius * radius, &mut all);
                    all[1..].sort_unstable_by_key(|&(j, _)| j);
                    let d2 = |j: u32| squared(p.point(i), p.point(j as usize)).to_bits();
                    assert_eq!(all[0], (7, 7.0), "collect appends");
                    let bits: Vec<(u32, u64)> = all[1..].iter().map(|&(j, d)| (j, d.to_bits())).collect();
                    assert_eq!(bits, want.iter().map(|&j| (j, d2(j))).collect::<Vec<_>>(), "collect, dim {dim}");
                }
            }
        }
    }
}
