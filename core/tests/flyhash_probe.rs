//! The approximate index's core rules: the multi-probe order against scoring every bucket, the
//! pseudo-hash against a direct computation, the Euclidean distance's fixed order.

#![allow(clippy::needless_range_loop)] // the references index several slices by one bit number

use neurobits_core::flyhash::*;
use neurobits_core::prng::{below, draw};

/// Every bucket's score, the reference: the sum of the costs of the bits it flips.
fn score(costs: &[f32], key: u32, bucket: u32) -> f64 {
    (0..costs.len()).filter(|&j| (key ^ bucket) >> j & 1 == 1).map(|j| costs[j] as f64).sum()
}

#[test]
fn probes_visit_every_bucket_once_in_score_order() {
    for seed in 0..40u64 {
        let bits = 1 + below(draw(seed, 0), 10) as usize;
        // Few distinct costs: ties between buckets happen, and the order must still hold.
        let costs: Vec<f32> = (0..bits).map(|j| below(draw(seed, 1 + j as u64), 5) as f32 * 0.25).collect();
        let key = below(draw(seed, 99), 1 << bits) as u32;
        let mut heap = vec![Probe::default(); 1 << bits];
        let keys: Vec<u32> = Probes::new(key, &costs, &mut heap).collect();
        assert_eq!(keys.len(), 1 << bits, "seed {seed}");
        assert_eq!(keys[0], key);
        let mut seen = keys.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 1 << bits, "a bucket twice, seed {seed}");
        for w in keys.windows(2) {
            assert!(score(&costs, key, w[0]) <= score(&costs, key, w[1]) + 1e-6, "seed {seed}: {keys:?}");
        }
    }
}

#[test]
fn a_small_heap_ends_the_order_early_without_skipping() {
    let costs = [0.3f32, 0.1, 0.2, 0.4, 0.5];
    let full: Vec<u32> = Probes::new(0, &costs, &mut [Probe::default(); 32]).collect();
    for cap in 1..32 {
        let part: Vec<u32> = Probes::new(0, &costs, &mut vec![Probe::default(); cap]).collect();
        assert!(part.len() >= cap.min(32), "cap {cap}: {} keys", part.len());
        assert_eq!(part[..], full[..part.len()], "cap {cap}");
    }
}

#[test]
fn pseudo_hash_matches_a_direct_computation() {
    let (bits, pool) = (12, 3);
    let act: Vec<f32> = (0..bits * pool).map(|i| below(draw(5, i as u64), 1000) as f32 / 7.0).collect();
    let mut sums = vec![0f32; bits];
    pseudo_sums(bits, pool, |i| act[i], &mut sums);
    let pooled: Vec<f32> = act.chunks(pool).map(|c| c.iter().fold(0.0f32, |s, &a| s + a)).collect();
    let mean = pooled.iter().fold(0.0f32, |s, &a| s + a) / bits as f32;
    assert_eq!(sums, pooled.iter().map(|p| p - mean).collect::<Vec<_>>());
    let thresholds: Vec<u32> = (0..bits).map(|j| sort_key(j as f32 - 6.0)).collect();
    let key = pseudo_key(&sums, &thresholds);
    for j in 0..bits {
        assert_eq!(key >> j & 1 == 1, sums[j] > j as f32 - 6.0);
    }
    let mut costs = vec![0f32; bits];
    probe_costs(&sums, &thresholds, &mut costs);
    for j in 0..bits {
        let d = sums[j] - (j as f32 - 6.0);
        assert_eq!(costs[j], d * d);
    }
}

#[test]
fn euclidean_distance_has_one_order() {
    for n in [0usize, 1, 15, 16, 17, 784] {
        let a: Vec<f32> = (0..n).map(|i| below(draw(1, i as u64), 256) as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| below(draw(2, i as u64), 256) as f32).collect();
        // Reference: the documented lanes, then the pairwise tree.
        let mut lane = [0f32; 16];
        for i in 0..n {
            let d = a[i] - b[i];
            lane[i % 16] += d * d;
        }
        for w in [8, 4, 2, 1] {
            for l in 0..w {
                lane[l] += lane[l + w];
            }
        }
        assert_eq!(sq_euclidean(&a, &b).to_bits(), lane[0].to_bits(), "n = {n}");
    }
}

#[test]
fn pixel_distance_equals_the_float_rule() {
    // Up to the longest length the integer lanes are exact for, with the largest differences.
    for n in [1usize, 16, 17, 784, 1000, PIXEL_EUCLID_MAX_DIM] {
        for seed in 0..3u64 {
            let a: Vec<u8> =
                (0..n).map(|i| if seed == 0 { 255 } else { below(draw(seed, i as u64), 256) as u8 }).collect();
            let b: Vec<u8> =
                (0..n).map(|i| if seed == 0 { 0 } else { below(draw(seed + 9, i as u64), 256) as u8 }).collect();
            let f = |v: &[u8]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
            assert_eq!(sq_euclidean_pixels(&a, &b).to_bits(), sq_euclidean(&f(&a), &f(&b)).to_bits(), "n = {n}");
        }
    }
}
