use crate::Word;

/// Maps `f32` to `u32` so that unsigned order is numeric order (`-0.0` counts as `+0.0`).
///
/// ```
/// use neurobits_core::flyhash::sort_key;
/// assert!(sort_key(-1.0) < sort_key(0.0) && sort_key(0.0) < sort_key(1e-30));
/// assert_eq!(sort_key(-0.0), sort_key(0.0));
/// ```
#[inline(always)]
pub fn sort_key(v: f32) -> u32 {
    let b = (v + 0.0).to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Calls `f(i, key(i))` for `i` in `0..m`, reading keys eight at a time before using them, so a
/// GPU thread keeps eight loads in flight instead of one.
#[inline(always)]
fn each_key(m: usize, key: &impl Fn(usize) -> u32, mut f: impl FnMut(usize, u32)) {
    let mut i = 0;
    while i + 8 <= m {
        let xs = [key(i), key(i + 1), key(i + 2), key(i + 3), key(i + 4), key(i + 5), key(i + 6), key(i + 7)];
        for (j, &x) in xs.iter().enumerate() {
            f(i + j, x);
        }
        i += 8;
    }
    while i < m {
        f(i, key(i));
        i += 1;
    }
}

/// The state of a radix select of the `k`-th largest key, one byte per pass from the top. Drivers
/// histogram the keys that [`RadixSelect::bin`] accepts (in any order, on any number of threads)
/// and call [`RadixSelect::advance`] with the counts, four times.
///
/// ```
/// use neurobits_core::flyhash::RadixSelect;
/// let keys = [5u32, 9, 7, 9, 1];
/// let mut st = RadixSelect::new(3);
/// while !st.done() {
///     let mut hist = [0u32; 256];
///     for &x in &keys { if let Some(b) = st.bin(x) { hist[b] += 1; } }
///     st.advance(&hist);
/// }
/// assert_eq!((st.threshold(), st.above()), (7, 2));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RadixSelect {
    prefix: u32,
    mask: u32,
    need: u32,
    above: u32,
    pass: u32,
}

impl RadixSelect {
    /// Selecting the `k`-th largest (`k ≥ 1`).
    pub const fn new(k: u32) -> Self {
        RadixSelect { prefix: 0, mask: 0, need: k, above: 0, pass: 0 }
    }

    /// Selecting the `k`-th largest of keys below 2¹⁶ (their top two bytes are zero, so two passes
    /// fix the rest): the select of [`Pixels4`](super::Pixels4) sums.
    ///
    /// ```
    /// use neurobits_core::flyhash::RadixSelect;
    /// let keys = [500u32, 9, 700, 9, 65_535];
    /// let mut st = RadixSelect::new16(4);
    /// while !st.done() {
    ///     let mut hist = [0u32; 256];
    ///     for &x in &keys { if let Some(b) = st.bin(x) { hist[b] += 1; } }
    ///     st.advance(&hist);
    /// }
    /// assert_eq!((st.threshold(), st.above(), st.ties()), (9, 3, 1));
    /// ```
    pub const fn new16(k: u32) -> Self {
        RadixSelect { prefix: 0, mask: 0xFFFF_0000, need: k, above: 0, pass: 2 }
    }

    /// Selecting the `k`-th largest of keys that all lie in `lo..=hi`: the bytes `lo` and `hi`
    /// share are fixed at once (fewer passes; when `lo == hi` none is left).
    ///
    /// ```
    /// use neurobits_core::flyhash::RadixSelect;
    /// let keys = [0x1234_5601u32, 0x1234_5680, 0x1234_56FF];
    /// let mut st = RadixSelect::within(2, 0x1234_5600, 0x1234_56FF);
    /// let mut passes = 0;
    /// while !st.done() {
    ///     let mut hist = [0u32; 256];
    ///     for &x in &keys { if let Some(b) = st.bin(x) { hist[b] += 1; } }
    ///     st.advance(&hist);
    ///     passes += 1;
    /// }
    /// assert_eq!((st.threshold(), passes), (0x1234_5680, 1));
    /// ```
    pub const fn within(k: u32, lo: u32, hi: u32) -> Self {
        let same = if lo == hi { 4 } else { (lo ^ hi).leading_zeros() / 8 };
        let mask = if same == 0 { 0 } else { u32::MAX << (32 - 8 * same) };
        RadixSelect { prefix: lo & mask, mask, need: k, above: 0, pass: same }
    }

    /// A finished select whose threshold is `t` with no key above it (every key at `t` wins).
    pub(crate) const fn finished(t: u32, ties: u32) -> Self {
        RadixSelect { prefix: t, mask: u32::MAX, need: ties, above: 0, pass: 4 }
    }

    /// Whether all four bytes are fixed.
    pub const fn done(&self) -> bool {
        self.pass == 4
    }

    /// The histogram bin of `x` in this pass, if `x` still matches the bytes fixed so far.
    #[inline(always)]
    pub const fn bin(&self, x: u32) -> Option<usize> {
        if x & self.mask == self.prefix {
            Some(((x >> (24 - 8 * self.pass)) & 0xFF) as usize)
        } else {
            None
        }
    }

    /// Fixes this pass's byte from the histogram of the matching keys.
    #[inline]
    pub fn advance(&mut self, hist: &[u32; 256]) {
        self.advance_with(|b| hist[b]);
    }

    /// [`advance`](Self::advance) with the histogram's bins read through `count` (a GPU thread
    /// whose histogram lives in shared memory, interleaved with other threads').
    ///
    /// ```
    /// use neurobits_core::flyhash::RadixSelect;
    /// let keys = [3u32, 700, 700, 2];
    /// let (mut a, mut b) = (RadixSelect::new16(2), RadixSelect::new16(2));
    /// let mut hist = [0u32; 256];
    /// keys.iter().filter_map(|&x| a.bin(x)).for_each(|h| hist[h] += 1);
    /// a.advance(&hist);
    /// b.advance_with(|h| hist[h]);
    /// assert_eq!(a, b);
    /// ```
    #[inline]
    pub fn advance_with(&mut self, count: impl Fn(usize) -> u32) {
        let shift = 24 - 8 * self.pass;
        let mut b = 255usize;
        let mut n = count(b);
        while n < self.need && b > 0 {
            self.need -= n;
            self.above += n;
            b -= 1;
            n = count(b);
        }
        self.prefix |= (b as u32) << shift;
        self.mask |= 0xFF << shift;
        self.pass += 1;
    }

    /// The `k`-th largest key (when [`done`](Self::done)).
    pub const fn threshold(&self) -> u32 {
        self.prefix
    }

    /// How many keys are strictly greater than the threshold.
    pub const fn above(&self) -> u32 {
        self.above
    }

    /// How many keys equal to the threshold are winners (the lowest-index ones).
    pub const fn ties(&self) -> u32 {
        self.need
    }
}

/// Radix select of the `k`-th largest of `m` keys (`1 ≤ k ≤ m`) on one thread: returns the
/// threshold key `t` and how many keys are strictly greater. The winners are those keys plus the
/// lowest-index `k − above` keys equal to `t`.
///
/// ```
/// use neurobits_core::flyhash::kth_largest;
/// let keys = [5u32, 9, 7, 9, 1];
/// assert_eq!(kth_largest(5, 2, |i| keys[i], &mut [0; 256]), (9, 0));
/// assert_eq!(kth_largest(5, 3, |i| keys[i], &mut [0; 256]), (7, 2));
/// ```
#[inline]
pub fn kth_largest(m: usize, k: usize, key: impl Fn(usize) -> u32, hist: &mut [u32; 256]) -> (u32, usize) {
    let mut st = RadixSelect::new(k as u32);
    while !st.done() {
        for h in hist.iter_mut() {
            *h = 0;
        }
        each_key(m, &key, |_, x| {
            if let Some(b) = st.bin(x) {
                hist[b] += 1;
            }
        });
        st.advance(hist);
    }
    (st.threshold(), st.above() as usize)
}

/// Calls `win(i)` for each winner, in index order: keys above `t`, and the first `k − above`
/// keys equal to `t`.
#[inline]
pub fn select(m: usize, k: usize, key: impl Fn(usize) -> u32, t: u32, above: usize, win: impl FnMut(usize)) {
    select_range(0, m, key, t, k - above, win);
}

/// [`select`] over the indices `start..end` only, given how many ties at `t` may still win
/// (`ties`: the winning ties minus those in earlier indices). Returns the ties left over.
#[inline]
pub fn select_range(
    start: usize,
    end: usize,
    key: impl Fn(usize) -> u32,
    t: u32,
    ties: usize,
    mut win: impl FnMut(usize),
) -> usize {
    let mut ties = ties;
    each_key(end - start, &|j| key(start + j), |j, x| {
        if x > t || (x == t && ties > 0) {
            if x == t {
                ties -= 1;
            }
            win(start + j);
        }
    });
    ties
}

/// The winning ties at `t` left for a chunk of indices, given the [`RadixSelect::ties`] of the
/// whole input and the count of keys equal to `t` in every earlier chunk: how drivers that split
/// the outputs over threads keep the lowest-index tie rule.
///
/// ```
/// use neurobits_core::flyhash::ties_left;
/// // 3 winning ties; the two earlier chunks hold 1 and 4 keys at the threshold.
/// assert_eq!(ties_left(3, [1u32].into_iter()), 2);
/// assert_eq!(ties_left(3, [1u32, 4].into_iter()), 0);
/// ```
#[inline]
pub fn ties_left(ties: u32, earlier_chunk_ties: impl Iterator<Item = u32>) -> usize {
    let mut before = 0u32;
    for n in earlier_chunk_ties {
        before = before.saturating_add(n);
    }
    ties.saturating_sub(before) as usize
}

/// Exact winner-take-all of `m` values into a bit-packed code (`out`: `⌈m/64⌉` words): exactly `k`
/// ones, larger value first, then lower index.
///
/// ```
/// use neurobits_core::flyhash::{sort_key, wta_pack};
/// let v = [0.5f32, 2.0, 2.0, 2.0, -1.0];
/// let mut code = [0u64];
/// wta_pack(5, 2, |i| sort_key(v[i]), &mut [0; 256], &mut code);
/// assert_eq!(code[0], 0b00110); // ties at 2.0: the two lowest indices
/// ```
#[inline]
pub fn wta_pack(m: usize, k: usize, key: impl Fn(usize) -> u32, hist: &mut [u32; 256], out: &mut [Word]) {
    let (t, above) = kth_largest(m, k, &key, hist);
    for o in out.iter_mut() {
        *o = 0;
    }
    select(m, k, key, t, above, |i| out[i / 64] |= 1 << (i % 64));
}

/// [`wta_pack`] over keys already in memory, with the same [`RadixSelect`] passes but fewer
/// reads: the second pass also collects the indices of the keys that still match (`cand`, at
/// least `m` long), and the third and fourth passes and the ties read only those; the keys above
/// the threshold are packed by one comparison pass. Same winners as [`wta_pack`]: the passes fix
/// the same bytes from the same counts.
///
/// ```
/// use neurobits_core::flyhash::{wta_pack, wta_pack_keys};
/// let keys = [5u32, 9, 7, 9, 1, 7, 7];
/// let (mut a, mut b) = ([0u64; 1], [0u64; 1]);
/// wta_pack(7, 4, |i| keys[i], &mut [0; 256], &mut a);
/// wta_pack_keys(&keys, 4, &mut [0; 256], &mut [0; 7], &mut b);
/// assert_eq!((a, b), ([0b0101110], [0b0101110])); // 9, 9, then the first two 7s
/// ```
#[inline]
pub fn wta_pack_keys(keys: &[u32], k: usize, hist: &mut [u32; 256], cand: &mut [u32], out: &mut [Word]) {
    let mut st = RadixSelect::new(k as u32);
    // Activations crowd into a few bins, so one histogram would make each increment wait for the
    // previous one to the same bin; four interleaved histograms, summed, break that chain.
    let mut h4 = [[0u32; 256]; 4];
    let sum = |h4: &[[u32; 256]; 4], hist: &mut [u32; 256]| {
        for (b, h) in hist.iter_mut().enumerate() {
            *h = h4[0][b] + h4[1][b] + h4[2][b] + h4[3][b];
        }
    };
    // Pass 1: every key.
    let mut quads = keys.chunks_exact(4);
    for q in &mut quads {
        for (h, &x) in h4.iter_mut().zip(q) {
            h[(x >> 24) as usize] += 1;
        }
    }
    for &x in quads.remainder() {
        h4[0][(x >> 24) as usize] += 1;
    }
    sum(&h4, hist);
    st.advance(hist);
    // Pass 2: every key, keeping (branch-free) the indices of those that match the first byte.
    h4 = [[0; 256]; 4];
    let mut n = 0;
    for (i, &x) in keys.iter().enumerate() {
        let (hit, b) = match st.bin(x) {
            Some(b) => (1, b),
            None => (0, 0),
        };
        h4[i % 4][b] += hit;
        cand[n] = i as u32;
        n += hit as usize;
    }
    sum(&h4, hist);
    st.advance(hist);
    // Passes 3 and 4: the candidates only, narrowed again after pass 3.
    while !st.done() {
        *hist = [0; 256];
        let mut kept = 0;
        for j in 0..n {
            let i = cand[j];
            if let Some(b) = st.bin(keys[i as usize]) {
                hist[b] += 1;
                cand[kept] = i;
                kept += 1;
            }
        }
        n = kept;
        st.advance(hist);
    }
    let (t, mut ties) = (st.threshold(), st.ties());
    out.fill(0);
    // Keys above t, 64 per word (a compare the compiler vectorizes).
    for (w, chunk) in out.iter_mut().zip(keys.chunks(64)) {
        let mut bits = 0u64;
        for (j, &x) in chunk.iter().enumerate() {
            bits |= ((x > t) as u64) << j;
        }
        *w = bits;
    }
    // The lowest-index ties: every key equal to t is among the candidates, in index order.
    for &i in &cand[..n] {
        if ties == 0 {
            break;
        }
        if keys[i as usize] == t {
            out[i as usize / 64] |= 1 << (i % 64);
            ties -= 1;
        }
    }
}

/// The 64-step bisection of da Cunha et al. (2023, Algorithm 2) for one column: returns `mid`;
/// the paper's winners are the values `> mid`, which can number more or fewer than `k` (ties,
/// rounding). `eps` is the paper's margin around the minimum and maximum.
///
/// ```
/// use neurobits_core::flyhash::bisect64;
/// let v = [1.0f32, 3.0, 3.0, 0.0];
/// let mid = bisect64(4, 1, |i| v[i], 1e-3);
/// assert_ne!(v.iter().filter(|&&x| x > mid).count(), 1); // a tie at the top: never exactly 1
/// ```
#[inline]
pub fn bisect64(m: usize, k: usize, value: impl Fn(usize) -> f32, eps: f32) -> f32 {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for i in 0..m {
        let x = value(i);
        lo = if x < lo { x } else { lo };
        hi = if x > hi { x } else { hi };
    }
    let (mut lb, mut ub) = (lo - eps, hi + eps);
    let mut mid = (lb + ub) / 2.0;
    for _ in 0..64 {
        let mut tot = 0usize;
        for i in 0..m {
            tot += (value(i) > mid) as usize;
        }
        if tot > k {
            lb = mid;
        }
        if tot < k {
            ub = mid;
        }
        mid = (lb + ub) / 2.0;
    }
    mid
}

/// The bisection's winners, bit-packed: output `r` is set iff `value(r) > mid` (`out`: `⌈m/64⌉`
/// words).
///
/// ```
/// let v = [1.0f32, 3.0, 2.0];
/// let mut out = [0u64];
/// neurobits_core::flyhash::pack_above(3, |i| v[i], 1.5, &mut out);
/// assert_eq!(out[0], 0b110);
/// ```
#[inline]
pub fn pack_above(m: usize, value: impl Fn(usize) -> f32, mid: f32, out: &mut [Word]) {
    for (w, word) in out.iter_mut().enumerate() {
        let mut x = 0;
        for bit in 0..64.min(m - w * 64) {
            x |= ((value(w * 64 + bit) > mid) as Word) << bit;
        }
        *word = x;
    }
}
