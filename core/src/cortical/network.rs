//! A whole network's state over borrowed slices (heap-backed on the host, arrays in
//! [`super::FixedNetwork`] on the firmware) and the level schedules of D-11.

use super::column::{column_step, nearest_feature, population_code, Column, StepCtx};
use super::geometry::Geometry;
use super::part::Part;
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
/// counters and random-firing flags per minicolumn (`[hc][m]`) — of the whole network, or of the
/// [`Part`] one worker holds (hypercolumns in slot order).
#[derive(Debug)]
pub struct Net<'a> {
    /// Shape of the whole network.
    pub geo: Geometry,
    /// What the buffers hold ([`Part::whole`] for a whole network).
    pub part: Part,
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
        Net::part(geo, Part::whole(&geo), w, omega, cnt, rf)
    }

    /// Borrows the state of `part` of a network of `geo`'s shape, checking the lengths.
    pub fn part(
        geo: Geometry,
        part: Part,
        w: &'a mut [u16],
        omega: &'a mut [u32],
        cnt: &'a mut [u32],
        rf: &'a mut [u8],
    ) -> Result<Self, Error> {
        let per_m = part.columns() * geo.minicolumns();
        let n_w = part.columns() * geo.weights_per_column();
        if w.len() != n_w || omega.len() != per_m || cnt.len() != per_m || rf.len() != per_m {
            return Err(Error::Capacity(n_w, w.len()));
        }
        Ok(Net { geo, part, w, omega, cnt, rf })
    }

    /// The state in slot `hc` (the hypercolumn id for a whole network).
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
        let (geo, part) = (self.geo, self.part);
        let (m, n_in, wp) = (geo.minicolumns(), geo.inputs(), geo.weights_per_column());
        let k = key(seed, INIT);
        for s in part.spans() {
            for j in 0..s.count as usize {
                let slot = s.slot as usize + j;
                init_column(&mut self.w[slot * wp..(slot + 1) * wp], k, s.id(&geo, j) as u64, m, n_in);
            }
        }
        self.omega.fill(0);
        self.cnt.fill(0);
        self.rf.fill(1);
    }

    /// One time step over all levels (of the part). `x` holds the bottom inputs
    /// (`geo.bottom_words()` words, `input_words()` per bottom hypercolumn); `winners` receives
    /// every hypercolumn's winner (`-1` silent; [`Part::outputs`] long, after the part's inbox).
    /// Synchronous: `prev` is `None` and each level reads the level below in `winners`.
    /// Pipelined (whole networks): `prev` holds the winners of step `t − 1` (all `-1` at the
    /// start). `ctx` says whether to learn and at which step ([`StepCtx::new`]).
    pub fn step(&mut self, x: &[u64], winners: &mut [i32], prev: Option<&[i32]>, ctx: &StepCtx) {
        let (geo, part) = (self.geo, self.part);
        for s in part.spans() {
            for k in 0..s.count as usize {
                let xin = s.input(&geo, k, x, prev.unwrap_or(winners));
                winners[s.out as usize + k] =
                    column_step(self.column(s.slot as usize + k), s.id(&geo, k) as u64, &xin, ctx);
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
        for s in self.part.spans() {
            for k in 0..s.count as usize {
                let xin = s.input(&geo, k, x, out);
                let hc = s.slot as usize + k;
                let w = &self.w[hc * wp..(hc + 1) * wp];
                out[s.out as usize + k] = nearest_feature(w, &self.omega[hc * m..(hc + 1) * m], &xin);
            }
        }
    }

    /// The competitive rule's evaluation pass with the population code: `winners` receives
    /// every hypercolumn's winner (the same as [`Net::step`] with learning off under the
    /// competitive rule; parents read them), `codes` every minicolumn's response
    /// ([`population_code`], `[hc][m]`).
    pub fn population(&self, x: &[u64], winners: &mut [i32], codes: &mut [u32]) {
        let geo = self.geo;
        let (m, wp) = (geo.minicolumns(), geo.weights_per_column());
        for s in self.part.spans() {
            for k in 0..s.count as usize {
                let xin = s.input(&geo, k, x, winners);
                let (hc, out) = (s.slot as usize + k, s.out as usize + k);
                let w = &self.w[hc * wp..(hc + 1) * wp];
                let code = &mut codes[out * m..(out + 1) * m];
                winners[out] = population_code(w, &self.omega[hc * m..(hc + 1) * m], &xin, code);
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
