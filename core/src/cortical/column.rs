//! One hypercolumn's step (spec §4): activation of every minicolumn over the active inputs,
//! own and random firing, the winner-take-all, and the winner's learning.

use super::geometry::Geometry;
use super::rng::{key as rng_key, FIRE};
use super::rules::{
    connected, count_win, drive, fires_randomly, key, normalised, update, winner, Rule, Tally, LTD, MAX_MINICOLUMNS,
    NO_KEY, RF_STOP,
};
use crate::bits::set_bits;

/// A hypercolumn's input: up to 256 bits (bit `i` = input `i`).
pub type Input = [u64; 4];

/// Input bit `i`.
#[inline(always)]
pub fn bit(x: &Input, i: usize) -> bool {
    (x[i / 64] >> (i % 64)) & 1 == 1
}

/// One hypercolumn's state, borrowed. `w` holds the `2M × M` weights striped as in the paper's
/// Fig. 5 (`w[i·M + m]` = weight `i` of minicolumn `m`), so the minicolumns' weights on one
/// input are contiguous: a warp reads them in one transaction and a CPU adds them as a vector.
/// `omega[m]` caches `Ω` of minicolumn `m` (exact; rewritten with its row), `cnt` counts own
/// wins (D-8), `rf[m] != 0` while random firing is on.
#[derive(Debug)]
pub struct Column<'a> {
    /// Weights `[i][m]`, Q0.16.
    pub w: &'a mut [u16],
    /// `Ω` per minicolumn.
    pub omega: &'a mut [u32],
    /// Own wins since the last random win, per minicolumn.
    pub cnt: &'a mut [u32],
    /// Random firing on (1) or off (0), per minicolumn.
    pub rf: &'a mut [u8],
}

/// What a step needs besides the hypercolumn: minicolumns, network size, learning step `t`, the
/// random-firing key, and whether learning (and random firing) is on.
#[derive(Clone, Copy, Debug)]
pub struct StepCtx {
    /// Minicolumns `M`.
    pub m: usize,
    /// Hypercolumns of the network (random-firing counter).
    pub n_hc: u64,
    /// Learning steps done so far.
    pub t: u64,
    /// `rng::key(seed, FIRE)`.
    pub fire_key: u64,
    /// Learning and random firing on.
    pub learn: bool,
    /// How the hypercolumn competes and learns ([`Rule::spec`]`(`[`LTD`]`)` canonically; β = 0
    /// is the §5.2 reading of D-6′).
    pub rule: Rule,
}

impl StepCtx {
    /// The context of learning step `t` of a network of `geo`'s shape seeded `seed`, with the
    /// canonical β.
    ///
    /// ```
    /// use neurobits_core::cortical::{Geometry, StepCtx};
    /// let ctx = StepCtx::new(&Geometry::new(3, 16).unwrap(), 5, 1, true);
    /// assert_eq!((ctx.m, ctx.n_hc, ctx.t, ctx.rule.ltd()), (16, 7, 5, 32768));
    /// ```
    pub fn new(geo: &Geometry, t: u64, seed: u64, learn: bool) -> Self {
        StepCtx {
            m: geo.minicolumns(),
            n_hc: geo.hypercolumns() as u64,
            t,
            fire_key: rng_key(seed, FIRE),
            learn,
            rule: Rule::spec(LTD),
        }
    }
}

/// Runs hypercolumn `hc` on input `x`: returns the winner (`-1` if silent) and, when learning,
/// updates the winner's weights, `Ω`, counter and random-firing flag. An input with no active
/// bit leaves the hypercolumn silent and unchanged (D-5).
///
/// ```
/// use neurobits_core::cortical::{column_step, rules::Rule, Column, StepCtx};
/// let m = 2;
/// let (mut w, mut om, mut cnt, mut rf) = ([0u16; 8], [0u32; 2], [0u32; 2], [0u8; 2]);
/// // Minicolumn 1 holds the feature "inputs 0 and 2".
/// for i in [0, 2] { w[i * m + 1] = 65535; }
/// om[1] = 2 * 65535;
/// let ctx = StepCtx { m, n_hc: 1, t: 0, fire_key: 0, learn: false, rule: Rule::spec(32768) };
/// let col = Column { w: &mut w, omega: &mut om, cnt: &mut cnt, rf: &mut rf };
/// assert_eq!(column_step(col, 0, &[0b0101, 0, 0, 0], &ctx), 1);
/// ```
pub fn column_step(col: Column<'_>, hc: u64, x: &Input, ctx: &StepCtx) -> i32 {
    let m_count = ctx.m;
    if x.iter().all(|&w| w == 0) {
        return -1;
    }
    let mut tally = [Tally::default(); MAX_MINICOLUMNS];
    let tally = &mut tally[..m_count];
    tally_inputs(col.w, x, tally);
    let mut best = NO_KEY;
    for (m, t) in tally.iter().enumerate() {
        best = best.max(minicolumn_key(*t, col.omega[m], col.rf[m], ctx, hc, m));
    }
    let Some(w) = winner(best) else {
        return -1;
    };
    if ctx.learn {
        let (mut omega, recruit) = (0, col.omega[w] == 0);
        for i in 0..2 * m_count {
            let v = update(col.w[i * m_count + w], bit(x, i), ctx.rule, recruit);
            col.w[i * m_count + w] = v;
            omega += connected(v);
        }
        col.omega[w] = omega;
        (col.cnt[w], col.rf[w]) = settle(col.cnt[w], col.rf[w], best);
    }
    w as i32
}

/// Bottom hypercolumn `j`'s input from the bottom words `x`.
#[inline(always)]
pub fn bottom_input(geo: &Geometry, x: &[u64], j: usize) -> Input {
    let nw = geo.input_words();
    let mut xin = [0u64; 4];
    xin[..nw].copy_from_slice(&x[j * nw..(j + 1) * nw]);
    xin
}

/// The input of a hypercolumn above the bottom: child `2j`'s winner at bit `w`, child `2j+1`'s
/// at bit `M + w` (silent children give no bit).
///
/// ```
/// use neurobits_core::cortical::parent_input;
/// assert_eq!(parent_input(16, 3, -1)[0], 1 << 3);
/// assert_eq!(parent_input(16, -1, 2)[0], 1 << 18);
/// ```
#[inline(always)]
pub fn parent_input(m: usize, left: i32, right: i32) -> Input {
    let mut x = [0u64; 4];
    if left >= 0 {
        let i = left as usize;
        x[i / 64] |= 1 << (i % 64);
    }
    if right >= 0 {
        let i = m + right as usize;
        x[i / 64] |= 1 << (i % 64);
    }
    x
}

/// Minicolumn `m`'s WTA key from its tally over the active inputs (D-3, D-4, D-7): its drive
/// `G`, firing by its own drive (`G > 0`) or at random (learning on, `rf != 0`). Under
/// [`Rule::competitive`] every minicolumn holding a feature (`Ω > 0`) competes too, ranked by
/// [`normalised`] `G`.
#[inline(always)]
pub fn minicolumn_key(t: Tally, omega: u32, rf: u8, ctx: &StepCtx, hc: u64, m: usize) -> i64 {
    let g = drive(t, omega);
    let rnd = ctx.learn && rf != 0 && fires_randomly(ctx.fire_key, ctx.t, ctx.n_hc, hc, ctx.m, m);
    if ctx.rule.is_competitive() {
        key(normalised(g, omega, t.d), m, omega > 0 || rnd)
    } else {
        key(g, m, g > 0 || rnd)
    }
}

/// The winner's own-win counter and random-firing flag after its win with key `best` (D-8):
/// it won by its own drive iff its `G > 0`.
///
/// ```
/// use neurobits_core::cortical::{settle, rules::{key, RF_STOP}};
/// assert_eq!(settle(RF_STOP - 1, 1, key(7, 3, true)), (RF_STOP, 0));
/// assert_eq!(settle(5, 1, key(-7, 3, true)), (0, 1));
/// ```
#[inline(always)]
pub fn settle(cnt: u32, rf: u8, best: i64) -> (u32, u8) {
    let cnt = count_win(cnt, (best >> 8) > 0);
    (cnt, if cnt >= RF_STOP { 0 } else { rf })
}

/// Adds every active input's weights to the minicolumns' tallies (`w` striped `[i][m]`).
#[inline(always)]
pub fn tally_inputs(w: &[u16], x: &Input, tally: &mut [Tally]) {
    let m_count = tally.len();
    for (wi, &word) in x.iter().enumerate() {
        for b in set_bits(word) {
            let i = wi * 64 + b;
            let row = &w[i * m_count..(i + 1) * m_count];
            for (t, &w) in tally.iter_mut().zip(row) {
                t.add(w);
            }
        }
    }
}

/// One hypercolumn's population code under the competitive rule, learning off: `out[m]` = the
/// matched mass `d` of minicolumn `m` (Σ of its weights on the active inputs, the input
/// projected on its feature: the low 24 bits of the ranking value [`super::rules::normalised`]
/// the competition compares) if it takes part in the competition (`Ω > 0`), else 0; returns the
/// winner (`-1` silent), the one [`column_step`] picks with learning off. The readout compares
/// images by every minicolumn's response, not only by the one-hot winner (manual, "Quality").
///
/// ```
/// use neurobits_core::cortical::population_code;
/// // Two minicolumns over 4 inputs (striped [i][m]); minicolumn 1 holds inputs 0 and 1.
/// let w = [9u16, 65535, 9, 30000, 0, 0, 0, 0];
/// let mut out = [7u32; 2];
/// assert_eq!(population_code(&w, &[0, 95535], &[0b0011, 0, 0, 0], &mut out), 1);
/// assert_eq!(out, [0, 95535]); // minicolumn 0 holds nothing: 0, whatever its weights
/// assert_eq!(population_code(&w, &[0, 95535], &[0b0100, 0, 0, 0], &mut out), 1);
/// assert_eq!(out, [0, 0]);
/// assert_eq!(population_code(&w, &[0, 95535], &[0; 4], &mut out), -1);
/// ```
pub fn population_code(w: &[u16], omega: &[u32], x: &Input, out: &mut [u32]) -> i32 {
    let m_count = omega.len();
    out[..m_count].fill(0);
    if x.iter().all(|&w| w == 0) {
        return -1;
    }
    let mut tally = [Tally::default(); MAX_MINICOLUMNS];
    let tally = &mut tally[..m_count];
    tally_inputs(w, x, tally);
    // The evaluation context: learning and random firing off; the competitive rule (its shift
    // plays no part in the key).
    let ctx = StepCtx { m: m_count, n_hc: 1, t: 0, fire_key: 0, learn: false, rule: Rule::competitive(1) };
    let mut best = NO_KEY;
    for (m, t) in tally.iter().enumerate() {
        let k = minicolumn_key(*t, omega[m], 0, &ctx, 0, m);
        best = best.max(k);
        out[m] = if k == NO_KEY { 0 } else { t.d };
    }
    winner(best).map_or(-1, |w| w as i32)
}

/// The competitive rule's readout for one image: the row of `train` (rows of `code.len()`
/// values, [`population_code`] of every hypercolumn) nearest to `code` in L1 distance (exact
/// `u64` sums; ties → the earliest row), `None` when `train` is empty.
///
/// ```
/// use neurobits_core::cortical::nearest_code;
/// let train = [0, 10, 10, 0, 5, 5];
/// assert_eq!((nearest_code(&train, &[9, 1]), nearest_code(&train, &[0, 0])), (Some(1), Some(0)));
/// assert_eq!((nearest_code(&train, &[5, 6]), nearest_code(&[], &[5, 6])), (Some(2), None));
/// ```
pub fn nearest_code(train: &[u32], code: &[u32]) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for (k, row) in train.chunks_exact(code.len().max(1)).enumerate() {
        let d: u64 = code.iter().zip(row).map(|(&a, &b)| a.abs_diff(b) as u64).sum();
        if best.is_none_or(|b| d < b.0) {
            best = Some((d, k));
        }
    }
    best.map(|b| b.1)
}

/// The readout's nearest feature of a hypercolumn: among the minicolumns that hold a feature
/// (`Ω > 0`), the one with the largest `G` whether or not it fires (ties → lowest index); `-1`
/// for an input with no active bit or a hypercolumn that has learnt nothing. Learning off.
///
/// ```
/// use neurobits_core::cortical::nearest_feature;
/// // Two minicolumns over 4 inputs (striped [i][m]); minicolumn 1 holds inputs 0 and 1.
/// let w = [0u16, 65535, 0, 65535, 0, 0, 0, 0];
/// let om = [0u32, 2 * 65535];
/// assert_eq!(nearest_feature(&w, &om, &[0b0101, 0, 0, 0]), 1); // half the feature: still nearest
/// assert_eq!(nearest_feature(&w, &[0, 0], &[0b0101, 0, 0, 0]), -1);
/// assert_eq!(nearest_feature(&w, &om, &[0; 4]), -1);
/// ```
pub fn nearest_feature(w: &[u16], omega: &[u32], x: &Input) -> i32 {
    if x.iter().all(|&w| w == 0) {
        return -1;
    }
    let mut tally = [Tally::default(); MAX_MINICOLUMNS];
    let tally = &mut tally[..omega.len()];
    tally_inputs(w, x, tally);
    let best = (0..omega.len()).map(|m| key(drive(tally[m], omega[m]), m, omega[m] > 0)).max().unwrap_or(NO_KEY);
    winner(best).map_or(-1, |w| w as i32)
}
