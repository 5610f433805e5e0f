//! `gbnn_joint_warp`: a whole joint retrieval of a small network in one launch, one warp per
//! probe. Why: Scenario 2 (16 × 512, 30 000 probes) took ~10 short launches of the per-update
//! path, each paying its start and tail, while its W (8 MiB) sits in L2. Here a warp runs the
//! core's `Schedule` for its probe with the state in shared memory. Lane `i` computes the erased
//! words `i, i + 32, …` of the first pass (erased clusters in order, a cluster's words in order),
//! so the warp's row loads are contiguous; a later update computes only the words nonzero now
//! (Lemma 1: a zero word stays zero), a lane each, so its loads are the few active neurons' rows.
//! The occupancy of the state is kept as one bit per erased word (`bits`), from warp ballots.
//! Two earlier one-launch designs lost because they kept few probes in flight (a 512-thread
//! block per probe; a lane per erased cluster walking its words with 124 registers).

use core::slice::from_raw_parts;
use neurobits_core::bits::nth_set_bit;
use neurobits_core::gbnn::decode::decode_result;
use neurobits_core::gbnn::kernels::{JointWarp, Shape};
use neurobits_core::gbnn::rules::{joint_first_word_cols, joint_iter_word_cols, known_row};
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Params, Rule, Schedule, Update, ERASED};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use super::geometry;
use crate::{abort, any_lane, ballot, gid, kernel, lane, or_lanes, smem, split, thread_block};

/// Bits per lane of the erased-word occupancy (`JointWarp::SLOTS` words a lane).
const SLOTS: usize = JointWarp::SLOTS;

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

kernel! {
    /// A joint retrieval per warp (see `JointWarp`): each update reads one state row and writes
    /// the other; the warp then waits, a lane per erased cluster stores its occupancy word, the
    /// warp waits again and records the update (the change agreed by a vote).
    fn gbnn_joint_warp(a: JointWarp {
        shape: Shape,
        k: u32,
        w: DevPtr<Word>,
        probes: DevPtr<u16>,
        out: DevMut<u32>,
        iters: DevMut<u32>,
        converged: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
        // A warp per probe: the whole warp leaves together.
        let p = gid() / 32;
        if p >= a.k as usize {
            return;
        }
        let ln = lane();
        let (t, _) = thread_block();
        let sh = JointWarp::layout(&g, (t / 32) as u32, smem::base());
        // Lane `c` holds the symbols of clusters `c` and `c + 32` (C ≤ 64): the erased mask is
        // two ballots, and each lane puts its known row (the core's `known_row`) or its erased
        // cluster in place.
        let sym = |c: usize| if c < cc { *a.probes.0.add(p * cc + c) } else { ERASED };
        let (s0, s1) = (sym(ln), sym(ln + 32));
        let erased = (ballot(s0 == ERASED) as u64 | (ballot(s1 == ERASED) as u64) << 32) & g.all_clusters();
        for (c, s) in [(ln, s0), (ln + 32, s1)] {
            if c < cc {
                let (at, x) = if s == ERASED {
                    (sh.erased + (erased & ((1 << c) - 1)).count_ones() * 4, c as u32)
                } else {
                    let (i, row) = known_row(&g, erased, c, s);
                    (sh.rows + i as u32 * 4, row)
                };
                // SAFETY: entry `< C` of this warp's known rows or erased list.
                unsafe { smem::st_u32(at, x) };
            }
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
        while let Some(u) = sched.next_update() {
            // SAFETY (the shared slices): they live until the barrier below; until then no lane
            // writes what they cover (updates write `next`).
            let changed = match u {
                Update::JointFirst => {
                    let rows = from_raw_parts(smem::generic::<u32>(sh.rows), cc - e);
                    let mut r = 0;
                    while r < SLOTS && 32 * r < slots {
                        let s = ln + 32 * r;
                        let mut x = 0;
                        if s < slots {
                            let (j, wi) = split(s, wpc);
                            let cl = cluster(j);
                            x = joint_first_word_cols(&g, w, &all, rows, cl, wi);
                            // SAFETY: word `cl·wpc + wi < rw` of this warp's next state.
                            unsafe { smem::st_u64(next + (cl * wpc + wi) as u32 * 8, x) };
                        }
                        bits |= (ballot(x != 0) as u128) << (32 * r);
                        r += 1;
                    }
                    bits != 0
                }
                Update::JointIter => {
                    let v = from_raw_parts(smem::generic::<Word>(cur), rw);
                    let occ = from_raw_parts(smem::generic::<u64>(sh.occ), cc);
                    let (mut cleared, mut differs) = (0u128, false);
                    let mut i = ln;
                    while i < bits.count_ones() as usize {
                        let s = nth_set_bit128(bits, i);
                        let (j, wi) = split(s, wpc);
                        let cl = cluster(j);
                        let x = joint_iter_word_cols(&g, w, &all, v, erased, cl, wi, occ);
                        // SAFETY: as in the first pass.
                        unsafe { smem::st_u64(next + (cl * wpc + wi) as u32 * 8, x) };
                        differs |= x != v[cl * wpc + wi];
                        cleared |= ((x == 0) as u128) << s;
                        i += 32;
                    }
                    for q in 0..SLOTS {
                        bits &= !((or_lanes((cleared >> (32 * q)) as u32) as u128) << (32 * q));
                    }
                    any_lane(differs)
                }
                _ => abort(),
            };
            smem::sync_warp();
            let mut j = ln;
            while j < e {
                // SAFETY: occupancy word `cl < C` of this warp's share.
                unsafe { smem::st_u64(sh.occ + cluster(j) as u32 * 8, (bits >> (j * wpc)) as u64 & low_bits(wpc)) };
                j += 32;
            }
            smem::sync_warp();
            sched.record(changed);
            (cur, next) = (next, cur);
        }
        let v = from_raw_parts(smem::generic::<Word>(cur), rw);
        let occ = from_raw_parts(smem::generic::<u64>(sh.occ), cc);
        for (c, s) in [(ln, s0), (ln + 32, s1)] {
            if c < cc {
                // Known clusters decode from the probe; erased ones through their occupancy.
                *a.out.0.add(p * cc + c) = decode_result(&g, Rule::Joint, s, v, c, Some(&occ[c..c + 1])).0;
            }
        }
        if ln == 0 {
            let st = sched.stats();
            *a.iters.0.add(p) = st.iterations;
            *a.converged.0.add(p) = st.converged as u32;
        }
    }
}
