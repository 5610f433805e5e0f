//! OCNN kernels: thread mappings onto `neurobits_core::ocnn` (layouts on the argument structs in
//! `neurobits_core::ocnn::kernels`). The update is the paper's X-threads with a full warp per
//! neuron, which *is* the canonical lanes32 order: thread `l` of the warp is lane `l`.

use core::slice::from_raw_parts;
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::ocnn::kernels::{
    CombineYF32, CombineYF64, FragmentaryHitsF32, FragmentaryHitsF64, LanesYF32, LanesYF64, PhaseBitsF32, PhaseBitsF64,
    PhaseHits, StepF32, StepF64, StepPerNeuronF32, StepPerNeuronF64, TransferF32, TransferF64,
};
use neurobits_core::ocnn::{butterfly, combine, lane_sum, lanes32, phase_bit, phase_hits_blocks, transfer, SyncMode};

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
    /// Adds the agreements of `blocks` words of phase bits (the core's `phase_hits_blocks`) to
    /// every pair, one thread per `(i, j)` (the diagonal counts every iteration).
    fn ocnn_phase_hits(a: PhaseHits {
        n: u32,
        blocks: u32,
        valid: u32,
        words: DevPtr<u64>,
        hits: DevMut<u32>,
    }) {
        let n = a.n as usize;
        let (i, j) = split(gid(), n);
        if i < n {
            // One thread per cell: a plain add.
            let w = |k: usize| (*a.words.0.add(k * n + i), *a.words.0.add(k * n + j));
            *a.hits.0.add(i * n + j) += phase_hits_blocks(a.blocks as usize, a.valid, w);
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

mod forest;
mod points;
mod rows;
