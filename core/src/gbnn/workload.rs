//! Random messages and probes, drawn pointwise from [`crate::prng`] so that every target builds
//! the same workload from the same seeds.
//!
//! * Symbol `c` of message `k` is `below(draw(stream_key(seed, 1), k·C + c), L)`.
//! * Probe `p` is stored message `π(p)` with `π` = [`Permutation`] keyed by
//!   `stream_key(probe_seed, 2)` over the `M` stored messages (so `K ≤ M` probes are distinct).
//! * Its erased clusters are chosen by Floyd's algorithm from draws `p·C + j` of
//!   `stream_key(probe_seed, 3)`: exactly `e` distinct clusters.

use super::{Geometry, ERASED};
use crate::prng::{below, draw, stream_key, Permutation};
use crate::Error;

const MESSAGES: u64 = 1;
const PICK: u64 = 2;
const ERASE: u64 = 3;

/// Writes message `k` of the random message stream `seed` into `out` (`C` symbols).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, workload::message};
/// let g = Geometry::new(4, 10).unwrap();
/// let (mut a, mut b) = ([0u16; 4], [0u16; 4]);
/// message(&g, 42, 7, &mut a);
/// message(&g, 42, 7, &mut b);
/// assert_eq!(a, b);
/// assert!(a.iter().all(|&s| s < 10));
/// ```
#[inline]
pub fn message(geom: &Geometry, seed: u64, k: u64, out: &mut [u16]) {
    let key = stream_key(seed, MESSAGES);
    let c_count = geom.clusters() as u64;
    let l = geom.neurons_per_cluster() as u64;
    for (c, s) in out.iter_mut().enumerate().take(geom.clusters()) {
        *s = below(draw(key, k.wrapping_mul(c_count) + c as u64), l) as u16;
    }
}

/// Mask of `e` distinct clusters among `C`, chosen by Floyd's algorithm from the given key.
///
/// ```
/// use neurobits_core::gbnn::workload::erased_clusters;
/// assert_eq!(erased_clusters(9, 0, 8, 3).count_ones(), 3);
/// assert_eq!(erased_clusters(9, 0, 8, 8), 0xFF);
/// ```
#[inline]
pub fn erased_clusters(key: u64, p: u64, clusters: usize, erased: usize) -> u64 {
    let mut set = 0u64;
    let base = p.wrapping_mul(clusters as u64);
    for j in (clusters - erased)..clusters {
        let t = below(draw(key, base + j as u64), j as u64 + 1);
        set |= if set & (1 << t) != 0 { 1 << j } else { 1 << t };
    }
    set
}

/// A reproducible batch of probes: `count` distinct messages of a message stream, each with
/// `erased` clusters erased.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, workload::ProbePlan};
/// let g = Geometry::new(8, 128).unwrap();
/// let plan = ProbePlan::new(g, 1, 5000, 2, 3000, 4).unwrap();
/// let mut p = [0u16; 8];
/// let k = plan.probe(0, &mut p);
/// assert!(k < 5000);
/// assert_eq!(p.iter().filter(|&&s| s == ERASED).count(), 4);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ProbePlan {
    geom: Geometry,
    message_seed: u64,
    erase_key: u64,
    erased: usize,
    count: u64,
    perm: Permutation,
}

impl ProbePlan {
    /// `count` probes of the `stored` messages of stream `message_seed`, picked and erased with
    /// `probe_seed`. Probes of messages that were never stored come from a `message_seed` other
    /// than the one used to store.
    pub fn new(
        geom: Geometry,
        message_seed: u64,
        stored: u64,
        probe_seed: u64,
        count: u64,
        erased: usize,
    ) -> Result<Self, Error> {
        if count > stored {
            return Err(Error::TooManyProbes(count, stored));
        }
        if erased > geom.clusters() {
            return Err(Error::TooManyErased(erased, geom.clusters()));
        }
        Ok(ProbePlan {
            geom,
            message_seed,
            erase_key: stream_key(probe_seed, ERASE),
            erased,
            count,
            perm: Permutation::new(stream_key(probe_seed, PICK), stored),
        })
    }

    /// Number of probes.
    pub const fn len(&self) -> u64 {
        self.count
    }

    /// Whether the plan has no probes.
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Writes the full (unerased) message behind probe `p` into `out`; returns its index.
    #[inline]
    pub fn truth(&self, p: u64, out: &mut [u16]) -> u64 {
        let k = self.perm.apply(p);
        message(&self.geom, self.message_seed, k, out);
        k
    }

    /// Writes probe `p` (erased symbols = [`ERASED`]) into `out`; returns the message index.
    #[inline]
    pub fn probe(&self, p: u64, out: &mut [u16]) -> u64 {
        let k = self.truth(p, out);
        let mask = erased_clusters(self.erase_key, p, self.geom.clusters(), self.erased);
        for (c, s) in out.iter_mut().enumerate().take(self.geom.clusters()) {
            if mask & (1 << c) != 0 {
                *s = ERASED;
            }
        }
        k
    }
}
