//! `gbnn_joint_warp`: a whole joint retrieval of a small network in one launch, a group of
//! lanes per probe (8, 16 or 32; a warp runs up to four probes). Why: Scenario 2 (16 × 512,
//! 30 000 probes) took ~10 short launches of the per-update path, each paying its start and
//! tail, while its W (8 MiB) sits in L2. Here a group runs the core's `Schedule` for its probe
//! with the state in shared memory. In the first pass lane `i` of a group computes the erased
//! words `2i, 2i + 1`, then `2(i + lanes), …` (erased clusters in order, a cluster's words in
//! order; one 16-byte load per known row), or `i, i + lanes, …` when a cluster has an odd number
//! of words, so a group's row loads are contiguous; a later update computes only the words nonzero now (Lemma 1: a zero word stays
//! zero), a lane each. The occupancy of the erased words is one `u128` (`bits`), from ballots
//! after the first pass and cleared bit by bit by shared atomics after later updates.
//! Two earlier one-launch designs lost because they kept few probes in flight (a 512-thread
//! block per probe; a lane per erased cluster walking its words with 124 registers); a warp per
//! probe ran at 0.100 ms for Scenario 2 with most of its lanes idle in the later updates.

use core::slice::from_raw_parts;
use neurobits_core::bits::{nth_set_bit, spread_even};
use neurobits_core::gbnn::decode::decode_result;
use neurobits_core::gbnn::kernels::{JointWarp, Shape};
use neurobits_core::gbnn::rules::{
    joint_first_pair_cols, joint_first_words_cols, joint_iter_word_cols, known_row, known_symbol,
};
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Params, Rule, Schedule, Update, ERASED};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use super::geometry;
use crate::{abort, any_lane, ballot, gid, kernel, lane, smem, split, thread_block};

/// First-pass words a lane computes at once (H100, Scenario 2: 1 word 0.062 ms, 2 words
/// 0.054-0.059, 4 words 0.058-0.062).
const PER: usize = 2;
/// Known rows a lane reads per group in the first pass (8 took 0.059 ms against 0.055-0.059).
const ROWS: usize = 4;

/// Position of the `n`-th set bit of `x` (`n` below its count).
#[inline(always)]
fn nth_set_bit128(x: u128, n: usize) -> usize {
    let lo = x as u64;
    let below = lo.count_ones() as usize;
    let found = if n < below { nth_set_bit(lo, n as u32) } else { nth_set_bit((x >> 64) as u64, (n - below) as u32) };
    match found {
        Some(b) if n < below => b,
        Some(b) => 64 + b,
        None => abort(),
    }
}

/// A cluster's `wpc` occupancy bits.
#[inline(always)]
fn low_bits(wpc: usize) -> u64 {
    if wpc >= 64 {
        u64::MAX
    } else {
        (1 << wpc) - 1
    }
}

/// This lane's group of `lanes` lanes, as the bits of a warp ballot.
#[derive(Clone, Copy)]
struct Group {
    shift: u32,
    mask: u32,
}

impl Group {
    /// Bit `i` set iff `pred` holds on lane `i` of the group (all 32 lanes take part).
    #[inline(always)]
    fn ballot(self, pred: bool) -> u32 {
        (ballot(pred) >> self.shift) & self.mask
    }
}

/// The group's 128 occupancy bits at shared address `a`.
///
/// # Safety
/// `a` is a 16-byte aligned `bits` entry of the group's share.
#[inline(always)]
unsafe fn load_bits(a: u32) -> u128 {
    // SAFETY: as the caller promises.
    let [a0, a1, a2, a3] = unsafe { smem::ld_v4(a) };
    a0 as u128 | (a1 as u128) << 32 | (a2 as u128) << 64 | (a3 as u128) << 96
}

kernel! {
    /// A joint retrieval per group of lanes (see `JointWarp`): each update reads one state row
    /// and writes the other; the warp then waits, a lane per erased cluster stores its occupancy
    /// word, the warp waits again and each group records its update (the change agreed by a
    /// ballot). Groups whose retrieval is over (or that have no probe) keep taking part in the
    /// warp's ballots and barriers.
    fn gbnn_joint_warp(a: JointWarp {
        shape: Shape,
        k: u32,
        lanes: u32,
        w: DevPtr<Word>,
        probes: DevPtr<u16>,
        out: DevMut<u32>,
        iters: DevMut<u32>,
        converged: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
        let lanes = a.lanes as usize;
        if !matches!(lanes, 8 | 16 | 32) {
            abort();
        }
        // Shifts, not divisions: `lanes` is a power of two (a 64-bit division is a subroutine).
        let lb = lanes.trailing_zeros();
        let per_warp = 32 >> lb;
        // The whole warp leaves together, or not at all.
        if gid() / 32 * per_warp >= a.k as usize {
            return;
        }
        let (ln, (t, _)) = (lane(), thread_block());
        let (h, lg) = (ln >> lb, ln & (lanes - 1));
        let p = gid() / 32 * per_warp + h;
        let valid = p < a.k as usize;
        let grp = Group { shift: (h * lanes) as u32, mask: if lanes == 32 { u32::MAX } else { (1 << lanes) - 1 } };
        let sh = JointWarp::layout(&g, (t / 32 * per_warp + h) as u32, smem::base());
        let sym = |c: usize| if valid && c < cc { *a.probes.0.add(p * cc + c) } else { ERASED };
        // Lane `lg` reads the symbols of clusters `lg, lg + lanes, …`: the erased mask comes from
        // ballots, and each lane puts its known row (the core's `known_row`) or erased cluster
        // in place.
        let mut erased = 0u64;
        let mut q = 0;
        while q * lanes < cc {
            erased |= (grp.ballot(sym(lg + q * lanes) == ERASED) as u64) << (q * lanes);
            q += 1;
        }
        erased &= g.all_clusters();
        let mut c = lg;
        while c < cc {
            let s = sym(c);
            let (at, x) = if s == ERASED {
                (sh.erased + (erased & ((1 << c) - 1)).count_ones() * 4, c as u32)
            } else {
                let (i, row) = known_row(&g, erased, c, s);
                (sh.rows + i as u32 * 4, row)
            };
            // SAFETY: entry `< C` of this probe's known rows or erased list.
            unsafe { smem::st_u32(at, x) };
            c += lanes;
        }
        smem::sync_warp();
        let w = from_raw_parts(a.w.0, g.weight_words());
        let (all, e) = (Shard::all(&g), erased.count_ones() as usize);
        let slots = e * wpc;
        // SAFETY: entry `j < e` of the erased list.
        let cluster = |j: usize| unsafe { smem::ld_u32(sh.erased + j as u32 * 4) } as usize;
        // Bit `s`: erased word `s` of the current state is nonzero (erased clusters start off).
        let mut bits = 0u128;
        let mut sched = Schedule::new(Rule::Joint, &g, &Params::default());
        let (mut cur, mut next) = (sh.states[0], sh.states[1]);
        let mut step = 0;
        loop {
            let u = if valid { sched.next_update() } else { None };
            if !any_lane(u.is_some()) {
                break;
            }
            // SAFETY (the shared slices): they live until the barrier below; until then no lane
            // writes what they cover (updates write `next` and clear bits of `bits[step % 2]`).
            let mut differs = false;
            if step == 0 {
                // The first pass: every group that has a probe runs it (its schedule starts there).
                let rows = from_raw_parts(smem::generic::<u32>(sh.rows), cc - e);
                if wpc % 2 == 0 {
                    // Two adjacent words per lane (pair `lg + lanes·r` in round `r`), one 16-byte
                    // load per known row (the core's `joint_first_pair_cols`): half the loads and
                    // address arithmetic of two separate words. The two words' ballots interleave
                    // into consecutive occupancy bits.
                    let mut r = 0;
                    while any_lane(2 * (lg + lanes * r) < slots) {
                        let s0 = 2 * (lg + lanes * r);
                        let mut x = [0; 2];
                        if u == Some(Update::JointFirst) && s0 < slots {
                            let (j, wi) = split(s0, wpc);
                            let cl = cluster(j);
                            x = joint_first_pair_cols::<ROWS>(&g, w, &all, rows, (cl, wi));
                            // SAFETY: words `cl·wpc + wi + {0, 1} < rw` of this probe's next state.
                            unsafe {
                                smem::st_u64(next + (cl * wpc + wi) as u32 * 8, x[0]);
                                smem::st_u64(next + (cl * wpc + wi + 1) as u32 * 8, x[1]);
                            }
                        }
                        let b = spread_even(grp.ballot(x[0] != 0)) | spread_even(grp.ballot(x[1] != 0)) << 1;
                        bits |= (b as u128).checked_shl((2 * lanes * r) as u32).unwrap_or(0);
                        r += 1;
                    }
                } else {
                    // `PER` words per lane at a time (rounds `r, r + 1, …`): their row loads go out
                    // together.
                    let mut r = 0;
                    while any_lane(r * lanes < slots) {
                        let s: [usize; PER] = core::array::from_fn(|q| lg + lanes * (r + q));
                        let mut x = [0; PER];
                        if u == Some(Update::JointFirst) && s[0] < slots {
                            // Past the last word, a word is the first again (its result unused).
                            let at = s.map(|sq| {
                                let (j, wi) = split(if sq < slots { sq } else { s[0] }, wpc);
                                (cluster(j), wi)
                            });
                            x = joint_first_words_cols::<PER, ROWS>(&g, w, &all, rows, at);
                            for q in 0..PER {
                                if s[q] < slots {
                                    // SAFETY: word `cl·wpc + wi < rw` of this probe's next state.
                                    unsafe { smem::st_u64(next + (at[q].0 * wpc + at[q].1) as u32 * 8, x[q]) };
                                } else {
                                    x[q] = 0;
                                }
                            }
                        }
                        for (q, &xq) in x.iter().enumerate() {
                            bits |= (grp.ballot(xq != 0) as u128).checked_shl((lanes * (r + q)) as u32).unwrap_or(0);
                        }
                        r += PER;
                    }
                }
                // Erased words start off: the first pass changed the probe iff some word is on.
                differs = bits != 0;
            } else if u == Some(Update::JointIter) {
                let v = from_raw_parts(smem::generic::<Word>(cur), rw);
                let occ = from_raw_parts(smem::generic::<u64>(sh.occ), cc);
                let clear = sh.bits[step % 2];
                let mut i = lg;
                while i < bits.count_ones() as usize {
                    let s = nth_set_bit128(bits, i);
                    let (j, wi) = split(s, wpc);
                    let cl = cluster(j);
                    let x = joint_iter_word_cols(&g, w, &all, v, erased, cl, wi, occ);
                    // SAFETY: as in the first pass; `clear` holds 128 bits.
                    unsafe {
                        smem::st_u64(next + (cl * wpc + wi) as u32 * 8, x);
                        if x == 0 {
                            smem::red_and_u32(clear + (s / 32) as u32 * 4, !(1 << (s % 32)));
                        }
                    }
                    differs |= x != v[cl * wpc + wi];
                    i += lanes;
                }
            } else if u.is_some() {
                abort();
            }
            let changed = grp.ballot(differs) != 0;
            smem::sync_warp();
            if u == Some(Update::JointIter) {
                // SAFETY: this probe's `bits` entry; its clears are done (barrier above).
                bits = unsafe { load_bits(sh.bits[step % 2]) };
            }
            let mut j = lg;
            while u.is_some() && j < e {
                // SAFETY: occupancy word `cl < C` of this probe's share.
                unsafe { smem::st_u64(sh.occ + cluster(j) as u32 * 8, (bits >> (j * wpc)) as u64 & low_bits(wpc)) };
                j += lanes;
            }
            if u.is_some() && lg == 0 {
                // The bits the next update clears: a copy of the new occupancy.
                let b = [bits as u32, (bits >> 32) as u32, (bits >> 64) as u32, (bits >> 96) as u32];
                // SAFETY: this probe's other `bits` entry, read by no lane before the barrier.
                unsafe { smem::st_v4(sh.bits[(step + 1) % 2], b) };
            }
            smem::sync_warp();
            if u.is_some() {
                sched.record(changed);
                (cur, next) = (next, cur);
            }
            step += 1;
        }
        if !valid {
            return;
        }
        let v = from_raw_parts(smem::generic::<Word>(cur), rw);
        let occ = from_raw_parts(smem::generic::<u64>(sh.occ), cc);
        let rows = from_raw_parts(smem::generic::<u32>(sh.rows), cc - e);
        let mut c = lg;
        while c < cc {
            // Known clusters decode from the probe (its symbol from the known row in shared
            // memory: reading the probe again waited on a global load); erased ones through
            // their occupancy.
            let s = if erased & (1 << c) != 0 { ERASED } else { known_symbol(&g, rows[known_row(&g, erased, c, 0).0], c) };
            *a.out.0.add(p * cc + c) = decode_result(&g, Rule::Joint, s, v, c, Some(&occ[c..c + 1])).0;
            c += lanes;
        }
        if lg == 0 {
            let st = sched.stats();
            *a.iters.0.add(p) = st.iterations;
            *a.converged.0.add(p) = st.converged as u32;
        }
    }
}
