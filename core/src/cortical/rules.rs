//! Equations 1–7 of the paper in the exact integer form of spec §4 (Q0.16 weights, D-13), the
//! winner-take-all key (D-4), the Hebbian update (D-6) and random firing (D-7, D-8). Every
//! target calls these: the CPU loops over minicolumns, a GPU lane handles its own minicolumns.

use super::rng::rand_u32;

/// `W ≥ CONNECTED` ⇔ `W > 0.2` (Eq. 5): 13107/65536 < 0.2 < 13108/65536.
pub const CONNECTED: u16 = 13108;
/// `W ≥ STRONG` ⇔ `W ≥ 0.5` (Eq. 7).
pub const STRONG: u16 = 32768;
/// LTP step `α = 0.5` in Q0.16.
pub const LTP: u16 = 32768;
/// LTD step `β = 0.5` in Q0.16.
pub const LTD: u16 = 32768;
/// Random-firing probability `p = 0.01` as a threshold on a 32-bit draw: `round(p·2³²)`.
pub const FIRE_P: u32 = 42_949_673;
/// Own-drive wins after which a minicolumn's random firing stops for good (D-8).
pub const RF_STOP: u32 = 20;
/// Largest minicolumn count: the WTA key keeps `255 − m` in 8 bits and the input in 256 bits.
pub const MAX_MINICOLUMNS: usize = 128;
/// The key of a minicolumn that does not take part in the competition.
pub const NO_KEY: i64 = i64::MIN;

/// How a hypercolumn competes and learns. [`Rule::spec`]: the spec's D-3 … D-6 (only firing
/// minicolumns compete, `G > 0` or random; the winner's weights move by α = 0.5 up and β down,
/// saturating). [`Rule::competitive`]: the generalising rule (manual, "Quality"): lateral
/// inhibition always picks a winner among the minicolumns that hold a feature (`Ω > 0`) and the
/// randomly firing ones, ranked by the normalised drive `G/Ω` (Eq. 2 with `W̄ = W/Ω`, Eq. 3);
/// a minicolumn that holds nothing is recruited by a random win (its row becomes the input);
/// otherwise the winner's weights move a fraction `2^−shift` of the way to the input (LTP on
/// active, LTD on inactive inputs) — a learning rate instead of one-shot saturation.
/// One `u32`: bit 31 competitive, bits 0–15 β (spec) or the shift (competitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Rule(pub u32);

impl Rule {
    const COMPETITIVE: u32 = 1 << 31;
    /// The spec's rule with LTD step `ltd` (β in Q0.16; [`LTD`] canonical).
    pub const fn spec(ltd: u16) -> Self {
        Rule(ltd as u32)
    }
    /// The competitive rule with learning rate `2^−shift` (`shift` in 1..=15).
    pub const fn competitive(shift: u32) -> Self {
        Rule(Self::COMPETITIVE | (shift & 15))
    }
    /// Whether this is the competitive rule.
    #[inline(always)]
    pub const fn is_competitive(self) -> bool {
        self.0 & Self::COMPETITIVE != 0
    }
    /// β of the spec's rule.
    #[inline(always)]
    pub const fn ltd(self) -> u16 {
        self.0 as u16
    }
    /// The competitive rule's learning-rate shift.
    #[inline(always)]
    pub const fn shift(self) -> u32 {
        self.0 & 15
    }
}

/// The competitive rule's ranking value: `G·2¹⁶ / Ω` (truncating, exact in `i64`: |G| < 2³⁸),
/// 0 for `Ω = 0`, then `Σ W` over the active inputs (`d` < 2²⁴) below it: `(G·2¹⁶/Ω)·2²⁴ + d`,
/// |value| < 2⁵⁴, so the WTA key stays below 2⁶². Dividing by `Ω` is Eq. 2 read as `Θ − T`
/// with the normalised weights of Eq. 3: without it a minicolumn with little connected mass pays
/// little for mismatches and wins every input. `d` ranks the minicolumns Eq. 7 cannot tell
/// apart (every active input on a weak synapse, `Θ = −2k` for all): the one whose weights on
/// these inputs are largest, i.e. that has seen them most often.
///
/// ```
/// use neurobits_core::cortical::rules::normalised;
/// assert_eq!((normalised(-3 * 65536, 65536, 7), normalised(5, 0, 9)), ((-3 * 65536 << 24) + 7, 9));
/// ```
#[inline(always)]
pub fn normalised(g: i64, omega: u32, d: u32) -> i64 {
    let n = if omega == 0 { 0 } else { (g << 16) / omega as i64 };
    (n << 24) + d as i64
}

/// The winner's update of one weight under `rule`: [`learn`] for the spec's rule; for the
/// competitive rule the input bit itself if the winner held no feature (`recruit`), else a step
/// of `2^−shift` towards 65535 (active) or 0 (inactive), an arithmetic shift, exact on every target.
///
/// ```
/// use neurobits_core::cortical::rules::{update, Rule, LTD};
/// let c = Rule::competitive(3);
/// assert_eq!((update(100, true, c, true), update(40000, false, c, true)), (65535, 0));
/// assert_eq!((update(0, true, c, false), update(65535, false, c, false)), (8191, 57343));
/// assert_eq!(update(40000, false, Rule::spec(LTD), false), 7232);
/// ```
#[inline(always)]
pub fn update(w: u16, active: bool, rule: Rule, recruit: bool) -> u16 {
    if !rule.is_competitive() {
        return learn(w, active, rule.ltd());
    }
    let target: i32 = if active { 65535 } else { 0 };
    if recruit {
        return target as u16;
    }
    let w = w as i32;
    (w + ((target - w) >> rule.shift())) as u16
}

/// Running sums of one minicolumn over its active inputs: `s` = strong weights (`W ≥ 0.5`),
/// `k` = weak synapses (`W < 0.5`), `d` = all weights (the competitive rule's tie-break).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Σ of the strong weights on active inputs.
    pub s: u32,
    /// Number of active inputs on weak synapses.
    pub k: u32,
    /// Σ of every weight on active inputs.
    pub d: u32,
}

impl Tally {
    /// Adds one active input whose weight is `w`.
    ///
    /// ```
    /// use neurobits_core::cortical::rules::Tally;
    /// let mut t = Tally::default();
    /// t.add(40000);
    /// t.add(100);
    /// assert_eq!(t, Tally { s: 40000, k: 1, d: 40100 });
    /// ```
    #[inline(always)]
    pub fn add(&mut self, w: u16) {
        let strong = w >= STRONG;
        self.s += if strong { w as u32 } else { 0 };
        self.k += (!strong) as u32;
        self.d += w as u32;
    }
}

/// `w` if the synapse is connected (Eq. 5), else 0: the terms of `Ω`.
///
/// ```
/// use neurobits_core::cortical::rules::connected;
/// assert_eq!((connected(13107), connected(13108)), (0, 13108));
/// ```
#[inline(always)]
pub fn connected(w: u16) -> u32 {
    if w >= CONNECTED {
        w as u32
    } else {
        0
    }
}

/// `G = 20·S − (40·k + 19)·Ω = 20·65536·g` (Eq. 2 with `T = 19/20`), exact in `i64`.
/// The minicolumn fires by its own drive iff `G > 0` (D-3).
///
/// ```
/// use neurobits_core::cortical::rules::{drive, Tally};
/// // Untrained (Ω = 0): g = 0, f = 0.5 exactly, not firing.
/// assert_eq!(drive(Tally { s: 0, k: 3, d: 0 }, 0), 0);
/// // All connected mass active and strong: S = Ω, G = Ω > 0.
/// assert_eq!(drive(Tally { s: 65535, k: 0, d: 65535 }, 65535), 65535);
/// ```
#[inline(always)]
pub fn drive(t: Tally, omega: u32) -> i64 {
    20 * t.s as i64 - (40 * t.k as i64 + 19) * omega as i64
}

/// The WTA key of minicolumn `m` (D-4, spec §8): `G·2⁸ + (255 − m)` if it fires (by its own
/// drive or randomly), else [`NO_KEY`]. The largest key wins: the largest `G`, then the smallest
/// `m`; one integer max, so any reduction tree gives the same winner.
///
/// ```
/// use neurobits_core::cortical::rules::{key, winner, NO_KEY};
/// let keys = [key(5, 0, true), key(5, 1, true), key(9, 2, false)];
/// assert_eq!(winner(keys.into_iter().max().unwrap()), Some(0));
/// assert_eq!(winner(NO_KEY), None);
/// ```
#[inline(always)]
pub fn key(g: i64, m: usize, fires: bool) -> i64 {
    if fires {
        g * 256 + (255 - m as i64)
    } else {
        NO_KEY
    }
}

/// The minicolumn a maximal key names, `None` if no minicolumn fired.
#[inline(always)]
pub fn winner(key: i64) -> Option<usize> {
    if key == NO_KEY {
        None
    } else {
        Some(255 - (key & 255) as usize)
    }
}

/// Whether minicolumn `m` of hypercolumn `hc` fires at random at learning step `t` (D-7):
/// `rand_u32(FIRE, (t·N_HC + hc)·M + m) < P`. `fire_key` = `rng::key(seed, FIRE)`.
///
/// ```
/// use neurobits_core::cortical::{rng, rules::fires_randomly};
/// let k = rng::key(1, rng::FIRE);
/// let n = (0..100_000).filter(|&t| fires_randomly(k, t, 7, 3, 16, 5)).count();
/// assert!((800..1200).contains(&n)); // p = 0.01
/// ```
#[inline(always)]
pub fn fires_randomly(fire_key: u64, t: u64, n_hc: u64, hc: u64, m_count: usize, m: usize) -> bool {
    let counter = (t.wrapping_mul(n_hc).wrapping_add(hc)).wrapping_mul(m_count as u64).wrapping_add(m as u64);
    rand_u32(fire_key, counter) < FIRE_P
}

/// The winner's Hebbian update of one weight (D-6): LTP by α on an active input, LTD by `ltd`
/// (β, canonically [`LTD`]) on an inactive one, saturating in `[0, 65535]`.
///
/// ```
/// use neurobits_core::cortical::rules::{learn, LTD};
/// assert_eq!((learn(40000, true, LTD), learn(40000, false, LTD), learn(100, false, LTD)), (65535, 7232, 0));
/// ```
#[inline(always)]
pub fn learn(w: u16, active: bool, ltd: u16) -> u16 {
    if active {
        w.saturating_add(LTP)
    } else {
        w.saturating_sub(ltd)
    }
}

/// The winner's own-win counter after a win (D-8): one more if it won by its own drive, reset
/// by a random win. Random firing stays on while the result is below [`RF_STOP`].
///
/// ```
/// use neurobits_core::cortical::rules::count_win;
/// assert_eq!((count_win(4, true), count_win(4, false)), (5, 0));
/// ```
#[inline(always)]
pub fn count_win(cnt: u32, own: bool) -> u32 {
    if own {
        cnt.saturating_add(1)
    } else {
        0
    }
}

/// Initial weight `i` of minicolumn `m` of hypercolumn `hc` (D-9, uniform on [0, 0.01)):
/// `(rand_u32(INIT, (hc·M + m)·2M + i) · 655) >> 32`. `init_key` = `rng::key(seed, INIT)`.
///
/// ```
/// use neurobits_core::cortical::{rng, rules::initial_weight};
/// assert!(initial_weight(rng::key(1, rng::INIT), 3, 16, 2, 7) < 655);
/// ```
#[inline(always)]
pub fn initial_weight(init_key: u64, hc: u64, m_count: usize, m: usize, i: usize) -> u16 {
    let counter = (hc * m_count as u64 + m as u64) * 2 * m_count as u64 + i as u64;
    ((rand_u32(init_key, counter) as u64 * 655) >> 32) as u16
}

/// Weight `i` of minicolumn `m` of hypercolumn `hc` in the random-weights baseline network
/// (spec §11.5): uniform on [0, 1), the high 16 bits of `rand_u32(BASELINE, counter)` with the
/// counter of [`initial_weight`]. `baseline_key` = `rng::key(seed, BASELINE)`.
///
/// ```
/// use neurobits_core::cortical::{rng, rules::baseline_weight};
/// let k = rng::key(1, rng::BASELINE);
/// let strong = (0..1000).filter(|&i| baseline_weight(k, 0, 16, 0, i) >= 32768).count();
/// assert!((400..600).contains(&strong));
/// ```
#[inline(always)]
pub fn baseline_weight(baseline_key: u64, hc: u64, m_count: usize, m: usize, i: usize) -> u16 {
    let counter = (hc * m_count as u64 + m as u64) * 2 * m_count as u64 + i as u64;
    (rand_u32(baseline_key, counter) >> 16) as u16
}
