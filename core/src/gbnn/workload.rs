//! Random messages and probes, drawn pointwise from [`crate::prng`] so that every target builds
//! the same workload from the same seeds.
//!
//! * Symbol `c` of message `k` is `below(draw(stream_key(seed, 1), k·C + c), L)`.
//! * Probe `p` is stored message `π(p)` with `π` = [`Permutation`] keyed by
//!   `stream_key(probe_seed, 2)` over the `M` stored messages (so `K ≤ M` probes are distinct).
//! * Its erased clusters are chosen by Floyd's algorithm from draws `p·C + j` of
//!   `stream_key(probe_seed, 3)`: exactly `e` distinct clusters (ranks among the active clusters
//!   of a sparse message; with every cluster active, the cluster indices themselves).
//! * A sparse message (`c` of `C` clusters active) silences the `C − c` clusters chosen the same
//!   way from draws `k·C + j` of `stream_key(seed, 4)`; with `c = C` it is the full message.
//! * A noisy probe substitutes `s` of its remaining known clusters (ranks chosen from
//!   `stream_key(probe_seed, 5)`), each by `(x + 1 + below(draw(stream_key(probe_seed, 6),
//!   p·C + cluster), L − 1)) mod L`: always a different symbol.

use super::{Geometry, ERASED, SILENT};
use crate::prng::{below, draw, stream_key, Permutation};
use crate::Error;

const MESSAGES: u64 = 1;
const PICK: u64 = 2;
const ERASE: u64 = 3;
const SILENCE: u64 = 4;
const SUBSTITUTE: u64 = 5;
const SYMBOL: u64 = 6;

/// Message `k` of the stream `seed` with only `active` clusters active, the others [`SILENT`]
/// (see the module's notes); `active = C` gives [`message`].
///
/// ```
/// use neurobits_core::gbnn::{Geometry, SILENT, workload::{message, sparse_message}};
/// let g = Geometry::new(8, 10).unwrap();
/// let (mut a, mut b) = ([0u16; 8], [0u16; 8]);
/// sparse_message(&g, 3, 5, 3, &mut a);
/// assert_eq!(a.iter().filter(|&&s| s != SILENT).count(), 3);
/// sparse_message(&g, 3, 5, 8, &mut a);
/// message(&g, 3, 5, &mut b);
/// assert_eq!(a, b);
/// ```
#[inline]
pub fn sparse_message(geom: &Geometry, seed: u64, k: u64, active: usize, out: &mut [u16]) {
    message(geom, seed, k, out);
    let c = geom.clusters();
    let silent = erased_clusters(stream_key(seed, SILENCE), k, c, c - active.min(c));
    for (i, s) in out.iter_mut().enumerate().take(c) {
        if silent & (1 << i) != 0 {
            *s = SILENT;
        }
    }
}

/// The clusters of `msg` not in `exclude` and not [`SILENT`] whose ranks (0-based, in cluster
/// order) are in `ranks`.
fn clusters_at_ranks(msg: &[u16], exclude: u64, ranks: u64) -> u64 {
    let (mut out, mut r) = (0u64, 0);
    for (c, &s) in msg.iter().enumerate() {
        if s != SILENT && exclude & (1 << c) == 0 {
            if ranks & (1 << r) != 0 {
                out |= 1 << c;
            }
            r += 1;
        }
    }
    out
}

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
    active: usize,
    substituted: usize,
    sub_key: u64,
    symbol_key: u64,
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
            active: geom.clusters(),
            substituted: 0,
            sub_key: stream_key(probe_seed, SUBSTITUTE),
            symbol_key: stream_key(probe_seed, SYMBOL),
        })
    }

    /// The same plan over sparse messages of `active` clusters ([`sparse_message`]) with
    /// `substituted` known clusters given a wrong symbol (noisy probes). Needs
    /// `erased + substituted ≤ active ≤ C`, and `L ≥ 2` to substitute.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, ERASED, SILENT, workload::ProbePlan};
    /// let g = Geometry::new(8, 16).unwrap();
    /// let plan = ProbePlan::new(g, 1, 100, 2, 10, 1).unwrap().with_modes(4, 2).unwrap();
    /// let (mut p, mut t) = ([0u16; 8], [0u16; 8]);
    /// plan.probe(3, &mut p);
    /// plan.truth(3, &mut t);
    /// assert_eq!(p.iter().filter(|&&s| s == SILENT).count(), 4);
    /// assert_eq!(p.iter().filter(|&&s| s == ERASED).count(), 1);
    /// assert_eq!(p.iter().zip(&t).filter(|(a, b)| a != b && **a < 16).count(), 2);
    /// ```
    pub fn with_modes(self, active: usize, substituted: usize) -> Result<Self, Error> {
        let c = self.geom.clusters();
        if active > c || self.erased + substituted > active {
            return Err(Error::TooManyErased(self.erased + substituted, active.min(c)));
        }
        if substituted > 0 && self.geom.neurons_per_cluster() < 2 {
            return Err(Error::ZeroNeurons);
        }
        Ok(ProbePlan { active, substituted, ..self })
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
        sparse_message(&self.geom, self.message_seed, k, self.active, out);
        k
    }

    /// Writes probe `p` (erased symbols = [`ERASED`]) into `out`; returns the message index.
    #[inline]
    pub fn probe(&self, p: u64, out: &mut [u16]) -> u64 {
        let k = self.truth(p, out);
        let (c_all, l) = (self.geom.clusters(), self.geom.neurons_per_cluster() as u64);
        let out = &mut out[..c_all];
        let ranks = erased_clusters(self.erase_key, p, self.active, self.erased);
        let mask = clusters_at_ranks(out, 0, ranks);
        let sub = if self.substituted > 0 {
            let ranks = erased_clusters(self.sub_key, p, self.active - self.erased, self.substituted);
            clusters_at_ranks(out, mask, ranks)
        } else {
            0
        };
        for (c, s) in out.iter_mut().enumerate() {
            if mask & (1 << c) != 0 {
                *s = ERASED;
            } else if sub & (1 << c) != 0 {
                let shift = 1 + below(draw(self.symbol_key, p.wrapping_mul(c_all as u64) + c as u64), l - 1);
                *s = ((*s as u64 + shift) % l) as u16;
            }
        }
        k
    }
}
