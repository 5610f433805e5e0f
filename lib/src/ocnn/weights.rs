//! Coupling weights (spec §2.3, §11.1): `J_ij = exp(−d²/((2·a)·a))` computed once on the host in
//! `f64` (the core's [`neurobits_core::exp`], not the C library's: the same bits on any host and
//! on the GPU) and rounded to the working type; `J_ii = 0`; the row norms `C_i` in the canonical
//! order. Every target receives these same bits.

use anyhow::{bail, Result};
use neurobits_core::ocnn::kernels::lane_entry;
use neurobits_core::ocnn::{coupling_weight, lanes32_sparse, row_norm, squared, zero_beyond, LaneColumn, Real};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

use super::coupling::host_exp;
pub use super::coupling::weight;
use super::near::Near;
use super::points::Points;
use crate::io::memory::ensure_fits;

/// Dense weights (`n × n`, row-major) and row norms.
pub struct Dense<T> {
    /// Points.
    pub n: usize,
    /// `J`, row-major, `J_ii = 0`.
    pub j: Vec<T>,
    /// `C_i = Σ_j J_ij` (lanes32 order).
    pub norm: Vec<T>,
}

/// Elements of a buffer written by several rayon tasks, each element by exactly one.
struct SharedRows<T>(*mut T);

// SAFETY: the tasks write disjoint elements (the callers' SAFETY comments say why), and `T`
// values are sent between threads.
unsafe impl<T: Send> Sync for SharedRows<T> {}

impl<T> SharedRows<T> {
    /// # Safety
    /// `at` lies inside the buffer, which outlives the call, and no other task touches `at`.
    unsafe fn write(&self, at: usize, v: T) {
        unsafe { self.0.add(at).write(v) };
    }
}

/// The dense coupling stored as lane rows ([`Dense::lane_rows`]): per row, lane `l`'s nonzero
/// weights (columns `≡ l mod 32`, ascending) at entries `k·32 + l`, zero weights at column 0 to
/// the row's width (its fullest lane). The core's `update_neuron_lanes` over a row is the dense
/// row's update, bit for bit; only the nonzero weights are read.
///
/// `C` is how an entry's column is stored ([`LaneColumn`]): the column itself (`u32`, the GPU's
/// form) or, on the CPU, its quotient by 32 in one or two bytes ([`Dense::lane_rows_as`]).
pub struct LaneRows<T, C = u32> {
    /// Points.
    pub n: usize,
    /// Row `i`'s entries are `ptr[i]..ptr[i + 1]` (a multiple of 32 apart).
    pub ptr: Vec<u64>,
    /// Column of each entry (padding: column 0's form).
    pub cols: Vec<C>,
    /// Weight of each entry (padding: 0).
    pub vals: Vec<T>,
    /// `C_i`, the dense rows' norms.
    pub norm: Vec<T>,
}

impl<T: Real + Send + Sync> Dense<T> {
    /// The lane rows of `J`: what the CPU and the GPU's `LaneRows` update read instead of the
    /// `n²` weights.
    ///
    /// ```
    /// use neurobits::ocnn::weights::Dense;
    /// // Row 0 has weights at columns 1 and 33 (lane 1), row 1 at column 0.
    /// let n = 34;
    /// let mut j = vec![0.0f32; n * n];
    /// (j[1], j[33], j[n]) = (0.5, 0.25, 0.5);
    /// let r = Dense { n, j, norm: vec![1.0; n] }.lane_rows();
    /// assert_eq!((r.ptr[1], r.ptr[2], r.ptr[n]), (64, 96, 96));
    /// assert_eq!((r.cols[1], r.cols[33], r.vals[1], r.vals[33], r.vals[0]), (1, 33, 0.5, 0.25, 0.0));
    /// assert_eq!((r.cols[64], r.vals[64]), (0, 0.5));
    /// ```
    pub fn lane_rows(&self) -> LaneRows<T> {
        self.lane_rows_as()
    }

    /// [`Dense::lane_rows`] with columns stored as `C`, which must fit `n` ([`LaneColumn::fits`]).
    ///
    /// ```
    /// use neurobits::ocnn::weights::Dense;
    /// use neurobits_core::ocnn::Quot8;
    /// let n = 34;
    /// let mut j = vec![0.0f32; n * n];
    /// (j[1], j[33]) = (0.5, 0.25);
    /// let r = Dense { n, j, norm: vec![1.0; n] }.lane_rows_as::<Quot8>();
    /// assert_eq!((r.cols[1], r.cols[33]), (Quot8(0), Quot8(1)));
    /// ```
    pub fn lane_rows_as<C: LaneColumn>(&self) -> LaneRows<T, C> {
        // One pass over J keeps each row's nonzero weights (a few percent of a large set).
        let nonzero: Vec<Vec<(u32, T)>> = self
            .j
            .par_chunks(self.n)
            .map(|row| row.iter().enumerate().filter(|&(_, &w)| w != T::ZERO).map(|(k, &w)| (k as u32, w)).collect())
            .collect();
        lay_out(self.n, &nonzero, self.norm.clone())
    }
}

/// Lane rows from each row's nonzero weights `(column, weight)`, ascending columns: the widths
/// first, then the rows written in place, in parallel.
fn lay_out<T: Real + Send + Sync, C: LaneColumn>(n: usize, nonzero: &[Vec<(u32, T)>], norm: Vec<T>) -> LaneRows<T, C> {
    assert!(C::fits(n), "lane-row columns too narrow for {n} neurons");
    let width = |nz: &[(u32, T)]| {
        let mut count = [0usize; 32];
        nz.iter().for_each(|&(k, _)| count[k as usize % 32] += 1);
        count.into_iter().max().unwrap_or(0)
    };
    let mut ptr = Vec::with_capacity(n + 1);
    ptr.push(0u64);
    for nz in nonzero {
        ptr.push(ptr[ptr.len() - 1] + 32 * width(nz) as u64);
    }
    let total = ptr[n] as usize;
    let (mut cols, mut vals) = (vec![C::encode(0); total], vec![T::ZERO; total]);
    let mut rows = Vec::with_capacity(n);
    let (mut c, mut v) = (&mut cols[..], &mut vals[..]);
    for i in 0..n {
        let len = (ptr[i + 1] - ptr[i]) as usize;
        let (rc, tc) = c.split_at_mut(len);
        let (rv, tv) = v.split_at_mut(len);
        rows.push((rc, rv));
        (c, v) = (tc, tv);
    }
    rows.into_par_iter().zip(nonzero).for_each(|((rc, rv), nz)| {
        let mut at = [0usize; 32];
        for &(k, w) in nz {
            let l = k as usize % 32;
            let e = lane_entry(at[l], l);
            (rc[e], rv[e]) = (C::encode(k as usize), w);
            at[l] += 1;
        }
    });
    LaneRows { n, ptr, cols, vals, norm }
}

/// Points whose weights all round to zero at the scale (`C_i = 0`, spec OPEN-11): too far from
/// every other point for this `a` in the working type. An error of the weights' builders; the
/// clustering leaves such points out of the dynamics as singletons (`ocnn::cluster_on`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncoupled {
    /// The uncoupled points, ascending.
    pub points: Vec<u32>,
}

impl Uncoupled {
    /// `Err` naming every row whose `C_i` is zero.
    pub(crate) fn check<T: Real>(norm: &[T]) -> Result<(), Uncoupled> {
        let points: Vec<u32> = (0..norm.len() as u32).filter(|&i| norm[i as usize] == T::ZERO).collect();
        if points.is_empty() {
            Ok(())
        } else {
            Err(Uncoupled { points })
        }
    }
}

impl std::fmt::Display for Uncoupled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "point {} ", self.points[0])?;
        if self.points.len() > 1 {
            write!(f, "(and {} more) ", self.points.len() - 1)?;
        }
        f.write_str("has no coupling left in this precision (C = 0): raise --scale or use --dtype f64")
    }
}

impl std::error::Error for Uncoupled {}

/// The lane rows of the dense coupling of `p` with scale `a` (pairs beyond `cutoff · a` zero,
/// when given), built from the points without the `n × n` matrix: each row's nonzero weights are
/// the pairs closer than where the weight underflows ([`Near`]), computed by the core's
/// `coupling_weight` exactly as [`dense_cut`] computes them, so [`dense_cut`]`(…).lane_rows_as()`
/// entry for entry (tested), with the same norms (`lanes32` over the nonzero weights = over the dense row). The hit counts
/// of the dense coupling (`n(n − 1)/2`) are checked against memory first.
pub fn lane_rows<T: Real + Send + Sync, C: LaneColumn>(
    p: &Points,
    a: f64,
    cutoff: Option<f64>,
) -> Result<LaneRows<T, C>> {
    let n = p.n;
    ensure_fits(&format!("the dense {n}x{n} coupling"), (n as u128 * n.saturating_sub(1) as u128 / 2) * 4)?;
    if !C::fits(n) {
        bail!("{n} points: too many for lane rows");
    }
    let r2 = cutoff.map_or(f64::INFINITY, |r| (r * a) * (r * a));
    let zb = zero_beyond::<T>();
    let near = Near::new(p, r2.min(zb * ((2.0 * a) * a)).sqrt());
    let nonzero: Vec<Vec<(u32, T)>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut row = Vec::new();
            near.each(i, r2, |k, d2| {
                let w = coupling_weight::<T>(d2, a, r2, host_exp);
                if w != T::ZERO {
                    row.push((k, w));
                }
            });
            row.sort_unstable_by_key(|&(k, _)| k);
            row
        })
        .collect();
    let norm: Vec<T> = nonzero.par_iter().map(|nz| lanes32_sparse_pairs(nz)).collect();
    Uncoupled::check(&norm)?;
    Ok(lay_out(n, &nonzero, norm))
}

/// `C_i` of a row from its nonzero weights (ascending columns): the core's `lanes32_sparse`.
fn lanes32_sparse_pairs<T: Real>(nz: &[(u32, T)]) -> T {
    let cols: Vec<u32> = nz.iter().map(|&(k, _)| k).collect();
    lanes32_sparse(&cols, |k| nz[k].1)
}

/// The dense coupling of `p` with scale `a`. Fails on a row whose weights all vanish in the
/// working type (`C_i = 0`, spec OPEN-11): a point too far from every other for this `a`.
pub fn dense<T: Real + Send + Sync>(p: &Points, a: f64) -> Result<Dense<T>> {
    dense_cut(p, a, None)
}

/// [`dense`] with the weights of pairs farther than `cutoff · a` set to zero: the same `J` as
/// [`sparse`], stored densely (the tests compare the two).
pub fn dense_cut<T: Real + Send + Sync>(p: &Points, a: f64, cutoff: Option<f64>) -> Result<Dense<T>> {
    let r2 = cutoff.map_or(f64::INFINITY, |r| (r * a) * (r * a));
    let n = p.n;
    let bytes = (n as u128 * n as u128).saturating_mul(core::mem::size_of::<T>() as u128);
    ensure_fits(&format!("the dense {n}x{n} coupling"), bytes)?;
    let mut j = vec![T::ZERO; n * n];
    // J is symmetric bit for bit (the squared distance of (i, k) and (k, i) is the same sum of
    // the same squares), so each pair's `exp` is computed once and written to both places: tiles
    // of the upper triangle in parallel, each writing its block and the transposed block.
    const TILE: usize = 64;
    let tiles = n.div_ceil(TILE);
    let out = SharedRows(j.as_mut_ptr());
    (0..tiles).into_par_iter().flat_map_iter(|bi| (bi..tiles).map(move |bk| (bi, bk))).for_each(|(bi, bk)| {
        for i in bi * TILE..n.min(bi * TILE + TILE) {
            for k in (i + 1).max(bk * TILE)..n.min(bk * TILE + TILE) {
                // Past the cutoff or `zero_beyond` the weight is the 0 already there: no `exp` is
                // computed (most pairs of a large set).
                let w = coupling_weight::<T>(squared(p.point(i), p.point(k)), a, r2, host_exp);
                if w != T::ZERO {
                    // SAFETY: i < k < n, so both indices are inside `j` (n² values, alive until
                    // the loop ends); the pair (i, k) belongs to exactly one tile, so no two
                    // tasks write the same element, and nothing reads `j` meanwhile.
                    unsafe { out.write(i * n + k, w) };
                    unsafe { out.write(k * n + i, w) };
                }
            }
        }
    });
    let norm: Vec<T> = j.par_chunks(n).map(row_norm).collect();
    Uncoupled::check(&norm)?;
    Ok(Dense { n, j, norm })
}

/// Sparse coupling (`--cutoff R`): each point is coupled to the points within `R · a` ([`Near`]'s
/// grid of cells of that size finds them), rows stored as CSR with ascending columns. The pairs
/// within the cutoff are the *coupled pairs*: only they are counted for synchronization, so
/// memory and work are `O(N · neighbours)` instead of `O(N²)`.
pub struct Sparse<T> {
    /// Points.
    pub n: usize,
    /// Row `i`'s entries are `ptr[i]..ptr[i + 1]`.
    pub ptr: Vec<usize>,
    /// Column of each entry, ascending within a row (never `i` itself).
    pub cols: Vec<u32>,
    /// `J` of each entry (may round to zero in the working type; the pair stays coupled).
    pub vals: Vec<T>,
    /// `C_i` in the lanes32 order of the sparse row (equal to the dense row's).
    pub norm: Vec<T>,
    /// First entry of row `i` whose column is above `i`: the upper pairs are `upper[i]..ptr[i+1]`.
    pub upper: Vec<usize>,
    /// Hit slot of row `i`'s first upper pair: pairs are numbered row by row.
    pub hit_ptr: Vec<usize>,
}

impl<T> Sparse<T> {
    /// The coupled pairs `(i, j)`, `i < j`, in hit-slot order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.n).flat_map(move |i| self.cols[self.upper[i]..self.ptr[i + 1]].iter().map(move |&j| (i as u32, j)))
    }
}

/// A block of consecutive rows of [`sparse`]: per row its length, its first upper entry (within
/// the row) and its norm; the rows' entries end to end.
struct Block<T> {
    len: Vec<usize>,
    upper: Vec<usize>,
    norm: Vec<T>,
    cols: Vec<u32>,
    vals: Vec<T>,
}

/// The sparse coupling of `p` with scale `a` and cutoff `r` (in units of `a`).
pub fn sparse<T: Real + Send + Sync>(p: &Points, a: f64, r: f64) -> Result<Sparse<T>> {
    if !(r.is_finite() && r > 0.0) {
        bail!("--cutoff {r}: must be a positive number (in units of a)");
    }
    let n = p.n;
    let r2 = (r * a) * (r * a);
    let near = Near::new(p, r2.sqrt());
    // One pass: blocks of rows in parallel, each row's neighbours found, sorted and weighted once,
    // its norm and its first upper entry taken while it is in cache; then the blocks are laid end
    // to end. The entries are counted as they come, and the pass stops as soon as they cannot fit
    // (a huge R would couple every pair: N² entries), before anything of that size is built.
    let per_entry = 4 + 2 * size_of::<T>() as u64;
    let limit = crate::budget::bytes() / per_entry;
    let total = AtomicU64::new(0);
    let too_many = || anyhow::anyhow!("the sparse coupling within {r}·a does not fit in memory: lower --cutoff");
    const ROWS: usize = 1024;
    let blocks: Vec<Block<T>> = (0..n.div_ceil(ROWS))
        .into_par_iter()
        .map(|b| {
            let mut k =
                Block { len: Vec::new(), upper: Vec::new(), norm: Vec::new(), cols: Vec::new(), vals: Vec::new() };
            let mut row: Vec<(u32, f64)> = Vec::new();
            for i in b * ROWS..n.min(b * ROWS + ROWS) {
                row.clear();
                near.collect(i, r2, &mut row);
                let c = row.len() as u64;
                if total.fetch_add(c, Ordering::Relaxed) + c > limit {
                    return Err(());
                }
                row.sort_unstable_by_key(|&(j, _)| j);
                let at = k.cols.len();
                k.cols.extend(row.iter().map(|&(j, _)| j));
                k.vals.extend(row.iter().map(|&(_, d2)| T::from_f64(weight(d2, a))));
                k.len.push(row.len());
                k.upper.push(row.partition_point(|&(j, _)| (j as usize) < i));
                k.norm.push(lanes32_sparse(&k.cols[at..], |e| k.vals[at + e]));
            }
            Ok(k)
        })
        .collect::<Result<_, ()>>()
        .map_err(|_| too_many())?;
    let nnz = total.into_inner() as usize;
    ensure_fits(&format!("the sparse coupling ({nnz} entries)"), nnz as u128 * per_entry as u128)?;
    let (mut ptr, mut upper, mut hit_ptr) = (vec![0usize; n + 1], vec![0usize; n], vec![0usize; n + 1]);
    let (lens, uppers) = (blocks.iter().flat_map(|k| &k.len), blocks.iter().flat_map(|k| &k.upper));
    for (i, (&len, &up)) in lens.zip(uppers).enumerate() {
        upper[i] = ptr[i] + up;
        ptr[i + 1] = ptr[i] + len;
        hit_ptr[i + 1] = hit_ptr[i] + (ptr[i + 1] - upper[i]);
    }
    let (mut cols, mut vals) = (vec![0u32; nnz], vec![T::ZERO; nnz]);
    let mut parts = Vec::with_capacity(blocks.len());
    let (mut c, mut v) = (&mut cols[..], &mut vals[..]);
    for k in &blocks {
        let (kc, tc) = c.split_at_mut(k.cols.len());
        let (kv, tv) = v.split_at_mut(k.vals.len());
        parts.push((kc, kv, k));
        (c, v) = (tc, tv);
    }
    parts.into_par_iter().for_each(|(c, v, k)| {
        c.copy_from_slice(&k.cols);
        v.copy_from_slice(&k.vals);
    });
    let norm: Vec<T> = blocks.iter().flat_map(|k| k.norm.iter().copied()).collect();
    drop(blocks);
    if let Some(i) = norm.iter().position(|&c| c == T::ZERO) {
        bail!("point {i} has no neighbour within the cutoff (C = 0): raise --cutoff or --scale");
    }
    Ok(Sparse { n, ptr, cols, vals, norm, upper, hit_ptr })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every weight as the rule states it: `exp` of every ordered pair, rounded, zero diagonal.
    fn naive<T: Real>(p: &Points, a: f64) -> Vec<T> {
        let n = p.n;
        (0..n * n)
            .map(|e| {
                let (i, k) = (e / n, e % n);
                if i == k {
                    T::ZERO
                } else {
                    T::from_f64(weight(squared(p.point(i), p.point(k)), a))
                }
            })
            .collect()
    }

    /// The tiled, once-per-pair weights with the underflow shortcut equal the naive ones bit for
    /// bit, in f32 and f64, on points whose distances cross both types' underflow: a tight
    /// cluster, a far one, and points near the f32 and f64 boundaries (x ≈ 104 and ≈ 745).
    #[test]
    fn symmetric_tiled_weights_equal_the_naive_rule() {
        let a = 1.0f64;
        let mut coords = Vec::new();
        for i in 0..150u64 {
            let v = (neurobits_core::prng::draw(11, i) >> 11) as f64 / (1u64 << 53) as f64;
            coords.extend([v * 3.0, (i % 7) as f64 * 0.1]);
        }
        // x = d²/2 near 103.97 and 745.13 from the origin.
        for d in [14.42, 14.4224, 14.43, 38.6, 38.604, 38.61] {
            coords.extend([d, 0.0]);
        }
        let p = Points { n: coords.len() / 2, dim: 2, coords };
        let (f, g) = (dense::<f32>(&p, a).unwrap(), dense::<f64>(&p, a).unwrap());
        assert!(f.j.iter().zip(naive::<f32>(&p, a)).all(|(x, y)| x.to_bits() == y.to_bits()), "f32 weights");
        assert!(g.j.iter().zip(naive::<f64>(&p, a)).all(|(x, y)| x.to_bits() == y.to_bits()), "f64 weights");
        assert!(f.j.iter().any(|&w| w > 0.0 && w < 1e-40), "an f32 subnormal weight is exercised");
    }
}
