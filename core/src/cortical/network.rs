//! A whole network's state over borrowed slices (heap-backed on the host, arrays in
//! [`super::FixedNetwork`] on the firmware) and the level schedules of D-11.

use super::column::{column_step, nearest_feature, parent_input, Column, Input, StepCtx};
use super::geometry::Geometry;
use super::rng::{key, INIT};
use super::rules::initial_weight;
use crate::Error;

/// Which output a level reads (D-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Schedule {
    /// Level `l` reads level `l−1`'s output of the same step (multi-launch, work queue, the
    /// profiler's splits).
    #[default]
    Synchronous,
    /// Level `l` reads the double buffer level `l−1` wrote at step `t−1` (the paper's
    /// pipelining): a different, equally deterministic trajectory.
    Pipelined,
}

/// A network's state, borrowed: weights striped per hypercolumn (`[hc][i][m]`), `Ω`, own-win
/// counters and random-firing flags per minicolumn (`[hc][m]`).
#[derive(Debug)]
pub struct Net<'a> {
    /// Shape.
    pub geo: Geometry,
    /// `[hc][i][m]` weights, Q0.16.
    pub w: &'a mut [u16],
    /// `[hc][m]` cached `Ω`.
    pub omega: &'a mut [u32],
    /// `[hc][m]` own-win counters.
    pub cnt: &'a mut [u32],
    /// `[hc][m]` random firing on (1) / off (0).
    pub rf: &'a mut [u8],
}

impl<'a> Net<'a> {
    /// Borrows the four state buffers, checking their lengths against `geo`.
    pub fn new(
        geo: Geometry,
        w: &'a mut [u16],
        omega: &'a mut [u32],
        cnt: &'a mut [u32],
        rf: &'a mut [u8],
    ) -> Result<Self, Error> {
        let per_m = geo.hypercolumns() * geo.minicolumns();
        if w.len() != geo.weights() || omega.len() != per_m || cnt.len() != per_m || rf.len() != per_m {
            return Err(Error::Capacity(geo.weights(), w.len()));
        }
        Ok(Net { geo, w, omega, cnt, rf })
    }

    /// Hypercolumn `hc`'s state.
    pub fn column(&mut self, hc: usize) -> Column<'_> {
        let (wp, m) = (self.geo.weights_per_column(), self.geo.minicolumns());
        Column {
            w: &mut self.w[hc * wp..(hc + 1) * wp],
            omega: &mut self.omega[hc * m..(hc + 1) * m],
            cnt: &mut self.cnt[hc * m..(hc + 1) * m],
            rf: &mut self.rf[hc * m..(hc + 1) * m],
        }
    }

    /// The untrained network of `seed` (D-9): weights uniform on [0, 0.01), so `Ω = 0`; counters
    /// 0; random firing on.
    pub fn init(&mut self, seed: u64) {
        let (m, n_in) = (self.geo.minicolumns(), self.geo.inputs());
        let k = key(seed, INIT);
        for (hc, col) in self.w.chunks_mut(self.geo.weights_per_column()).enumerate() {
            init_column(col, k, hc as u64, m, n_in);
        }
        self.omega.fill(0);
        self.cnt.fill(0);
        self.rf.fill(1);
    }

    /// One time step over all levels. `x` holds the bottom inputs (`geo.bottom_words()` words,
    /// `input_words()` per bottom hypercolumn); `winners` receives every hypercolumn's winner
    /// (`-1` silent). Synchronous: `prev` is `None` and each level reads the level below in
    /// `winners`. Pipelined: `prev` holds the winners of step `t − 1` (all `-1` at the start).
    /// `ctx` says whether to learn and at which step ([`StepCtx::new`]).
    pub fn step(&mut self, x: &[u64], winners: &mut [i32], prev: Option<&[i32]>, ctx: &StepCtx) {
        let geo = self.geo;
        for l in 0..geo.levels() {
            for j in 0..geo.level_len(l) {
                let xin = column_input(&geo, l, j, x, prev.unwrap_or(winners));
                let hc = geo.offset(l) + j;
                winners[hc] = column_step(self.column(hc), hc as u64, &xin, ctx);
            }
        }
    }
}

impl Net<'_> {
    /// The readout pass: every hypercolumn outputs its [`nearest_feature`] (no firing threshold,
    /// no learning) and its parent reads those; `out` receives them per hypercolumn.
    pub fn features(&self, x: &[u64], out: &mut [i32]) {
        let geo = self.geo;
        let (m, wp) = (geo.minicolumns(), geo.weights_per_column());
        for l in 0..geo.levels() {
            for j in 0..geo.level_len(l) {
                let xin = column_input(&geo, l, j, x, out);
                let hc = geo.offset(l) + j;
                out[hc] = nearest_feature(&self.w[hc * wp..(hc + 1) * wp], &self.omega[hc * m..(hc + 1) * m], &xin);
            }
        }
    }
}

/// Initial weights of one hypercolumn (`[i][m]` layout, counters in `[m][i]` order as spec §4).
pub fn init_column(w: &mut [u16], init_key: u64, hc: u64, m: usize, n_in: usize) {
    for i in 0..n_in {
        for mm in 0..m {
            w[i * m + mm] = initial_weight(init_key, hc, m, mm, i);
        }
    }
}

/// The input of hypercolumn `j` of level `l`: bottom words `x` at level 0, else its children's
/// outputs in `outputs` (per hypercolumn: this step's, or the step before's when pipelined).
#[inline(always)]
pub fn column_input(geo: &Geometry, l: usize, j: usize, x: &[u64], outputs: &[i32]) -> Input {
    if l == 0 {
        bottom_input(geo, x, j)
    } else {
        level_input(geo, l, j, outputs)
    }
}

/// Bottom hypercolumn `j`'s input from the bottom words `x`.
#[inline(always)]
pub fn bottom_input(geo: &Geometry, x: &[u64], j: usize) -> Input {
    let nw = geo.input_words();
    let mut xin = [0u64; 4];
    xin[..nw].copy_from_slice(&x[j * nw..(j + 1) * nw]);
    xin
}

/// The input of hypercolumn `j` of level `l ≥ 1` from the winners of all hypercolumns.
#[inline(always)]
pub fn level_input(geo: &Geometry, l: usize, j: usize, winners: &[i32]) -> Input {
    let below = geo.offset(l - 1) + 2 * j;
    parent_input(geo.minicolumns(), winners[below], winners[below + 1])
}
