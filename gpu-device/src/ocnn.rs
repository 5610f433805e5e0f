//! OCNN kernels: thread mappings onto `neurobits_core::ocnn` (layouts on the argument structs in
//! `neurobits_core::ocnn::kernels`). The update is the paper's X-threads with a full warp per
//! neuron, which *is* the canonical lanes32 order: thread `l` of the warp is lane `l`.

use core::slice::from_raw_parts;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::ocnn::kernels::{
    lane_entry, CombineYF32, CombineYF64, ForestBest, ForestHook, ForestJump, FragmentaryHitsF32, FragmentaryHitsF64,
    LaneFillF32, LaneFillF64, LaneWidthF32, LaneWidthF64, LanesYF32, LanesYF64, PhaseBitsF32, PhaseBitsF64, PhaseHits,
    SparseFragmentaryHitsF32, SparseFragmentaryHitsF64, SparsePhaseHits, StepF32, StepF64, StepLaneRowsF32,
    StepLaneRowsF64, StepPerNeuronF32, StepPerNeuronF64, StepSparseF32, StepSparseF64, TransferF32, TransferF64,
};
use neurobits_core::ocnn::{
    butterfly, combine, forest_key, forest_pair, lane_sum, lane_sum_sparse, lanes32, linked, phase_bit, phase_hits,
    transfer, Real, SyncMode,
};

use crate::{gid, kernel, split, warp_reduce, xor_lane, xor_lane64};

/// The working types' warp exchange.
trait Exchange: Copy {
    fn xor_lane(self, d: u32) -> Self;
}

/// The warp's lane sums combined by the xor-butterfly `d = 16, 8, 4, 2, 1` (the core's
/// `combine`, in the order of the core's `butterfly`): every lane ends with the same sum.
#[inline(always)]
fn warp_butterfly<T: Exchange + neurobits_core::ocnn::Real>(acc: T) -> T {
    warp_reduce(acc, T::xor_lane, combine)
}

/// Calls `f(slot, j)` for each coupled pair `(i, j)`, `j > i`, of CSR row `i`: `slot` is its
/// place in the hit vector.
///
/// # Safety
/// `ptr`, `upper` and `hit_ptr` hold row `i`'s offsets, and `cols` its columns.
#[inline(always)]
unsafe fn each_upper_pair(
    i: usize,
    ptr: DevPtr<u64>,
    upper: DevPtr<u64>,
    hit_ptr: DevPtr<u64>,
    cols: DevPtr<u32>,
    mut f: impl FnMut(usize, usize),
) {
    // SAFETY: by the caller's contract.
    unsafe {
        let (u, e, h) = (*upper.0.add(i) as usize, *ptr.0.add(i + 1) as usize, *hit_ptr.0.add(i) as usize);
        for k in u..e {
            f(h + k - u, *cols.0.add(k) as usize);
        }
    }
}

impl Exchange for f32 {
    #[inline(always)]
    fn xor_lane(self, d: u32) -> Self {
        f32::from_bits(xor_lane(self.to_bits(), d))
    }
}

impl Exchange for f64 {
    #[inline(always)]
    fn xor_lane(self, d: u32) -> Self {
        f64::from_bits(xor_lane64(self.to_bits(), d))
    }
}

macro_rules! typed_kernels {
    ($t:ty, $transfer:ident, $Transfer:ident, $step:ident, $Step:ident, $bits:ident, $Bits:ident, $frag:ident, $Frag:ident) => {
        kernel! {
            /// `f_j = f(x_j)` (the core's `transfer`), one thread per neuron.
            fn $transfer(a: $Transfer {
                n: u32,
                x: DevPtr<$t>,
                f: DevMut<$t>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    *a.f.0.add(i) = transfer(*a.x.0.add(i));
                }
            }
        }

        kernel! {
            /// `x_i = (Σ_j J_ij·f_j) / C_i`, one warp per neuron: lane sums, then the butterfly.
            fn $step(a: $Step {
                n: u32,
                j: DevPtr<$t>,
                norm: DevPtr<$t>,
                f: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                let n = a.n as usize;
                if i >= n {
                    return; // the whole warp: i is per warp
                }
                let row = from_raw_parts(a.j.0.add(i * n), n);
                let f = from_raw_parts(a.f.0, n);
                let acc = warp_butterfly(lane_sum(n, lane, |j| row[j] * f[j]));
                if lane == 0 {
                    *a.next.0.add(i) = acc / *a.norm.0.add(i);
                }
            }
        }

        kernel! {
            /// Bit `bit` of each neuron's phase word (the core's `phase_bit`); bit 0 clears it.
            fn $bits(a: $Bits {
                n: u32,
                bit: u32,
                before: DevPtr<$t>,
                now: DevPtr<$t>,
                words: DevMut<u64>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let b = (phase_bit(*a.now.0.add(i), *a.before.0.add(i)) as u64) << a.bit;
                    let w = a.words.0.add(i);
                    *w = if a.bit == 0 { b } else { *w | b };
                }
            }
        }

        kernel! {
            /// One iteration of fragmentary synchronization for every pair, one thread per `(i, j)`.
            fn $frag(a: $Frag {
                n: u32,
                eps: $t,
                x: DevPtr<$t>,
                hits: DevMut<u32>,
            }) {
                let n = a.n as usize;
                let (i, j) = split(gid(), n);
                if i < n && SyncMode::Fragmentary(a.eps).close(*a.x.0.add(i), *a.x.0.add(j)) {
                    *a.hits.0.add(i * n + j) += 1;
                }
            }
        }
    };
}

typed_kernels!(
    f32,
    ocnn_transfer_f32,
    TransferF32,
    ocnn_step_f32,
    StepF32,
    ocnn_phase_bits_f32,
    PhaseBitsF32,
    ocnn_fragmentary_hits_f32,
    FragmentaryHitsF32
);
typed_kernels!(
    f64,
    ocnn_transfer_f64,
    TransferF64,
    ocnn_step_f64,
    StepF64,
    ocnn_phase_bits_f64,
    PhaseBitsF64,
    ocnn_fragmentary_hits_f64,
    FragmentaryHitsF64
);

kernel! {
    /// Adds the agreements of `valid` phase bits (the core's `phase_hits`) to every pair, one
    /// thread per `(i, j)` (the diagonal counts every iteration).
    fn ocnn_phase_hits(a: PhaseHits {
        n: u32,
        valid: u32,
        words: DevPtr<u64>,
        hits: DevMut<u32>,
    }) {
        let n = a.n as usize;
        let (i, j) = split(gid(), n);
        if i < n {
            // One thread per cell: a plain add.
            *a.hits.0.add(i * n + j) += phase_hits(*a.words.0.add(i), *a.words.0.add(j), a.valid);
        }
    }
}

macro_rules! decompositions {
    ($t:ty, $per:ident, $Per:ident, $lanes:ident, $Lanes:ident, $combine:ident, $Combine:ident) => {
        kernel! {
            /// Thread-per-neuron: the core's `lanes32` over column `i` (J is symmetric bit for bit).
            fn $per(a: $Per {
                n: u32,
                j: DevPtr<$t>,
                norm: DevPtr<$t>,
                f: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let (i, n) = (gid(), a.n as usize);
                if i < n {
                    let s = lanes32(n, |j| *a.j.0.add(j * n + i) * *a.f.0.add(j));
                    *a.next.0.add(i) = s / *a.norm.0.add(i);
                }
            }
        }

        kernel! {
            /// Y-threads, step 1: thread `(i, y)` computes lanes `4y … 4y+3` of neuron `i`.
            fn $lanes(a: $Lanes {
                n: u32,
                j: DevPtr<$t>,
                f: DevPtr<$t>,
                partial: DevMut<$t>,
            }) {
                let n = a.n as usize;
                let (i, y) = split(gid(), 8);
                if i < n {
                    let row = from_raw_parts(a.j.0.add(i * n), n);
                    let f = from_raw_parts(a.f.0, n);
                    for l in 4 * y..4 * y + 4 {
                        *a.partial.0.add(i * 32 + l) = lane_sum(n, l, |j| row[j] * f[j]);
                    }
                }
            }
        }

        kernel! {
            /// Y-threads, step 2: the ordered combine of the 32 lane sums, then `/ C_i`.
            fn $combine(a: $Combine {
                n: u32,
                partial: DevPtr<$t>,
                norm: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let mut acc = [0 as $t; 32];
                    for (l, x) in acc.iter_mut().enumerate() {
                        *x = *a.partial.0.add(i * 32 + l);
                    }
                    *a.next.0.add(i) = butterfly(acc) / *a.norm.0.add(i);
                }
            }
        }
    };
}

decompositions!(
    f32,
    ocnn_step_per_neuron_f32,
    StepPerNeuronF32,
    ocnn_lanes_y_f32,
    LanesYF32,
    ocnn_combine_y_f32,
    CombineYF32
);
decompositions!(
    f64,
    ocnn_step_per_neuron_f64,
    StepPerNeuronF64,
    ocnn_lanes_y_f64,
    LanesYF64,
    ocnn_combine_y_f64,
    CombineYF64
);

/// Lane `l`'s part of a row laid out as CSR: the columns `≡ l (mod 32)`, wherever they stand.
#[inline(always)]
fn by_column<T: neurobits_core::ocnn::Real>(cols: &[u32], lane: usize, term: impl Fn(usize) -> T) -> T {
    lane_sum_sparse(cols, lane, term)
}

/// Lane `l`'s part of a lane row: entries `l, l + 32, …`.
#[inline(always)]
fn by_position<T: neurobits_core::ocnn::Real>(cols: &[u32], lane: usize, term: impl Fn(usize) -> T) -> T {
    lane_sum(cols.len(), lane, term)
}

/// A step over rows of weights, one warp per neuron: lane `l` adds its terms (`$lane_part`:
/// [`by_column`] for CSR rows, [`by_position`] for lane rows), then the butterfly, as in the dense
/// step.
macro_rules! rows_step_kernel {
    ($t:ty, $step:ident, $Step:ident, $lane_part:ident, $doc:literal) => {
        kernel! {
            #[doc = $doc]
            fn $step(a: $Step {
                n: u32,
                ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                vals: DevPtr<$t>,
                norm: DevPtr<$t>,
                f: DevPtr<$t>,
                next: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                if i >= a.n as usize {
                    return; // the whole warp: i is per warp
                }
                let (s, e) = (*a.ptr.0.add(i) as usize, *a.ptr.0.add(i + 1) as usize);
                let cols = from_raw_parts(a.cols.0.add(s), e - s);
                let vals = from_raw_parts(a.vals.0.add(s), e - s);
                let acc = warp_butterfly($lane_part(cols, lane, |k| vals[k] * *a.f.0.add(cols[k] as usize)));
                if lane == 0 {
                    *a.next.0.add(i) = acc / *a.norm.0.add(i);
                }
            }
        }
    };
}

macro_rules! sparse_kernels {
    ($t:ty, $step:ident, $Step:ident, $frag:ident, $Frag:ident) => {
        rows_step_kernel!(
            $t,
            $step,
            $Step,
            by_column,
            "The sparse step: lane `l` adds its columns' terms (the core's `lane_sum_sparse`)."
        );

        kernel! {
            /// One iteration of fragmentary synchronization on the coupled pairs, a thread per row.
            fn $frag(a: $Frag {
                n: u32,
                eps: $t,
                ptr: DevPtr<u64>,
                upper: DevPtr<u64>,
                hit_ptr: DevPtr<u64>,
                cols: DevPtr<u32>,
                x: DevPtr<$t>,
                hits: DevMut<u32>,
            }) {
                let i = gid();
                if i < a.n as usize {
                    let xi = *a.x.0.add(i);
                    each_upper_pair(i, a.ptr, a.upper, a.hit_ptr, a.cols, |slot, j| {
                        if SyncMode::Fragmentary(a.eps).close(xi, *a.x.0.add(j)) {
                            *a.hits.0.add(slot) += 1;
                        }
                    });
                }
            }
        }
    };
}

sparse_kernels!(f32, ocnn_step_sparse_f32, StepSparseF32, ocnn_sparse_fragmentary_hits_f32, SparseFragmentaryHitsF32);
sparse_kernels!(f64, ocnn_step_sparse_f64, StepSparseF64, ocnn_sparse_fragmentary_hits_f64, SparseFragmentaryHitsF64);

/// The dense step over lane rows (see `neurobits_core::ocnn::kernels`).
macro_rules! lane_rows_kernel {
    ($t:ty, $step:ident, $Step:ident) => {
        rows_step_kernel!(
            $t,
            $step,
            $Step,
            by_position,
            "The dense step over lane rows: lane `l` runs the core's `lane_sum` over the row's entries `l, l + 32, …` (its nonzero weights, ascending columns, then zero padding)."
        );
    };
}

lane_rows_kernel!(f32, ocnn_step_lane_rows_f32, StepLaneRowsF32);
lane_rows_kernel!(f64, ocnn_step_lane_rows_f64, StepLaneRowsF64);

/// Building lane rows from the dense `J` (see `neurobits_core::ocnn::kernels`): a warp per row.
macro_rules! lane_rows_build_kernels {
    ($t:ty, $width:ident, $Width:ident, $fill:ident, $Fill:ident) => {
        kernel! {
            /// Row `i`'s width: the most nonzero weights in one lane.
            fn $width(a: $Width {
                n: u32,
                j: DevPtr<$t>,
                width: DevMut<u32>,
            }) {
                let (i, lane) = split(gid(), 32);
                let n = a.n as usize;
                if i >= n {
                    return; // the whole warp
                }
                let row = a.j.0.add(i * n);
                let (mut count, mut col) = (0u32, lane);
                while col < n {
                    count += (*row.add(col) != <$t as Real>::ZERO) as u32;
                    col += 32;
                }
                let count = warp_reduce(count, xor_lane, u32::max);
                if lane == 0 {
                    *a.width.0.add(i) = count;
                }
            }
        }

        kernel! {
            /// Lane `l` of row `i`'s warp writes its `k`-th nonzero weight at `lane_entry(k, l)`.
            fn $fill(a: $Fill {
                n: u32,
                j: DevPtr<$t>,
                ptr: DevPtr<u64>,
                cols: DevMut<u32>,
                vals: DevMut<$t>,
            }) {
                let (i, lane) = split(gid(), 32);
                let n = a.n as usize;
                if i >= n {
                    return;
                }
                let (row, start) = (a.j.0.add(i * n), *a.ptr.0.add(i) as usize);
                let (mut k, mut col) = (0, lane);
                while col < n {
                    let w = *row.add(col);
                    if w != <$t as Real>::ZERO {
                        let e = start + lane_entry(k, lane);
                        *a.cols.0.add(e) = col as u32;
                        *a.vals.0.add(e) = w;
                        k += 1;
                    }
                    col += 32;
                }
            }
        }
    };
}

lane_rows_build_kernels!(f32, ocnn_lane_width_f32, LaneWidthF32, ocnn_lane_fill_f32, LaneFillF32);
lane_rows_build_kernels!(f64, ocnn_lane_width_f64, LaneWidthF64, ocnn_lane_fill_f64, LaneFillF64);

kernel! {
    /// Adds the agreements of `valid` phase bits (the core's `phase_hits`) to every coupled pair,
    /// a thread per row.
    fn ocnn_sparse_phase_hits(a: SparsePhaseHits {
        n: u32,
        valid: u32,
        ptr: DevPtr<u64>,
        upper: DevPtr<u64>,
        hit_ptr: DevPtr<u64>,
        cols: DevPtr<u32>,
        words: DevPtr<u64>,
        hits: DevMut<u32>,
    }) {
        let i = gid();
        if i < a.n as usize {
            let wi = *a.words.0.add(i);
            each_upper_pair(i, a.ptr, a.upper, a.hit_ptr, a.cols, |slot, j| {
                *a.hits.0.add(slot) += phase_hits(wi, *a.words.0.add(j), a.valid);
            });
        }
    }
}

kernel! {
    /// Borůvka step 1: warp `i` (a row) keeps each lane's best linked pair leaving the row's
    /// component, reduces the warp's 32 (two 32-bit shuffles per step), lane 0 raises
    /// `best[comp[i]]`.
    fn ocnn_forest_best(a: ForestBest {
        n: u32,
        t: u32,
        p: u32,
        comp: DevPtr<u32>,
        hits: DevPtr<u32>,
        best: DevMut<u64>,
    }) {
        let (i, lane) = split(gid(), 32);
        let n = a.n as usize;
        if i >= n {
            return;
        }
        let c = *a.comp.0.add(i);
        let row = a.hits.0.add(i * n);
        let mut key = 0u64;
        for j in (lane..n).step_by(32) {
            let h = *row.add(j);
            if linked(h, a.p, a.t) && *a.comp.0.add(j) != c {
                key = key.max(forest_key(h, i as u32, j as u32));
            }
        }
        let key = warp_reduce(key, xor_lane64, u64::max);
        if lane == 0 && key != 0 {
            AtomicU64::from_ptr(a.best.0.add(c as usize)).fetch_max(key, Relaxed);
        }
    }
}

kernel! {
    /// Borůvka step 2, thread `c`: a root with a best pair hooks under the other component's
    /// root unless the two chose the same pair and `c` is the smaller (that one records it).
    fn ocnn_forest_hook(a: ForestHook {
        n: u32,
        comp: DevPtr<u32>,
        best: DevPtr<u64>,
        parent: DevMut<u32>,
        edges: DevMut<u64>,
        count: DevMut<u32>,
    }) {
        let c = gid();
        if c >= a.n as usize {
            return;
        }
        let key = *a.best.0.add(c);
        let mut to = c as u32;
        if key != 0 && *a.comp.0.add(c) == c as u32 {
            let (_, lo, hi) = forest_pair(key);
            // The pair was found from a row inside `c`: its other end is the other component.
            let (clo, chi) = (*a.comp.0.add(lo as usize), *a.comp.0.add(hi as usize));
            let other = if clo == c as u32 { chi } else { clo };
            let mutual = *a.best.0.add(other as usize) == key;
            if !mutual || (c as u32) < other {
                let slot = AtomicU32::from_ptr(a.count.0).fetch_add(1, Relaxed);
                *a.edges.0.add(slot as usize) = key;
            }
            if !mutual || (c as u32) > other {
                to = other;
            }
        }
        *a.parent.0.add(c) = to;
    }
}

kernel! {
    /// Borůvka step 3, thread `i`: the root above its old component.
    fn ocnn_forest_jump(a: ForestJump {
        n: u32,
        parent: DevPtr<u32>,
        comp: DevMut<u32>,
    }) {
        let i = gid();
        if i >= a.n as usize {
            return;
        }
        let mut r = *a.comp.0.add(i);
        while *a.parent.0.add(r as usize) != r {
            r = *a.parent.0.add(r as usize);
        }
        *a.comp.0.add(i) = r;
    }
}
