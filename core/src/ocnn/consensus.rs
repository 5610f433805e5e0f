//! The coupling scale of the automatic clustering: the OCNN runs at a few scale factors (by
//! default `a`, 1.5·a, 2.5·a; above 3-D the factors multiply the coupling's perplexity instead),
//! each from two initial states, each run's most stable
//! clusters are selected, and the clustering kept is the one that agrees best with the others,
//! by its mean adjusted Rand index against all the other runs (the criterion of the median
//! partition: Strehl & Ghosh 2002 choose a consensus clustering by its average agreement with the
//! ensemble) plus its mean against the other runs at its own scale (reproducibility under a new
//! initial state: Ben-Hur, Elisseeff & Guyon 2002 take the structure that stays put under
//! perturbation as the real one). Too small a scale breaks rings and moons into arcs, and each
//! scale and initial state breaks them differently; too large a scale merges touching clusters,
//! which the smaller scales keep apart; the structure the runs share and reproduce wins.
//!
//! Integer counting, then `f64` arithmetic in a fixed order: every target that feeds the same
//! labels chooses the same scale.

use alloc::vec;
use alloc::vec::Vec;

/// The scale factors of the default automatic clustering (multiples of the scale `a`; above 3-D
/// of the coupling's perplexity).
pub const DEFAULT_SCALE_FACTORS: [f64; 3] = [1.0, 1.5, 2.5];

/// Initial states per scale of the default automatic clustering.
pub const DEFAULT_RESTARTS: u32 = 2;

/// The seed of restart `r` of a run seeded `seed`: the seed itself for `r = 0`, else a
/// SplitMix64 stream key of it (independent of the seeds a user would list, 1, 2, 3, …).
///
/// ```
/// use neurobits_core::ocnn::restart_seed;
/// assert_eq!(restart_seed(7, 0), 7);
/// assert_ne!(restart_seed(7, 1), restart_seed(8, 1));
/// assert_ne!(restart_seed(7, 1), 8);
/// ```
pub const fn restart_seed(seed: u64, r: u32) -> u64 {
    if r == 0 {
        seed
    } else {
        crate::prng::stream_key(seed, r as u64)
    }
}

/// `C(x, 2)` as `f64` (exact up to 2⁵³).
fn pairs(x: u64) -> f64 {
    (x * x.saturating_sub(1) / 2) as f64
}

/// Adjusted Rand index of two labelings of the same points (Hubert & Arabie 1985; 1 for equal
/// partitions, about 0 for independent ones); labels are any `u32`. Two partitions that are
/// both all-singletons or both one cluster are equal (1).
///
/// ```
/// use neurobits_core::ocnn::adjusted_rand;
/// assert_eq!(adjusted_rand(&[0, 0, 1, 1], &[5, 5, 2, 2]), 1.0);
/// assert!((adjusted_rand(&[0, 0, 1, 1], &[0, 1, 0, 1]) + 0.5).abs() < 1e-12);
/// assert_eq!(adjusted_rand(&[0, 1, 2], &[0, 1, 2]), 1.0);
/// ```
pub fn adjusted_rand(a: &[u32], b: &[u32]) -> f64 {
    assert_eq!(a.len(), b.len(), "two labelings of the same points");
    let n = a.len() as u64;
    let mut joint: Vec<(u32, u32)> = a.iter().copied().zip(b.iter().copied()).collect();
    joint.sort_unstable();
    // Σ C(n_ij, 2) over the contingency table, and the marginals' sums.
    let runs = |keys: &mut dyn Iterator<Item = u64>| -> f64 {
        let mut sum = 0.0;
        let (mut last, mut count) = (u64::MAX, 0u64);
        for k in keys {
            if k != last {
                sum += pairs(count);
                last = k;
                count = 0;
            }
            count += 1;
        }
        sum + pairs(count)
    };
    let index = runs(&mut joint.iter().map(|&(x, y)| (x as u64) << 32 | y as u64));
    let mut sa: Vec<u32> = a.to_vec();
    sa.sort_unstable();
    let mut sb: Vec<u32> = b.to_vec();
    sb.sort_unstable();
    let (ra, rb) = (runs(&mut sa.iter().map(|&x| x as u64)), runs(&mut sb.iter().map(|&x| x as u64)));
    let expected = ra * rb / pairs(n).max(1.0);
    let max = 0.5 * (ra + rb);
    if max == expected {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

/// Scores closer than this are a tie (the sums of the same ARIs in another order differ in the
/// last bits).
const TIE: f64 = 1e-9;

/// The candidate that agrees best with the others. Candidate `i` ran at scale `scale[i]`; its
/// score is its mean adjusted Rand index against every other candidate (the median partition's
/// criterion) plus its mean against the other candidates of its own scale (how well other
/// initial states reproduce it: 0 for a scale run once). Only candidates with `eligible[i]`
/// can win (all count in the others' scores); the highest score wins, the first on a tie (the
/// smallest scale and the configured seed, when candidates come scale by scale). Returns the
/// winner (`None` when no candidate is eligible) and every candidate's score (`f64::NAN` for the
/// ineligible; 1 for a lone candidate).
///
/// ```
/// use neurobits_core::ocnn::most_agreeing;
/// // Scale 0 breaks the two groups into arcs; scales 1 and 2 agree.
/// let parts: [&[u32]; 3] = [&[0, 0, 1, 2, 3, 3], &[0, 0, 0, 1, 1, 1], &[0, 0, 0, 1, 1, 1]];
/// let (best, score) = most_agreeing(&parts, &[0, 1, 2], &[true, true, true]);
/// assert_eq!(best, Some(1));
/// assert!(score[1] > score[0]);
/// assert_eq!(most_agreeing(&parts, &[0, 1, 2], &[true, false, false]).0, Some(0));
/// assert_eq!(most_agreeing(&parts, &[0, 1, 2], &[false; 3]).0, None);
/// // Two scales, two runs each: the runs of scale 0 agree with each other, those of scale 1
/// // do not; scale 0 wins although each scale's runs agree as much with the other scale.
/// let parts: [&[u32]; 4] = [&[0, 0, 1, 1], &[0, 0, 1, 1], &[0, 0, 0, 1], &[0, 1, 1, 1]];
/// assert_eq!(most_agreeing(&parts, &[0, 0, 1, 1], &[true; 4]).0, Some(0));
/// ```
pub fn most_agreeing(parts: &[&[u32]], scale: &[u32], eligible: &[bool]) -> (Option<usize>, Vec<f64>) {
    assert!(parts.len() == eligible.len() && parts.len() == scale.len(), "one scale and flag per candidate");
    let mut score = vec![f64::NAN; parts.len()];
    let mut best: Option<usize> = None;
    for i in (0..parts.len()).filter(|&i| eligible[i]) {
        let (mut all, mut same, mut siblings) = (0.0, 0.0, 0usize);
        for (j, other) in parts.iter().enumerate() {
            if j != i {
                let r = adjusted_rand(parts[i], other);
                all += r;
                if scale[j] == scale[i] {
                    same += r;
                    siblings += 1;
                }
            }
        }
        score[i] = if parts.len() > 1 { all / (parts.len() - 1) as f64 } else { 1.0 };
        if siblings > 0 {
            score[i] += same / siblings as f64;
        }
        if best.is_none_or(|b| score[i] > score[b] + TIE) {
            best = Some(i);
        }
    }
    (best, score)
}

/// The smallest clusters the default consensus tries, as divisors of the point count: `N/10`
/// (the selection's default, [`crate::ocnn::default_min_cluster`]), then `N/20` and `N/40`.
pub const MIN_CLUSTER_DIVISORS: [usize; 3] = [10, 20, 40];

/// How much better (in mean adjusted Rand index over every pair of runs) the runs at a smaller
/// smallest cluster must agree before it replaces the larger one. Chosen on validation sets only
/// (docs/manual/src/ocnn-many-clusters.md): 0 and 0.05 let chance differences of a few
/// hundredths pick a finer clustering on 2-D blobs and blobs of varied density; 0.1 and 0.15
/// keep every validation family within 0.001 of its former mean ARI except those whose true
/// clusters are smaller than `N/10`.
pub const MIN_CLUSTER_MARGIN: f64 = 0.1;

/// The smallest clusters of [`MIN_CLUSTER_DIVISORS`] for `n` points, largest first, each at
/// least 5 (the [`crate::ocnn::default_min_cluster`] of `n` first), without repeats.
///
/// ```
/// use neurobits_core::ocnn::min_cluster_candidates;
/// assert_eq!(min_cluster_candidates(500), vec![50, 25, 12]);
/// assert_eq!(min_cluster_candidates(100), vec![10, 5]);
/// assert_eq!(min_cluster_candidates(20), vec![5]);
/// ```
pub fn min_cluster_candidates(n: usize) -> Vec<u32> {
    let mut out = vec![crate::ocnn::default_min_cluster(n)];
    for d in &MIN_CLUSTER_DIVISORS[1..] {
        let m = (n / d).max(5) as u32;
        if m < *out.last().expect("one entry") {
            out.push(m);
        }
    }
    out
}

/// Mean adjusted Rand index over every unordered pair of `parts` (in the order `i < j`, `j`
/// ascending; 1 for fewer than two); a pair with a run that found no clustering (`None`) counts
/// 0 — two failed runs do not agree on anything.
///
/// ```
/// use neurobits_core::ocnn::mean_agreement;
/// let parts: [Option<&[u32]>; 3] = [Some(&[0, 0, 1, 1]), Some(&[0, 0, 1, 1]), Some(&[0, 1, 0, 1])];
/// assert!((mean_agreement(&parts) - (1.0 - 0.5 - 0.5) / 3.0).abs() < 1e-12);
/// let failed: [Option<&[u32]>; 3] = [Some(&[0, 0, 1, 1]), None, None];
/// assert_eq!(mean_agreement(&failed), 0.0);
/// ```
pub fn mean_agreement(parts: &[Option<&[u32]>]) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for i in 0..parts.len() {
        for j in i + 1..parts.len() {
            if let (Some(a), Some(b)) = (parts[i], parts[j]) {
                sum += adjusted_rand(a, b);
            }
            count += 1;
        }
    }
    if count == 0 {
        1.0
    } else {
        sum / count as f64
    }
}

/// Which smallest cluster to keep, from the [`mean_agreement`] of each candidate's runs, largest
/// smallest cluster first (`None` where no run at that size found two clusters): the first
/// usable one, replaced by a later one only when its runs agree by more than
/// [`MIN_CLUSTER_MARGIN`] better than the kept one's (stability as the criterion of the
/// structure's scale, as Ben-Hur, Elisseeff & Guyon 2002 choose the number of clusters; the
/// margin keeps the default unless the finer selection is clearly more reproducible). `None`
/// when no candidate is usable.
///
/// ```
/// use neurobits_core::ocnn::pick_min_cluster;
/// assert_eq!(pick_min_cluster(&[Some(0.80), Some(1.0), Some(1.0)]), Some(1));
/// assert_eq!(pick_min_cluster(&[Some(0.95), Some(1.0), Some(1.0)]), Some(0));
/// assert_eq!(pick_min_cluster(&[None, Some(0.5), Some(0.55)]), Some(1));
/// assert_eq!(pick_min_cluster(&[None, None]), None);
/// ```
pub fn pick_min_cluster(agreement: &[Option<f64>]) -> Option<usize> {
    let mut kept: Option<(usize, f64)> = None;
    for (i, a) in agreement.iter().enumerate() {
        if let Some(a) = *a {
            if kept.is_none_or(|(_, k)| a > k + MIN_CLUSTER_MARGIN) {
                kept = Some((i, a));
            }
        }
    }
    kept.map(|(i, _)| i)
}
