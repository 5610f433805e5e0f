//! What a trained network is judged by (spec §11.5): strict memorisation of the training list
//! and the nearest-feature readout of the test list.

use serde::Serialize;

/// Memorisation of the training list from the evaluation winners.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Memorisation {
    /// Fraction of training images the top hypercolumn answers (not silent).
    pub coverage: f64,
    /// Distinct top winners over the training images.
    pub distinct_top: usize,
    /// Σ over top winners of their majority label's count / answered images.
    pub purity: f64,
    /// Normalised mutual information of (top winner, label) over the answered images.
    pub nmi: f64,
    /// Per level: fraction of (image, hypercolumn) pairs that are not silent.
    pub level_activity: Vec<f64>,
}

/// Scores the top-level winners `top[i]` (`-1` silent) against `labels[i]`; `winners` is
/// `[image][hc]` for the per-level activity, `levels` the ranges of each level's ids.
pub fn memorisation(
    top: &[i32],
    labels: &[u32],
    winners: &[i32],
    n_hc: usize,
    levels: &[(usize, usize)],
) -> Memorisation {
    let answered: Vec<(i64, i64)> =
        top.iter().zip(labels).filter(|(w, _)| **w >= 0).map(|(&w, &l)| (w as i64, l as i64)).collect();
    let mut distinct: Vec<i32> = top.iter().copied().filter(|&w| w >= 0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let purity = if answered.is_empty() {
        0.0
    } else {
        let majority: usize = distinct
            .iter()
            .map(|&w| {
                let mut ls: Vec<i64> = answered.iter().filter(|a| a.0 == w as i64).map(|a| a.1).collect();
                ls.sort_unstable();
                ls.chunk_by(|a, b| a == b).map(|c| c.len()).max().unwrap_or(0)
            })
            .sum();
        majority as f64 / answered.len() as f64
    };
    let level_activity = levels
        .iter()
        .map(|&(o, n)| {
            let active: usize = winners.chunks(n_hc).map(|img| img[o..o + n].iter().filter(|&&w| w >= 0).count()).sum();
            active as f64 / (n * (winners.len() / n_hc).max(1)) as f64
        })
        .collect();
    Memorisation {
        coverage: answered.len() as f64 / top.len().max(1) as f64,
        distinct_top: distinct.len(),
        purity,
        nmi: nmi(&answered),
        level_activity,
    }
}

/// The nearest-feature readout: each test image takes the label of the training image whose
/// nearest features (`Net::features`: per hypercolumn the best-matching minicolumn, firing or
/// not) agree on the most hypercolumns (ties → the earliest training image). Returns `(accuracy, NMI of (predicted, true))`.
pub fn readout(train: &[i32], train_labels: &[u32], test: &[i32], test_labels: &[u32], n_hc: usize) -> (f64, f64) {
    let near = nearest(train, test, n_hc);
    let pairs: Vec<(i64, i64)> =
        near.iter().zip(test_labels).map(|(&k, &truth)| (train_labels[k] as i64, truth as i64)).collect();
    let right = pairs.iter().filter(|(p, t)| p == t).count();
    (right as f64 / pairs.len().max(1) as f64, nmi(&pairs))
}

/// For each test feature row (`n_hc` values), the training row sharing the most values with it
/// (ties: the first): the readout's nearest neighbour.
pub fn nearest(train: &[i32], test: &[i32], n_hc: usize) -> Vec<usize> {
    use rayon::prelude::*;
    test.par_chunks(n_hc)
        .map(|x| {
            let mut best = (0usize, 0usize);
            for (k, y) in train.chunks(n_hc).enumerate() {
                let same = x.iter().zip(y).filter(|(a, b)| a == b).count();
                if k == 0 || same > best.0 {
                    best = (same, k);
                }
            }
            best.1
        })
        .collect()
}

/// Normalised mutual information `I(A; B) / sqrt(H(A)·H(B))` (0 when either is constant).
///
/// ```
/// use neurobits::cortical::quality::nmi;
/// assert!((nmi(&[(0, 5), (0, 5), (1, 6), (1, 6)]) - 1.0).abs() < 1e-12);
/// assert_eq!(nmi(&[(0, 5), (0, 6)]), 0.0);
/// ```
pub fn nmi(pairs: &[(i64, i64)]) -> f64 {
    use std::collections::HashMap;
    let n = pairs.len() as f64;
    if pairs.is_empty() {
        return 0.0;
    }
    let (mut a, mut b, mut ab) = (HashMap::new(), HashMap::new(), HashMap::new());
    for &(x, y) in pairs {
        *a.entry(x).or_insert(0.0) += 1.0;
        *b.entry(y).or_insert(0.0) += 1.0;
        *ab.entry((x, y)).or_insert(0.0) += 1.0;
    }
    let h = |m: &HashMap<i64, f64>| -m.values().map(|&c| c / n * (c / n).ln()).sum::<f64>();
    let (ha, hb) = (h(&a), h(&b));
    if ha <= 0.0 || hb <= 0.0 {
        return 0.0;
    }
    let mi: f64 = ab.iter().map(|(&(x, y), &c)| c / n * ((c * n) / (a[&x] * b[&y])).ln()).sum();
    (mi / (ha * hb).sqrt()).clamp(0.0, 1.0)
}
