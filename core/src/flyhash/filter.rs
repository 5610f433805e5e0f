//! The filtered exact winner-take-all: when the `m` activations of an input are too many to keep
//! (the GPU's `f32` path: 512 KiB per input at `m = 131 072`, more than an SM's shared memory), a
//! sample of rows brackets the threshold in a key interval, one pass classifies every activation
//! against it — above: a winner, below: a loser, inside: a candidate kept with its row — and the
//! winners still missing are the best candidates. The result is [`wta_pack`](super::wta_pack)'s,
//! bit for bit, whatever the interval: [`FilterCounts::need`] says when the pass cannot decide
//! (too many above, too few above and inside, candidates past their buffer) and the driver then
//! takes the unfiltered path for that input.
//!
//! Rows are independent draws of the projection (each row's indices come from its own PRNG
//! draws), so one input's activations are independent and identically distributed given the
//! input, and the sample's order statistics bracket the population's `k`-th largest with a
//! distribution-free binomial probability ([`sample_ranks`]).

use super::RadixSelect;

/// Key interval `lo..=hi` that should hold an input's threshold key.
///
/// ```
/// use neurobits_core::flyhash::{KeyClass, KeyInterval};
/// let iv = KeyInterval { lo: 10, hi: 20 };
/// assert_eq!([iv.class(21), iv.class(20), iv.class(10), iv.class(9)],
///            [KeyClass::Above, KeyClass::Inside, KeyClass::Inside, KeyClass::Below]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct KeyInterval {
    /// Lowest candidate key.
    pub lo: u32,
    /// Highest candidate key; keys above it are winners.
    pub hi: u32,
}

/// Where a key falls against a [`KeyInterval`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyClass {
    /// Above `hi`: a winner (when the counts check out).
    Above,
    /// In `lo..=hi`: a candidate.
    Inside,
    /// Below `lo`: a loser.
    Below,
}

impl KeyInterval {
    /// The class of key `x`.
    #[inline(always)]
    pub const fn class(&self, x: u32) -> KeyClass {
        if x > self.hi {
            KeyClass::Above
        } else if x >= self.lo {
            KeyClass::Inside
        } else {
            KeyClass::Below
        }
    }
}

/// The descending ranks (1-based) of the sample keys that bound the threshold: the interval is
/// `[key of rank r_lo, key of rank r_hi]` of `n` sample keys for the `k`-th largest of `m`.
/// `r_hi = 0` means no upper bound (`hi = u32::MAX`), `r_lo > n` no lower bound (`lo = 0`).
///
/// The sample's count above the population threshold is binomial(`n`, `k/m`); the ranks sit
/// six standard deviations (plus one) either side of its mean, so the threshold escapes the
/// interval with probability below 10⁻⁸ per input, for any distribution of the activations.
///
/// ```
/// use neurobits_core::flyhash::sample_ranks;
/// assert_eq!(sample_ranks(131_072, 6_554, 4_096), (119, 289));
/// assert_eq!(sample_ranks(1_000, 10, 100), (0, 9)); // the mean (1) is within the margin
/// ```
pub const fn sample_ranks(m: u32, k: u32, n: u32) -> (u32, u32) {
    let (m, k, n) = (m as u64, k as u64, n as u64);
    let mean = n * k / m;
    // Variance n·f·(1 − f), f = k/m, rounded up; 36 · var under the root: six deviations.
    let var36 = (36 * n * k * (m - k)).div_ceil(m * m);
    let delta = var36.isqrt() + 2;
    let hi = mean.saturating_sub(delta);
    let lo = mean + delta;
    (hi as u32, if lo > n { n as u32 + 1 } else { lo as u32 })
}

/// A candidate packed for [`RadixSelect64`]: key in the high half, `!row` in the low half, so
/// that a larger packed value is the better one (larger key, then lower row) and no two rows
/// tie.
///
/// ```
/// use neurobits_core::flyhash::candidate;
/// assert!(candidate(7, 3) > candidate(7, 4) && candidate(8, 9) > candidate(7, 3));
/// ```
#[inline(always)]
pub const fn candidate(key: u32, row: u32) -> u64 {
    (key as u64) << 32 | !row as u64
}

/// The row of a packed [`candidate`].
///
/// ```
/// assert_eq!(neurobits_core::flyhash::candidate_row(neurobits_core::flyhash::candidate(7, 3)), 3);
/// ```
#[inline(always)]
pub const fn candidate_row(c: u64) -> u32 {
    !(c as u32)
}

/// Radix select of the `k`-th largest of distinct 64-bit values (packed [`candidate`]s): the
/// high halves first ([`RadixSelect`] over the keys), then the low halves of the values whose
/// key is the threshold key, for the ties that win. Winners are the values `≥` the threshold.
/// Drivers histogram what [`bin`](Self::bin) accepts and call
/// [`advance_with`](Self::advance_with), as for [`RadixSelect`] (eight passes).
///
/// ```
/// use neurobits_core::flyhash::{candidate, RadixSelect64};
/// let c = [candidate(5, 0), candidate(9, 1), candidate(7, 2), candidate(7, 3), candidate(7, 4)];
/// let mut st = RadixSelect64::new(3);
/// while !st.done() {
///     let mut hist = [0u32; 256];
///     c.iter().filter_map(|&x| st.bin(x)).for_each(|b| hist[b] += 1);
///     st.advance_with(|b| hist[b]);
/// }
/// assert_eq!(st.threshold(), candidate(7, 3)); // 9, then the ties at 7 of rows 2 and 3
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct RadixSelect64 {
    hi: RadixSelect,
    lo: RadixSelect,
}

impl RadixSelect64 {
    /// Selecting the `k`-th largest (`k ≥ 1`).
    pub const fn new(k: u32) -> Self {
        RadixSelect64 { hi: RadixSelect::new(k), lo: RadixSelect::new(1) }
    }

    /// Selecting the `k`-th largest of candidates whose keys all lie in `lo..=hi` (an input's
    /// [`KeyInterval`]): the bytes the two share are fixed at once.
    ///
    /// ```
    /// use neurobits_core::flyhash::{candidate, RadixSelect64};
    /// let c = [candidate(0x500, 0), candidate(0x5FF, 1), candidate(0x580, 2)];
    /// let mut st = RadixSelect64::within(2, 0x500, 0x5FF);
    /// while !st.done() {
    ///     let mut hist = [0u32; 256];
    ///     c.iter().filter_map(|&x| st.bin(x)).for_each(|b| hist[b] += 1);
    ///     st.advance_with(|b| hist[b]);
    /// }
    /// assert_eq!(st.threshold() >> 32, 0x580);
    /// ```
    pub const fn within(k: u32, lo: u32, hi: u32) -> Self {
        let hi_sel = RadixSelect::within(k, lo, hi);
        // All keys equal: the ties are chosen by row.
        let lo_sel = if hi_sel.done() { RadixSelect::new(k) } else { RadixSelect::new(1) };
        RadixSelect64 { hi: hi_sel, lo: lo_sel }
    }

    /// Whether all eight bytes are fixed.
    pub const fn done(&self) -> bool {
        self.lo.done()
    }

    /// The histogram bin of `x` in this pass, if `x` still matches the bytes fixed so far.
    #[inline(always)]
    pub const fn bin(&self, x: u64) -> Option<usize> {
        if !self.hi.done() {
            self.hi.bin((x >> 32) as u32)
        } else if (x >> 32) as u32 == self.hi.threshold() {
            self.lo.bin(x as u32)
        } else {
            None
        }
    }

    /// Fixes this pass's byte from the histogram of the accepted values.
    #[inline]
    pub fn advance_with(&mut self, count: impl Fn(usize) -> u32) {
        if !self.hi.done() {
            self.hi.advance_with(&count);
            if self.hi.done() {
                // The last pass counted the keys equal to the threshold: when all of them win,
                // no row needs comparing (the usual case for continuous values).
                let (t, ties) = (self.hi.threshold(), self.hi.ties());
                self.lo = if count((t & 0xFF) as usize) == ties {
                    RadixSelect::finished(0, ties)
                } else {
                    RadixSelect::new(ties)
                };
            }
        } else {
            self.lo.advance_with(count);
        }
    }

    /// The `k`-th largest value (when [`done`](Self::done)).
    pub const fn threshold(&self) -> u64 {
        (self.hi.threshold() as u64) << 32 | self.lo.threshold() as u64
    }
}

/// An input's counts after the classifying pass, and what they leave to select.
///
/// ```
/// use neurobits_core::flyhash::FilterCounts;
/// let c = FilterCounts { above: 40, inside: 30, stored: 30 };
/// assert_eq!((c.need(50), c.need(30), c.need(80)), (Some(10), None, None));
/// assert_eq!(FilterCounts { above: 40, inside: 30, stored: 20 }.need(50), None); // not all stored
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterCounts {
    /// Keys above the interval.
    pub above: u32,
    /// Keys inside it.
    pub inside: u32,
    /// Candidates kept (at most the buffer's capacity).
    pub stored: u32,
}

impl FilterCounts {
    /// How many candidates win, or `None` when the pass cannot decide the `k` winners: more than
    /// `k` keys above the interval, fewer than `k` above or inside, or candidates not all kept.
    pub const fn need(&self, k: u32) -> Option<u32> {
        if self.above > k || (self.above as u64 + self.inside as u64) < k as u64 || self.stored != self.inside {
            None
        } else {
            Some(k - self.above)
        }
    }
}

/// The filtered exact WTA of one input on one thread, the reference the GPU path is tested
/// against: `keys` are the `m` activation keys; the first `sample` of them give the interval
/// (ranks of [`sample_ranks`]); candidates go to `cand` (its length is the capacity). Writes the
/// code into `out` (`⌈m/64⌉` words, cleared here) and returns `false`, with `out` undefined,
/// when the pass cannot decide ([`FilterCounts::need`]).
///
/// ```
/// use neurobits_core::flyhash::{wta_pack, wta_pack_filtered};
/// let keys: Vec<u32> = (0..1000u32).map(|i| i.wrapping_mul(2_654_435_761) >> 22).collect();
/// let (mut a, mut b) = ([0u64; 16], [0u64; 16]);
/// wta_pack(1000, 50, |i| keys[i], &mut [0; 256], &mut a);
/// assert!(wta_pack_filtered(&keys, 50, 200, &mut [0; 256], &mut [0; 400], &mut b));
/// assert_eq!(a, b);
/// ```
pub fn wta_pack_filtered(
    keys: &[u32],
    k: usize,
    sample: usize,
    hist: &mut [u32; 256],
    cand: &mut [u64],
    out: &mut [crate::Word],
) -> bool {
    let m = keys.len();
    let iv = sample_interval(&keys[..sample], m as u32, k as u32, hist);
    out.iter_mut().for_each(|w| *w = 0);
    let mut c = FilterCounts::default();
    for (r, &x) in keys.iter().enumerate() {
        match iv.class(x) {
            KeyClass::Above => {
                c.above += 1;
                out[r / 64] |= 1 << (r % 64);
            }
            KeyClass::Inside => {
                if let Some(slot) = cand.get_mut(c.inside as usize) {
                    *slot = candidate(x, r as u32);
                    c.stored += 1;
                }
                c.inside += 1;
            }
            KeyClass::Below => {}
        }
    }
    let Some(need) = c.need(k as u32) else { return false };
    let cand = &cand[..c.stored as usize];
    if need > 0 {
        let mut st = RadixSelect64::within(need, iv.lo, iv.hi);
        while !st.done() {
            hist.iter_mut().for_each(|h| *h = 0);
            cand.iter().filter_map(|&x| st.bin(x)).for_each(|b| hist[b] += 1);
            st.advance_with(|b| hist[b]);
        }
        for &x in cand.iter().filter(|&&x| x >= st.threshold()) {
            let r = candidate_row(x) as usize;
            out[r / 64] |= 1 << (r % 64);
        }
    }
    true
}

/// The interval of one input from its `sample` keys (of `m` activations, `k` winners): the keys
/// of the [`sample_ranks`] found by two radix selects ([`SampleSelect`]).
///
/// ```
/// use neurobits_core::flyhash::{sample_interval, KeyInterval};
/// let keys: Vec<u32> = (0..100).collect();
/// assert_eq!(sample_interval(&keys, 10_000, 5_000, &mut [0; 256]), KeyInterval { lo: 18, hi: 82 });
/// ```
pub fn sample_interval(sample: &[u32], m: u32, k: u32, hist: &mut [u32; 256]) -> KeyInterval {
    let mut sel = SampleSelect::new(m, k, sample.len() as u32);
    while !sel.done() {
        for side in 0..2 {
            hist.iter_mut().for_each(|h| *h = 0);
            sample.iter().filter_map(|&x| sel.bin(side, x)).for_each(|b| hist[b] += 1);
            sel.advance_with(side, |b| hist[b]);
        }
    }
    sel.interval()
}

/// The two radix selects of the sample ranks ([`sample_ranks`]), side 0 for `hi`, side 1 for
/// `lo`, advanced together pass by pass (a GPU block histograms both sides in one read).
///
/// ```
/// use neurobits_core::flyhash::{KeyInterval, SampleSelect};
/// let keys: Vec<u32> = (0..100).collect();
/// let mut sel = SampleSelect::new(10_000, 5_000, 100);
/// while !sel.done() {
///     let mut hist = [[0u32; 256]; 2];
///     for side in 0..2 {
///         keys.iter().filter_map(|&x| sel.bin(side, x)).for_each(|b| hist[side][b] += 1);
///     }
///     for side in 0..2 { sel.advance_with(side, |b| hist[side][b]); }
/// }
/// assert_eq!(sel.interval(), KeyInterval { lo: 18, hi: 82 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleSelect {
    sel: [RadixSelect; 2],
    n: u32,
    r_hi: u32,
    r_lo: u32,
}

impl SampleSelect {
    /// The selects for `n` sample keys of an input with `m` activations and `k` winners.
    pub const fn new(m: u32, k: u32, n: u32) -> Self {
        let (r_hi, r_lo) = sample_ranks(m, k, n);
        let lo_rank = if r_lo < n { r_lo } else { n };
        SampleSelect {
            sel: [
                RadixSelect::new(if r_hi > 1 { r_hi } else { 1 }),
                RadixSelect::new(if lo_rank > 1 { lo_rank } else { 1 }),
            ],
            n,
            r_hi,
            r_lo,
        }
    }

    /// Whether both selects are finished.
    pub const fn done(&self) -> bool {
        self.sel[0].done() && self.sel[1].done()
    }

    /// Side `side`'s histogram bin of `x` in this pass.
    #[inline(always)]
    pub const fn bin(&self, side: usize, x: u32) -> Option<usize> {
        self.sel[side].bin(x)
    }

    /// Fixes side `side`'s byte of this pass.
    #[inline]
    pub fn advance_with(&mut self, side: usize, count: impl Fn(usize) -> u32) {
        self.sel[side].advance_with(count);
    }

    /// The interval (when [`done`](Self::done)): a rank outside the sample leaves that side open.
    pub const fn interval(&self) -> KeyInterval {
        KeyInterval {
            lo: if self.r_lo > self.n || self.n == 0 { 0 } else { self.sel[1].threshold() },
            hi: if self.r_hi == 0 || self.n == 0 { u32::MAX } else { self.sel[0].threshold() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flyhash::{activation, projection_row, sort_key, wta_pack, FlyParams};
    use crate::prng::{draw, stream_key};

    /// Filtered = unfiltered on real activations (uniform inputs, pixel-like inputs with many
    /// ties), and an undecidable pass is reported, never a wrong code.
    #[test]
    fn filtered_equals_unfiltered_or_says_so() {
        let p = FlyParams::new(64, 4096, 12, 205, 5).unwrap();
        let key = stream_key(3, 2);
        let mut row = [0u32; 12];
        let (mut decided, mut undecided) = (0, 0);
        for (t, levels) in [0u64, 0, 4, 2, 1].into_iter().enumerate() {
            let x: [f32; 64] = core::array::from_fn(|j| {
                let v = draw(key, (t * 64 + j) as u64);
                if levels == 0 {
                    (v >> 40) as f32 / (1u64 << 24) as f32
                } else {
                    (v % levels) as f32
                }
            });
            let keys: [u32; 4096] = core::array::from_fn(|r| {
                projection_row(&p, r as u32, &mut row);
                sort_key(activation(&row, &x))
            });
            let mut a = [0u64; 64];
            wta_pack(4096, 205, |r| keys[r], &mut [0; 256], &mut a);
            for cap in [4096usize, 400, 10] {
                let mut b = [0u64; 64];
                let mut cand = [0u64; 4096];
                if wta_pack_filtered(&keys, 205, 1024, &mut [0; 256], &mut cand[..cap], &mut b) {
                    assert_eq!(a, b, "input {t}, capacity {cap}");
                    decided += 1;
                } else {
                    undecided += 1;
                }
            }
        }
        // The full buffer always decides; a tiny one cannot.
        assert!(decided >= 5 && undecided >= 5, "{decided} decided, {undecided} not");
    }

    /// A deliberately wrong interval is caught by the counts.
    #[test]
    fn counts_catch_a_wrong_interval() {
        let keys: [u32; 100] = core::array::from_fn(|i| i as u32);
        // k = 10: the threshold key is 90. Interval 95..=99: only 4 above + 5 inside < 10.
        let c = FilterCounts { above: 0, inside: 5, stored: 5 };
        assert_eq!(c.need(10), None);
        let iv = KeyInterval { lo: 95, hi: 98 };
        assert_eq!(keys.iter().filter(|&&x| iv.class(x) == KeyClass::Above).count(), 1);
        // 50 above: more than k.
        assert_eq!(FilterCounts { above: 50, inside: 0, stored: 0 }.need(10), None);
    }
}
