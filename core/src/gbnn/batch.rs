//! Rayon-parallel batch retrieval on the host (feature `std`): each probe iterates on its own
//! until it converges, probes spread over all cores.

use rayon::prelude::*;
use std::vec;

use super::decode::{decode_state, Decoded};
use super::mode::check_probe;
use super::{retrieve_in, Geometry, Mode, Params, Rule, Stats};
use crate::{Error, Word};

const CHUNK: usize = 32;

/// Retrieves `K` probes (`probes`: `K·C` symbols, checked) into `states` (`K` rows) and `stats`.
///
/// ```
/// use neurobits_core::gbnn::{Network, Rule, Params, ERASED, batch::retrieve_batch};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let probes = [ERASED, 2, 0, 1, ERASED, ERASED];
/// let mut states = vec![0; 6];
/// let mut stats = vec![Default::default(); 2];
/// retrieve_batch(net.geometry(), net.weights(), &probes, Rule::Joint, &Params::default(),
///                &mut states, &mut stats).unwrap();
/// assert_eq!(states, [0b010, 0b100, 0b001, 0b010, 0b100, 0b001]);
/// ```
pub fn retrieve_batch(
    geom: &Geometry,
    w: &[Word],
    probes: &[u16],
    rule: Rule,
    params: &Params,
    states: &mut [Word],
    stats: &mut [Stats],
) -> Result<(), Error> {
    retrieve_batch_in(geom, w, probes, rule, Mode::Erasure, params, states, stats)
}

/// [`retrieve_batch`] in `mode` ([`super::retrieve_in`] per probe).
///
/// ```
/// use neurobits_core::gbnn::{Network, Mode, Rule, Params, batch::retrieve_batch_in};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let (mut states, mut stats) = (vec![0; 3], vec![Default::default(); 1]);
/// retrieve_batch_in(net.geometry(), net.weights(), &[0, 2, 0], Rule::SumOfSum, Mode::Noisy,
///                   &Params::default(), &mut states, &mut stats).unwrap();
/// assert_eq!(states, [0b010, 0b100, 0b001]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn retrieve_batch_in(
    geom: &Geometry,
    w: &[Word],
    probes: &[u16],
    rule: Rule,
    mode: Mode,
    params: &Params,
    states: &mut [Word],
    stats: &mut [Stats],
) -> Result<(), Error> {
    let (c, rw) = (geom.clusters(), geom.row_words());
    let k = check(geom, w, probes, rule, mode, stats)?;
    if states.len() != k * rw {
        return Err(Error::Capacity(k * rw, states.len()));
    }
    states.par_chunks_mut(rw * CHUNK).zip(stats.par_chunks_mut(CHUNK)).zip(probes.par_chunks(c * CHUNK)).for_each(
        |((st, sts), pr)| {
            let mut scratch = vec![0; rw];
            for ((v, s), p) in st.chunks_mut(rw).zip(sts.iter_mut()).zip(pr.chunks(c)) {
                *s = retrieve_in(geom, w, p, rule, mode, params, v, &mut scratch);
            }
        },
    );
    Ok(())
}

/// [`retrieve_batch`] returning compact results: `decoded` gets `K·C` entries (each cluster's
/// [`decode_cluster`](super::decode::decode_cluster)); the states live only in per-thread
/// scratch rows, so a batch of any size needs no `K`-row state buffer.
///
/// ```
/// use neurobits_core::gbnn::{Network, Rule, Params, ERASED, batch::retrieve_batch_decoded};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let mut decoded = vec![Default::default(); 3];
/// let mut stats = vec![Default::default(); 1];
/// retrieve_batch_decoded(net.geometry(), net.weights(), &[ERASED, 2, 0], Rule::Joint,
///                        &Params::default(), &mut decoded, &mut stats).unwrap();
/// assert_eq!(decoded.iter().map(|d| d.unique()).collect::<Vec<_>>(), [Some(1), Some(2), Some(0)]);
/// ```
pub fn retrieve_batch_decoded(
    geom: &Geometry,
    w: &[Word],
    probes: &[u16],
    rule: Rule,
    params: &Params,
    decoded: &mut [Decoded],
    stats: &mut [Stats],
) -> Result<(), Error> {
    retrieve_batch_decoded_in(geom, w, probes, rule, Mode::Erasure, params, decoded, stats)
}

/// [`retrieve_batch_decoded`] in `mode`.
#[allow(clippy::too_many_arguments)]
pub fn retrieve_batch_decoded_in(
    geom: &Geometry,
    w: &[Word],
    probes: &[u16],
    rule: Rule,
    mode: Mode,
    params: &Params,
    decoded: &mut [Decoded],
    stats: &mut [Stats],
) -> Result<(), Error> {
    let (c, rw) = (geom.clusters(), geom.row_words());
    let k = check(geom, w, probes, rule, mode, stats)?;
    if decoded.len() != k * c {
        return Err(Error::Capacity(k * c, decoded.len()));
    }
    decoded.par_chunks_mut(c * CHUNK).zip(stats.par_chunks_mut(CHUNK)).zip(probes.par_chunks(c * CHUNK)).for_each(
        |((dec, sts), pr)| {
            let (mut v, mut scratch) = (vec![0; rw], vec![0; rw]);
            for ((d, s), p) in dec.chunks_mut(c).zip(sts.iter_mut()).zip(pr.chunks(c)) {
                *s = retrieve_in(geom, w, p, rule, mode, params, &mut v, &mut scratch);
                decode_state(geom, &v, d);
            }
        },
    );
    Ok(())
}

/// Checks the batch's shapes and symbols; returns `K`.
fn check(geom: &Geometry, w: &[Word], probes: &[u16], rule: Rule, mode: Mode, stats: &[Stats]) -> Result<usize, Error> {
    let c = geom.clusters();
    if !probes.len().is_multiple_of(c) {
        return Err(Error::Arity(c, probes.len() % c));
    }
    let k = probes.len() / c;
    if stats.len() != k {
        return Err(Error::Capacity(k, stats.len()));
    }
    if w.len() < geom.weight_words() {
        return Err(Error::Capacity(geom.weight_words(), w.len()));
    }
    for p in probes.chunks(c) {
        check_probe(geom, p, rule, mode)?;
    }
    Ok(k)
}
