//! Points with no coupling at the scale: left out of the dynamics as singletons.
//!
//! A point whose nearest neighbour lies beyond where the Gaussian weight underflows (about
//! 14.4·a in `f32`) has `C_i = 0`: no input, a neuron the map cannot update (spec OPEN-11). At
//! that scale such a point is coupled to nothing (a larger scale of the consensus might couple
//! it, weakly, to its far neighbours), so the clustering runs on the
//! other points as if it were not there — the scale found again without it unless given, again
//! until no point is left uncoupled — and labels each left-out point a cluster of its own (as
//! HDBSCAN labels outliers noise) instead of refusing the data: up to issue 33's sixth round one
//! far outlier made the default clustering fail in 2-D, and above 3-D widened every neuron's
//! coupling through a floor on the scale. So the others' labels are those of the set without
//! the left-out points (tested); half the points or more uncoupled is still an error.

use super::points::Points;
use super::Report;

/// The points of `p` but `left` (ascending), and the kept points' indices in `p`.
///
/// ```
/// let p = neurobits::ocnn::points::parse("0 0\n1 0\n9 9\n2 0\n", "mem").unwrap();
/// let (sub, keep) = neurobits::ocnn::uncoupled::without(&p, &[2]);
/// assert_eq!((sub.n, sub.point(2)), (3, &[2.0, 0.0][..]));
/// assert_eq!(keep, vec![0, 1, 3]);
/// ```
pub fn without(p: &Points, left: &[u32]) -> (Points, Vec<u32>) {
    let keep: Vec<u32> = (0..p.n as u32).filter(|i| left.binary_search(i).is_err()).collect();
    let coords = keep.iter().flat_map(|&i| p.point(i as usize).iter().copied()).collect();
    (Points { n: keep.len(), dim: p.dim, coords }, keep)
}

/// The report of the points `keep` of a set of `n` as a report of all `n`: the left-out points
/// each a singleton, clusters numbered again by their smallest member, `k` and the `k(p)` curve
/// counting the singletons, `uncoupled` their number.
pub fn expand(mut r: Report, keep: &[u32], n: usize) -> Report {
    let left = (n - keep.len()) as u32;
    let mut labels = vec![u32::MAX; n];
    for (&i, &l) in keep.iter().zip(&r.labels) {
        labels[i as usize] = l;
    }
    let (mut map, mut next) = (vec![u32::MAX; r.k as usize], 0u32);
    for l in labels.iter_mut() {
        let old = *l;
        let fresh = old == u32::MAX || map[old as usize] == u32::MAX;
        if fresh {
            if old != u32::MAX {
                map[old as usize] = next;
            }
            *l = next;
            next += 1;
        } else {
            *l = map[old as usize];
        }
    }
    r.labels = labels;
    r.n = n;
    r.k += left;
    r.curve.iter_mut().for_each(|(_, k)| *k += left);
    r.uncoupled = left as usize;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expanded_labels_are_numbered_by_smallest_member() {
        let p = crate::ocnn::points::parse("0 0\n50 50\n0 1\n1 0\n60 60\n", "mem").unwrap();
        let (sub, keep) = without(&p, &[1, 4]);
        assert_eq!((sub.n, keep.clone()), (3, vec![0, 2, 3]));
        let mut r: Report = serde_json::from_str(
            r#"{"n":3,"dim":2,"a":1.0,"threshold_percent":60,"k":2,"k_non_singleton":1,"curve":[[50,1],[60,2]],
                "hits_sha256":"","coupled_pairs":3,"state_sha256":"","seconds":{}}"#,
        )
        .unwrap();
        r.labels = vec![0, 1, 0];
        let e = expand(r, &keep, 5);
        assert_eq!(e.labels, vec![0, 1, 2, 0, 3]);
        assert_eq!((e.n, e.k, e.k_non_singleton, e.uncoupled), (5, 4, 1, 2));
        assert_eq!(e.curve, vec![(50, 3), (60, 4)]);
    }
}
