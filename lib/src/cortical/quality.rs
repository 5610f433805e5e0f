//! What a trained network is judged by (spec §11.5): strict memorisation of the training list,
//! the held-out scores, and the readouts (the competitive rule's population-code 1-NN, the spec
//! rule's nearest-feature agreement, the earlier vote).

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

/// The population-code readout of the competitive rule over many images: for each test code
/// row (`width` values, [`super::cpu::population`]), the core's
/// [`neurobits_core::cortical::nearest_code`] among the training rows (1-NN in L1 on every
/// minicolumn's matched mass; ties → the earliest training image), test rows in parallel.
///
/// ```
/// use neurobits::cortical::quality::nearest_code;
/// let train = [0, 10, 10, 0, 5, 5];
/// assert_eq!(nearest_code(&train, &[9, 1, 0, 0, 5, 6], 2), [1, 0, 2]);
/// ```
pub fn nearest_code(train: &[u32], test: &[u32], width: usize) -> Vec<usize> {
    use rayon::prelude::*;
    test.par_chunks(width).map(|x| neurobits_core::cortical::nearest_code(train, x).unwrap_or(0)).collect()
}

/// Normalised mutual information `I(A; B) / sqrt(H(A)·H(B))` (0 when either is constant).
///
/// ```
/// use neurobits::cortical::quality::nmi;
/// assert!((nmi(&[(0, 5), (0, 5), (1, 6), (1, 6)]) - 1.0).abs() < 1e-12);
/// assert_eq!(nmi(&[(0, 5), (0, 6)]), 0.0);
/// ```
pub fn nmi(pairs: &[(i64, i64)]) -> f64 {
    // Ordered maps: the sums run in one order, so the same pairs always give the same bits.
    use std::collections::BTreeMap;
    let n = pairs.len() as f64;
    if pairs.is_empty() {
        return 0.0;
    }
    let (mut a, mut b, mut ab) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for &(x, y) in pairs {
        *a.entry(x).or_insert(0.0) += 1.0;
        *b.entry(y).or_insert(0.0) += 1.0;
        *ab.entry((x, y)).or_insert(0.0) += 1.0;
    }
    let h = |m: &BTreeMap<i64, f64>| -m.values().map(|&c| c / n * (c / n).ln()).sum::<f64>();
    let (ha, hb) = (h(&a), h(&b));
    if ha <= 0.0 || hb <= 0.0 {
        return 0.0;
    }
    let mi: f64 = ab.iter().map(|(&(x, y), &c)| c / n * ((c * n) / (a[&x] * b[&y])).ln()).sum();
    (mi / (ha * hb).sqrt()).clamp(0.0, 1.0)
}

/// How the network answers held-out images: the top level's coverage, the purity and NMI of its
/// winners as clusters, their accuracy when each winner carries the majority label of the
/// training images it answers (the k-means-transfer analogue), and the readout's accuracy/NMI.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HeldOut {
    /// Held-out images.
    pub images: usize,
    /// Fraction of them the top hypercolumn answers.
    pub coverage: f64,
    /// Distinct top winners over them.
    pub distinct_top: usize,
    /// Σ over top winners of their majority label's count / **all** held-out images (silent
    /// images count as wrong).
    pub purity: f64,
    /// NMI of (top winner, label) over all held-out images (silent = one more cluster).
    pub nmi: f64,
    /// Top winner → the majority label of the training images it answers; silent or unseen
    /// winners are wrong.
    pub cluster_accuracy: f64,
    /// The readout's accuracy.
    pub readout_accuracy: f64,
    /// The readout's NMI of (predicted, true).
    pub readout_nmi: f64,
    /// The competitive rule's earlier readout, [`vote`] over the winners, for comparison (the
    /// readout is now [`nearest_code`]); `None` under the spec's rule.
    pub vote_accuracy: Option<f64>,
}

/// Scores held-out top winners `top` (labels `labels`) against the training images' top winners
/// `train_top` (labels `train_labels`); the readout's predictions `pred` come from elsewhere.
pub fn held_out(top: &[i32], labels: &[u32], train_top: &[i32], train_labels: &[u32], pred: &[i64]) -> HeldOut {
    use std::collections::{BTreeMap, BTreeSet};
    let majority = |pairs: &mut dyn Iterator<Item = (i32, u32)>| {
        let mut by: BTreeMap<i32, BTreeMap<u32, usize>> = BTreeMap::new();
        for (w, l) in pairs.filter(|p| p.0 >= 0) {
            *by.entry(w).or_default().entry(l).or_default() += 1;
        }
        // The most frequent label, ties to the smallest.
        by.into_iter()
            .map(|(w, ls)| {
                let best = ls.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(&l, &c)| (l, c)).unwrap();
                (w, best)
            })
            .collect::<BTreeMap<i32, (u32, usize)>>()
    };
    let n = top.len().max(1) as f64;
    let own = majority(&mut top.iter().copied().zip(labels.iter().copied()));
    let learnt = majority(&mut train_top.iter().copied().zip(train_labels.iter().copied()));
    let right = top.iter().zip(labels).filter(|(w, l)| learnt.get(w).is_some_and(|m| m.0 == **l)).count();
    let pairs: Vec<(i64, i64)> = top.iter().zip(labels).map(|(&w, &l)| (w as i64, l as i64)).collect();
    let truth: Vec<(i64, i64)> = pred.iter().zip(labels).map(|(&p, &l)| (p, l as i64)).collect();
    HeldOut {
        images: top.len(),
        coverage: top.iter().filter(|&&w| w >= 0).count() as f64 / n,
        distinct_top: top.iter().filter(|&&w| w >= 0).collect::<BTreeSet<_>>().len(),
        purity: own.values().map(|m| m.1).sum::<usize>() as f64 / n,
        nmi: nmi(&pairs),
        cluster_accuracy: right as f64 / n,
        readout_accuracy: truth.iter().filter(|(p, t)| p == t).count() as f64 / n,
        readout_nmi: nmi(&truth),
        vote_accuracy: None,
    }
}

/// The competitive rule's readout until 2026-11-26 (kept for comparison): every hypercolumn's
/// winner votes for each label with the log of its smoothed frequency among the training images
/// that chose that winner (naive Bayes over the hypercolumns' winners, add-one smoothing, `m`
/// minicolumns + silence); the label with the largest sum wins (ties: the smallest label).
/// `train`/`test` are `[image][hc]` winners.
///
/// ```
/// use neurobits::cortical::quality::vote;
/// // One hypercolumn: winner 0 seen with label 7, winner 1 with label 9.
/// assert_eq!(vote(&[0, 1, 0], &[7, 9, 7], &[1, 0, -1], 1, 2), [9, 7, 7]);
/// ```
pub fn vote(train: &[i32], train_labels: &[u32], test: &[i32], n_hc: usize, m: usize) -> Vec<i64> {
    let mut classes: Vec<u32> = train_labels.to_vec();
    classes.sort_unstable();
    classes.dedup();
    let k = classes.len();
    let slot = |w: i32| (w + 1) as usize; // −1 (silent) → 0
    let mut counts = vec![0u32; n_hc * (m + 1) * k];
    let mut per_class = vec![0u32; k];
    for (row, l) in train.chunks(n_hc).zip(train_labels) {
        let c = classes.binary_search(l).unwrap();
        per_class[c] += 1;
        for (h, &w) in row.iter().enumerate() {
            counts[(h * (m + 1) + slot(w)) * k + c] += 1;
        }
    }
    let n = train_labels.len() as f64;
    test.chunks(n_hc)
        .map(|row| {
            let score = |c: usize| {
                let nc = per_class[c] as f64;
                let lik: f64 = row
                    .iter()
                    .enumerate()
                    .map(|(h, &w)| {
                        ((counts[(h * (m + 1) + slot(w)) * k + c] as f64 + 1.0) / (nc + m as f64 + 1.0)).ln()
                    })
                    .sum();
                lik + (nc / n).ln()
            };
            let best = (0..k).map(|c| (score(c), c)).fold((f64::NEG_INFINITY, 0), |a, b| if b.0 > a.0 { b } else { a });
            classes[best.1] as i64
        })
        .collect()
}
