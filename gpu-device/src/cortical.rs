//! Cortical kernels: one warp per hypercolumn over the core's rules (`neurobits_core::cortical`;
//! layouts on the argument structs in its `kernels`). Lane `l` tallies minicolumns
//! `l·g … l·g + g − 1` (`g = ⌈M/32⌉`, contiguous so that M = 64 and 128 read a row with one 4- or
//! 8-byte load per lane: the paper's striped, coalesced layout), the warp takes the maximum of the
//! integer WTA keys by shuffles, and the winner's row is learnt lane-parallel.

use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::bits::set_bits;
use neurobits_core::cortical::kernels::{Columns, Init, Queue, ALL_LEVELS};
use neurobits_core::cortical::rules::{connected, initial_weight, update, winner, Rule, Tally, NO_KEY};
use neurobits_core::cortical::{bit, minicolumn_key, parent_input, settle, Input, StepCtx};
use neurobits_core::kernel::{DevMut, DevPtr};

use crate::{from_lane0, gid, grid_threads, kernel, lane, split, warp_reduce, xor_lane, xor_lane64};

/// Level and index in the level of hypercolumn `hc`.
#[inline(always)]
fn locate(levels: u32, hc: usize) -> (usize, usize) {
    let top = 1usize << levels;
    let mut l = 0;
    while hc >= top - (top >> (l + 1)) {
        l += 1;
    }
    (l, hc - (top - (top >> l)))
}

/// First id of level `l`.
#[inline(always)]
fn offset(levels: u32, l: usize) -> usize {
    (1usize << levels) - (1usize << (levels as usize - l))
}

/// Bottom hypercolumn `j`'s input.
///
/// # Safety
/// `x` holds `input_words` words per bottom hypercolumn.
#[inline(always)]
unsafe fn bottom(x: DevPtr<u64>, m: usize, j: usize) -> Input {
    let nw = (2 * m).div_ceil(64);
    let mut xin = [0u64; 4];
    for (k, v) in xin.iter_mut().enumerate().take(nw) {
        *v = unsafe { *x.0.add(j * nw + k) };
    }
    xin
}

/// Lane `l`'s `g` weights of row `row` (minicolumns `l·g …`), wide loads where they fit.
///
/// # Safety
/// `row` points to an `M`-weight row, 8-byte aligned (rows of `M = 64, 128` are).
#[inline(always)]
unsafe fn lane_weights(row: *const u16, base: usize, g: usize, m: usize) -> [u16; 4] {
    let mut v = [0u16; 4];
    unsafe {
        match g {
            4 => {
                let q = *(row.add(base) as *const u64);
                v = [q as u16, (q >> 16) as u16, (q >> 32) as u16, (q >> 48) as u16];
            }
            2 => {
                let q = *(row.add(base) as *const u32);
                v[0] = q as u16;
                v[1] = (q >> 16) as u16;
            }
            _ => {
                for (c, x) in v.iter_mut().enumerate().take(g) {
                    if base + c < m {
                        *x = *row.add(base + c);
                    }
                }
            }
        }
    }
    v
}

/// The hypercolumn state a warp works on.
#[derive(Clone, Copy)]
struct State {
    w: DevMut<u16>,
    omega: DevMut<u32>,
    cnt: DevMut<u32>,
    rf: DevMut<u8>,
}

/// One hypercolumn's step by the whole warp (the core's `column_step`, lane-parallel): network
/// id `hc` (random firing), state in slot `slot`. `publish(winner)` runs on lane 0 after the WTA
/// and before learning (the work queue signals the parent there, as Algorithm 1 does).
///
/// # Safety
/// The buffers of `s` hold slot `slot`; all 32 lanes call it with the same arguments.
#[inline(always)]
unsafe fn column(hc: usize, slot: usize, xin: &Input, ctx: &StepCtx, s: State, publish: impl FnOnce(i32)) {
    let m = ctx.m;
    let (ln, g) = (lane(), m.div_ceil(32));
    let base = ln * g;
    if xin.iter().all(|&w| w == 0) {
        if ln == 0 {
            publish(-1);
        }
        return;
    }
    let wc = unsafe { s.w.0.add(slot * 2 * m * m) };
    let mut tally = [Tally::default(); 4];
    for (wi, &word) in xin.iter().enumerate() {
        for b in set_bits(word) {
            let i = wi * 64 + b;
            let v = unsafe { lane_weights(wc.add(i * m), base, g, m) };
            for c in 0..g {
                tally[c].add(v[c]);
            }
        }
    }
    let mut best = NO_KEY;
    for (c, t) in tally.iter().enumerate().take(g) {
        let mm = base + c;
        if mm < m {
            let (om, rf) = unsafe { (*s.omega.0.add(slot * m + mm), *s.rf.0.add(slot * m + mm)) };
            best = best.max(minicolumn_key(*t, om, rf, ctx, hc as u64, mm));
        }
    }
    let best = warp_reduce(best, |k, d| xor_lane64(k as u64, d) as i64, i64::max);
    let win = winner(best);
    if ln == 0 {
        publish(win.map_or(-1, |w| w as i32));
    }
    let Some(wn) = win else { return };
    if ctx.learn {
        // Lane `ln` learns inputs ln, ln + 32, … (≤ 8 of them): every load is issued before the
        // first store, so the warp waits for memory once rather than once per input.
        let mut row = [0u16; 8];
        let mut i = ln;
        let mut c = 0;
        while i < 2 * m {
            row[c] = unsafe { *wc.add(i * m + wn) };
            i += 32;
            c += 1;
        }
        // Every lane reads the winner's Ω before lane 0 rewrites it (after the reduction below).
        let recruit = unsafe { *s.omega.0.add(slot * m + wn) } == 0;
        let mut om = 0u32;
        let (mut i, mut c) = (ln, 0);
        while i < 2 * m {
            let v = update(row[c], bit(xin, i), ctx.rule, recruit);
            unsafe { *wc.add(i * m + wn) = v };
            om += connected(v);
            i += 32;
            c += 1;
        }
        let om = warp_reduce(om, xor_lane, |a, b| a + b);
        if ln == 0 {
            unsafe {
                let k = slot * m + wn;
                *s.omega.0.add(k) = om;
                let (c, r) = settle(*s.cnt.0.add(k), *s.rf.0.add(k), best);
                *s.cnt.0.add(k) = c;
                *s.rf.0.add(k) = r;
            }
        }
    }
}

kernel! {
    /// One warp per hypercolumn of a span (or of `first … first + count − 1`, every level).
    fn cortical_columns(a: Columns {
        levels: u32,
        m: u32,
        level: u32,
        first: u32,
        count: u32,
        slot: u32,
        out: u32,
        child: u32,
        learn: u32,
        rule: u32,
        t: u64,
        fire_key: u64,
        x: DevPtr<u64>,
        src: DevPtr<i32>,
        w: DevMut<u16>,
        omega: DevMut<u32>,
        cnt: DevMut<u32>,
        rf: DevMut<u8>,
        dst: DevMut<i32>,
        clock: DevPtr<u64>,
    }) {
        let m = a.m as usize;
        // SAFETY: a clock, when given, holds [t, offset] and `x + offset` the step's inputs.
        let (t, x) = if a.clock.0.is_null() {
            (a.t, a.x)
        } else {
            unsafe { (*a.clock.0, DevPtr(a.x.0.add(*a.clock.0.add(1) as usize))) }
        };
        let ctx = StepCtx {
            m,
            n_hc: (1u64 << a.levels) - 1,
            t,
            fire_key: a.fire_key,
            learn: a.learn != 0,
            rule: Rule(a.rule),
        };
        let s = State { w: a.w, omega: a.omega, cnt: a.cnt, rf: a.rf };
        let mut k = gid() / 32;
        while k < a.count as usize {
            let hc = a.first as usize + k;
            // (level, index in the level's input, state slot, winner index)
            let (l, input, slot, out) = if a.level == ALL_LEVELS {
                let (l, j) = locate(a.levels, hc);
                let input = if l == 0 { j } else { offset(a.levels, l - 1) + 2 * j };
                (l, input, hc, hc)
            } else {
                let l = a.level as usize;
                let input = a.child as usize + if l == 0 { k } else { 2 * k };
                (l, input, a.slot as usize + k, a.out as usize + k)
            };
            let xin = if l == 0 {
                unsafe { bottom(x, m, input) }
            } else {
                unsafe { parent_input(m, *a.src.0.add(input), *a.src.0.add(input + 1)) }
            };
            unsafe { column(hc, slot, &xin, &ctx, s, |w| *a.dst.0.add(out) = w) };
            k += grid_threads() / 32;
        }
    }
}

/// `__threadfence()`: orders this thread's writes before its later ones, device-wide.
#[inline(always)]
fn fence_gpu() {
    // SAFETY: a memory fence has no operands and no preconditions.
    unsafe { core::arch::asm!("fence.acq_rel.gpu;") };
}

kernel! {
    /// The work queue: a persistent grid of warps popping hypercolumns bottom level first.
    fn cortical_queue(a: Queue {
        levels: u32,
        m: u32,
        learn: u32,
        rule: u32,
        t: u64,
        fire_key: u64,
        epoch: u32,
        x: DevPtr<u64>,
        w: DevMut<u16>,
        omega: DevMut<u32>,
        cnt: DevMut<u32>,
        rf: DevMut<u8>,
        winners: DevMut<i32>,
        flags: DevMut<u32>,
        head: DevMut<u32>,
    }) {
        let m = a.m as usize;
        let n_hc = (1usize << a.levels) - 1;
        let ctx = StepCtx {
            m,
            n_hc: n_hc as u64,
            t: a.t,
            fire_key: a.fire_key,
            learn: a.learn != 0,
            rule: Rule(a.rule),
        };
        let s = State { w: a.w, omega: a.omega, cnt: a.cnt, rf: a.rf };
        loop {
            let mut q = 0;
            if lane() == 0 {
                // SAFETY: `head` is a live u32 the host zeroed before the launch.
                q = unsafe { AtomicU32::from_ptr(a.head.0) }.fetch_add(1, Relaxed);
            }
            let hc = from_lane0(q) as usize;
            if hc >= n_hc {
                return;
            }
            let (l, j) = locate(a.levels, hc);
            let xin = if l == 0 {
                unsafe { bottom(a.x, m, j) }
            } else {
                let below = offset(a.levels, l - 1) + 2 * j;
                let (mut left, mut right) = (0u32, 0u32);
                if lane() == 0 {
                    // SAFETY: `flags` has one u32 per hypercolumn.
                    let flag = unsafe { AtomicU32::from_ptr(a.flags.0.add(hc)) };
                    while flag.load(Relaxed) < 2 * a.epoch {}
                    fence_gpu();
                    // Volatile: straight from L2, never a stale L1 line.
                    unsafe {
                        left = read_volatile(a.winners.0.add(below)) as u32;
                        right = read_volatile(a.winners.0.add(below + 1)) as u32;
                    }
                }
                parent_input(m, from_lane0(left) as i32, from_lane0(right) as i32)
            };
            unsafe {
                column(hc, hc, &xin, &ctx, s, |w| {
                    write_volatile(a.winners.0.add(hc), w);
                    fence_gpu();
                    if l + 1 < a.levels as usize {
                        let parent = offset(a.levels, l + 1) + j / 2;
                        AtomicU32::from_ptr(a.flags.0.add(parent)).fetch_add(1, Relaxed);
                    }
                })
            };
        }
    }
}

kernel! {
    /// Weight `k` of `[hc][i][m]` = the core's `initial_weight(first + hc, m, i)`.
    fn cortical_init(a: Init {
        m: u32,
        init_key: u64,
        first: u64,
        n: u64,
        w: DevMut<u16>,
    }) {
        let k = gid();
        if k as u64 >= a.n {
            return;
        }
        let m = a.m as usize;
        let (hc, rest) = split(k, 2 * m * m);
        let (i, mm) = split(rest, m);
        unsafe { *a.w.0.add(k) = initial_weight(a.init_key, a.first + hc as u64, m, mm, i) };
    }
}
