//! The points within a radius of each point: a uniform grid of cells a little wider than the
//! radius, points sorted by cell, and per query the `3^dim` cells around the point's own. Used by
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
    /// Key differences of the `3^dim` neighbouring cells.
    offsets: Vec<i64>,
    /// Keys of the occupied cells, ascending.
    keys: Vec<u64>,
    /// Cell `c`'s points are `order[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    /// Point indices sorted by cell (ascending index within a cell).
    order: Vec<u32>,
}

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
        let mut test = |j: u32| {
            let d2 = squared(p.point(i), p.point(j as usize));
            if j as usize != i && d2 <= r2 {
                f(j, d2);
            }
        };
        let Some(g) = &self.grid else {
            (0..p.n as u32).for_each(test);
            return;
        };
        let home = g.key(p.point(i)) as i64;
        for &o in &g.offsets {
            if let Ok(c) = g.keys.binary_search(&((home + o) as u64)) {
                g.order[g.start[c] as usize..g.start[c + 1] as usize].iter().for_each(|&j| test(j));
            }
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
        let offsets = (0..3usize.pow(dim as u32))
            .map(|mut c| {
                (0..dim).fold(0i64, |key, d| {
                    let o = (c % 3) as i64 - 1;
                    c /= 3;
                    key + o * stride[d] as i64
                })
            })
            .collect();
        let mut g = Grid { h, lo, stride, offsets, keys: Vec::new(), start: Vec::new(), order: Vec::new() };
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
        g.order = order;
        Some(g)
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
    /// points and points on cell borders.
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
                }
            }
        }
    }
}
