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

/// Radix select of the `k`-th largest of `m` keys (`1 ≤ k ≤ m`): returns the threshold key `t`
/// and how many keys are strictly greater than `t`. The winners are those keys plus the
/// lowest-index `k − above` keys equal to `t`. Four passes over the keys, one byte each, with a
/// 256-bin histogram.
///
/// ```
/// use neurobits_core::flyhash::kth_largest;
/// let keys = [5u32, 9, 7, 9, 1];
/// assert_eq!(kth_largest(5, 2, |i| keys[i], &mut [0; 256]), (9, 0));
/// assert_eq!(kth_largest(5, 3, |i| keys[i], &mut [0; 256]), (7, 2));
/// ```
#[inline]
pub fn kth_largest(m: usize, k: usize, key: impl Fn(usize) -> u32, hist: &mut [u32; 256]) -> (u32, usize) {
    let (mut prefix, mut mask, mut need, mut above) = (0u32, 0u32, k, 0usize);
    for shift in [24u32, 16, 8, 0] {
        for h in hist.iter_mut() {
            *h = 0;
        }
        for i in 0..m {
            let x = key(i);
            if x & mask == prefix {
                hist[((x >> shift) & 0xFF) as usize] += 1;
            }
        }
        let mut b = 255usize;
        while (hist[b] as usize) < need && b > 0 {
            need -= hist[b] as usize;
            above += hist[b] as usize;
            b -= 1;
        }
        prefix |= (b as u32) << shift;
        mask |= 0xFF << shift;
    }
    (prefix, above)
}

/// Calls `win(i)` for each winner, in index order: keys above `t`, and the first `k − above`
/// keys equal to `t`.
#[inline]
pub fn select(m: usize, k: usize, key: impl Fn(usize) -> u32, t: u32, above: usize, mut win: impl FnMut(usize)) {
    let mut ties = k - above;
    for i in 0..m {
        let x = key(i);
        if x > t || (x == t && ties > 0) {
            if x == t {
                ties -= 1;
            }
            win(i);
        }
    }
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
