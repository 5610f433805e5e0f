//! The lane-grouped sparse sum (`lanes32_grouped`, a GPU thread per row) against the CSR form
//! (`lanes32_sparse`, the CPU's and the warp kernel's): the same bits on random rows.

use neurobits_core::ocnn::{
    grouped_by_lane, lanes32_grouped, lanes32_sparse, update_neuron_grouped, update_neuron_sparse,
};
use proptest::prelude::*;

/// Ascending distinct columns below 3 000 (some rows empty, some wider than 32 per lane).
fn row() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::btree_set(0u32..3000, 0..200).prop_map(|s| s.into_iter().collect())
}

/// The row's positions regrouped by lane (stable: ascending within a lane).
fn grouping(cols: &[u32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cols.len()).collect();
    order.sort_by_key(|&k| cols[k] % 32);
    order
}

proptest! {
    #[test]
    fn grouped_rows_sum_like_csr_rows(cols in row(), seed in any::<u64>()) {
        let order = grouping(&cols);
        let g_cols: Vec<u32> = order.iter().map(|&k| cols[k]).collect();
        prop_assert!(grouped_by_lane(&g_cols));
        // Signed terms of mixed magnitude: rounding depends on the order, so a wrong order shows.
        let t32 = |k: usize| {
            let h = (seed ^ k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            ((h >> 40) as f32 - 8_388_608.0) * f32::powi(2.0, (h % 40) as i32 - 20)
        };
        let t64 = |k: usize| t32(k) as f64 * (1.0 + 1e-9 * (k % 7) as f64);
        let csr32 = lanes32_sparse(&cols, t32);
        let grp32 = lanes32_grouped(&g_cols, |k| t32(order[k]));
        prop_assert_eq!(csr32.to_bits(), grp32.to_bits());
        let csr64 = lanes32_sparse(&cols, t64);
        let grp64 = lanes32_grouped(&g_cols, |k| t64(order[k]));
        prop_assert_eq!(csr64.to_bits(), grp64.to_bits());
    }

    #[test]
    fn grouped_updates_equal_csr_updates(cols in row(), seed in any::<u64>()) {
        let order = grouping(&cols);
        let vals: Vec<f32> = (0..cols.len()).map(|k| ((seed >> (k % 50)) & 0xFFFF) as f32 * 1e-4 + 1e-7).collect();
        let f: Vec<f32> = (0..3000u64).map(|j| (((seed ^ j).wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / 16_777_216.0) * 2.0 - 1.0).collect();
        let norm = vals.iter().sum::<f32>().max(1.0);
        let (g_cols, g_vals): (Vec<u32>, Vec<f32>) = order.iter().map(|&k| (cols[k], vals[k])).unzip();
        prop_assert_eq!(
            update_neuron_sparse(&cols, &vals, norm, &f).to_bits(),
            update_neuron_grouped(&g_cols, &g_vals, norm, &f).to_bits()
        );
    }
}

#[test]
fn a_row_out_of_lane_order_is_not_grouped() {
    assert!(grouped_by_lane(&[1, 33, 65, 40]));
    assert!(!grouped_by_lane(&[1, 33, 40, 65]));
    assert!(!grouped_by_lane(&[33, 1]));
    assert!(grouped_by_lane(&[]));
}
