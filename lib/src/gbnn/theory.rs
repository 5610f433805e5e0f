//! The GBNN's theoretical density and one-iteration erasure error rate, to size a network before
//! building it and to draw beside the measured rates (`gbnn experiment`).
//!
//! * Density (Gripon & Berrou 2011, Eq. 7): after `M` uniform messages of `C` clusters of `L`
//!   neurons, a given edge between two neurons of different clusters exists with probability
//!   `d = 1 − (1 − 1/L²)^M`.
//! * Sparse messages (`c` of `χ` clusters active, Aliabadi et al. 2014): a message uses a given
//!   ordered cluster pair with probability `c(c−1) / (χ(χ−1))`, so
//!   `d = 1 − (1 − c(c−1) / (χ(χ−1) L²))^M` (equal to the above for `c = χ`).
//! * Erasure error rate after one iteration (Gripon & Berrou 2011, Eq. 8): with `c_e` of `c`
//!   clusters erased, each of the `c_e (L − 1)` wrong neurons of the erased clusters is connected
//!   to all `c − c_e` known neurons with probability `d^{c − c_e}`, and retrieval fails if any is:
//!   `P_e = 1 − (1 − d^{c − c_e})^{c_e (L − 1)}`.

use neurobits_core::gbnn::Network;

/// Theoretical density after `m` messages of `active` of `clusters` clusters of `l` neurons.
///
/// ```
/// use neurobits::gbnn::theory::density;
/// let d = density(8, 8, 128, 5000);
/// assert!((d - (1.0 - (1.0 - 1.0 / 16384f64).powi(5000))).abs() < 1e-12);
/// assert!(density(4, 8, 128, 5000) < d);
/// ```
pub fn density(active: usize, clusters: usize, l: usize, m: u64) -> f64 {
    if clusters < 2 || active < 2 {
        return 0.0;
    }
    let pair = (active * (active - 1)) as f64 / (clusters * (clusters - 1)) as f64;
    1.0 - (1.0 - pair / (l as f64 * l as f64)).powf(m as f64)
}

/// One-iteration erasure error rate `P_e` for `erased` of `clusters` clusters erased.
///
/// ```
/// use neurobits::gbnn::theory::erasure_error;
/// assert_eq!(erasure_error(0.0, 8, 4, 128), 0.0);
/// assert!((erasure_error(0.5, 4, 2, 3) - (1.0 - 0.75f64.powi(4))).abs() < 1e-12);
/// ```
pub fn erasure_error(d: f64, clusters: usize, erased: usize, l: usize) -> f64 {
    let known = clusters.saturating_sub(erased) as i32;
    let candidates = (erased * l.saturating_sub(1)) as f64;
    1.0 - (1.0 - d.powi(known)).powf(candidates)
}

/// The measured density of `net`: edges present over the `C(C−1)L²` possible (directed).
///
/// ```
/// let mut net = neurobits_core::gbnn::Network::new(3, 2).unwrap();
/// net.store(&[0, 1, 0]).unwrap();
/// assert!((neurobits::gbnn::theory::measured_density(&net) - 6.0 / 24.0).abs() < 1e-12);
/// ```
pub fn measured_density(net: &Network) -> f64 {
    let g = net.geometry();
    let (c, l) = (g.clusters() as f64, g.neurons_per_cluster() as f64);
    let edges: u64 = net.weights().iter().map(|w| w.count_ones() as u64).sum();
    if c < 2.0 {
        return 0.0;
    }
    edges as f64 / (c * (c - 1.0) * l * l)
}
