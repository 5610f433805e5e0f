//! The sparse coupling's rows for a GPU thread per row: sliced ELL with 32 rows per slice
//! (SELL-32), each row grouped by lane.
//!
//! A thread per row reads its row's `k`-th entry in step `k`; stored row after row (CSR) the 32
//! threads of a warp then load from 32 scattered places each step. In a slice the `k`-th entries
//! of its 32 rows lie side by side ([`sell_entry`]), so each step is one coalesced load; a slice
//! is as wide as its longest row (the shorter rows' tails are padding, never read). Each row's
//! entries are *grouped by lane* (lane 0's columns ascending, then lane 1's, …), so that
//! [`lanes32_grouped_at`] keeps its 32 accumulators in registers and gives the CSR row's bits.
//!
//! [`lanes32_grouped_at`]: super::lanes32_grouped_at

use crate::kernel::{kernel_struct, DevMut, DevPtr};

/// Rows per slice: a warp.
pub const SLICE: usize = 32;

/// Position of entry `k` of row `r` (`0..32`) in the slice that starts at `base`.
///
/// ```
/// assert_eq!(neurobits_core::ocnn::kernels::sell_entry(640, 2, 5), 640 + 2 * 32 + 5);
/// ```
#[inline(always)]
pub const fn sell_entry(base: usize, k: usize, r: usize) -> usize {
    base + k * SLICE + r
}

/// The slices' first entries from the CSR row offsets `ptr` (`n + 1`): `out[s]` for every slice
/// and the total last (`out.len()` = `⌈n / 32⌉ + 1`); `None` when `out` has another length.
///
/// ```
/// use neurobits_core::ocnn::kernels::sell_offsets;
/// // 33 rows: the first slice as wide as its longest row (3), the second holds row 32 alone.
/// let mut ptr = vec![0u64];
/// for i in 0..33u64 { ptr.push(ptr[i as usize] + if i == 7 { 3 } else { 1 }); }
/// let mut out = [0u64; 3];
/// sell_offsets(&ptr, &mut out).unwrap();
/// assert_eq!(out, [0, 96, 128]);
/// ```
pub fn sell_offsets(ptr: &[u64], out: &mut [u64]) -> Option<()> {
    let n = ptr.len().checked_sub(1)?;
    if out.len() != n.div_ceil(SLICE) + 1 {
        return None;
    }
    let mut at = 0u64;
    for (s, o) in out.iter_mut().enumerate().take(n.div_ceil(SLICE)) {
        *o = at;
        let rows = s * SLICE..n.min(s * SLICE + SLICE);
        let width = rows.map(|i| ptr[i + 1] - ptr[i]).max().unwrap_or(0);
        at += width * SLICE as u64;
    }
    out[n.div_ceil(SLICE)] = at;
    Some(())
}

/// The SELL kernels' argument structs, once per working type.
macro_rules! sell {
    ($t:ty, $Step:ident => $KStep:ident, $Fill:ident => $KFill:ident) => {
        kernel_struct! {
            /// The sparse step, one thread per neuron over its SELL row (the core's
            /// `lanes32_grouped_at`), `s_i / C_i` written: the CSR row's bits.
            $Step => $KStep {
                /// Neurons.
                n: u32,
                /// CSR row offsets (`n + 1`): the rows' lengths.
                ptr: DevPtr<u64>,
                /// The slices' first entries (`⌈n/32⌉ + 1`, [`sell_offsets`]).
                sptr: DevPtr<u64>,
                /// Columns, SELL layout.
                cols: DevPtr<u32>,
                /// Weights, SELL layout.
                vals: DevPtr<$t>,
                /// Row norms.
                norm: DevPtr<$t>,
                /// Transfer values.
                f: DevPtr<$t>,
                /// Next states, written.
                next: DevMut<$t>,
            }
        }

        kernel_struct! {
            /// Builds the SELL rows from the CSR rows on the device, one thread per row: row
            /// `i`'s entries of lane 0, then lane 1, … (ascending columns within a lane).
            $Fill => $KFill {
                /// Neurons.
                n: u32,
                /// CSR row offsets.
                ptr: DevPtr<u64>,
                /// CSR columns, ascending per row.
                cols: DevPtr<u32>,
                /// CSR weights.
                vals: DevPtr<$t>,
                /// The slices' first entries.
                sptr: DevPtr<u64>,
                /// SELL columns, written.
                out_cols: DevMut<u32>,
                /// SELL weights, written.
                out_vals: DevMut<$t>,
            }
        }
    };
}

sell!(f32, StepSellF32 => OcnnStepSellF32, SellFillF32 => OcnnSellFillF32);
sell!(f64, StepSellF64 => OcnnStepSellF64, SellFillF64 => OcnnSellFillF64);
