use super::joint_cols::joint_first_word_cols;
#[allow(unused_imports)]
use super::occupancy_part;
use super::{bail_out_early_word, bail_out_early_word_occ, init_word};
use crate::gbnn::shard::Shard;
use crate::gbnn::{Geometry, ERASED, MAX_CLUSTERS};
use crate::Word;

/// The rows of `W` of a probe's known neurons (their flat neuron indices), in cluster order, into
/// `rows`; returns how many. The joint first pass ANDs these rows.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, rules::known_rows};
/// let g = Geometry::new(3, 4).unwrap();
/// let mut rows = [0u32; 3];
/// assert_eq!(known_rows(&g, &[1, ERASED, 3], &mut rows), 2);
/// assert_eq!(&rows[..2], &[1, 2 * 4 + 3]);
/// ```
#[inline]
pub fn known_rows(geom: &Geometry, symbols: &[u16], rows: &mut [u32]) -> usize {
    let erased = geom.erased_mask(symbols);
    for (c, &s) in symbols.iter().enumerate().take(geom.clusters()) {
        if s != ERASED {
            let (i, row) = known_row(geom, erased, c, s);
            rows[i] = row;
        }
    }
    (geom.all_clusters() & !erased).count_ones() as usize
}

/// Where [`known_rows`] puts known cluster `c`'s row, and the row: its rank among the known
/// clusters (those not in `erased`) and its known neuron's index. What a GPU lane per cluster
/// computes for itself.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, rules::known_row};
/// let g = Geometry::new(3, 4).unwrap();
/// assert_eq!(known_row(&g, 0b010, 2, 3), (1, 2 * 4 + 3)); // cluster 1 erased: the second row
/// ```
#[inline(always)]
pub fn known_row(geom: &Geometry, erased: u64, c: usize, symbol: u16) -> (usize, u32) {
    let before = !erased & ((1u64 << c) - 1);
    (before.count_ones() as usize, geom.neuron(c, symbol as usize) as u32)
}

/// Known cluster `c`'s symbol from its row ([`known_row`]'s second part): a GPU group keeps the
/// known rows in shared memory and decodes from them instead of reading the probe again.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, rules::{known_row, known_symbol}};
/// let g = Geometry::new(3, 4).unwrap();
/// assert_eq!(known_symbol(&g, known_row(&g, 0b010, 2, 3).1, 2), 3);
/// ```
#[inline(always)]
pub fn known_symbol(geom: &Geometry, row: u32, c: usize) -> u16 {
    (row as usize - geom.neuron(c, 0)) as u16
}

/// The joint rule's first pass (Algorithm 2, lines 1–5) for word `wi` of an erased cluster `c`,
/// given the probe's [`known_rows`]. Erased clusters start off, so a neuron's sum-of-sum score is
/// the number of known neurons it is connected to, and keeping "the neurons with `C − e` signals"
/// keeps exactly the neurons connected to *every* known neuron: the AND of the known rows. With
/// no known cluster every neuron has `0 = C − e` signals and all stay.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::joint_first_word_rows};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// // Probe (?, 2, 0): known rows are neurons (1,2) = 5 and (2,0) = 6.
/// assert_eq!(joint_first_word_rows(&g, &w, &[5, 6], 0, 0), 0b010);
/// ```
#[inline]
pub fn joint_first_word_rows(geom: &Geometry, w: &[Word], rows: &[u32], c: usize, wi: usize) -> Word {
    joint_first_word_cols(geom, w, &Shard::all(geom), rows, c, wi)
}

/// [`joint_first_word_rows`] from the probe's symbols; known clusters keep their symbol.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, ERASED, store::store_message, rules::joint_first_word};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// store_message(&g, &mut w, &[0, 2, 1]);
/// assert_eq!(joint_first_word(&g, &w, &[ERASED, 2, 0], 0, 0), 0b010);
/// assert_eq!(joint_first_word(&g, &w, &[ERASED, 2, 0], 1, 0), 0b100);
/// ```
#[inline]
pub fn joint_first_word(geom: &Geometry, w: &[Word], symbols: &[u16], c: usize, wi: usize) -> Word {
    if symbols[c] != ERASED {
        return init_word(geom, symbols, c, wi, false);
    }
    let mut rows = [0u32; MAX_CLUSTERS];
    let n = known_rows(geom, symbols, &mut rows);
    joint_first_word_rows(geom, w, &rows[..n], c, wi)
}

/// A later joint iteration (Algorithm 2, lines 8–13) for word `wi` of cluster `c`; `erased` is
/// the probe's mask of erased clusters. Known clusters are frozen; erased clusters run
/// bail-out-early. Every candidate left by the first pass is connected to all known neurons, and
/// known clusters never change, so only the erased clusters need checking.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::joint_iter_word};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b011u64, 0b100, 0b001]; // clusters 0, 1 erased; (0,0) has no support in cluster 1
/// assert_eq!(joint_iter_word(&g, &w, &v, 0b011, 0, 0), 0b010);
/// ```
#[inline]
pub fn joint_iter_word(geom: &Geometry, w: &[Word], v: &[Word], erased: u64, c: usize, wi: usize) -> Word {
    if erased & (1 << c) == 0 {
        return v[c * geom.words_per_cluster() + wi];
    }
    bail_out_early_word(geom, w, v, c, wi, erased)
}

/// [`joint_iter_word`] with a precomputed occupancy of `v` (see [`super::supported_occ`]).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, store::store_message, rules::*};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let v = [0b011u64, 0b100, 0b001];
/// let occ: Vec<u64> = (0..3).map(|c| occupancy(&g, &v, c)).collect();
/// assert_eq!(joint_iter_word_occ(&g, &w, &v, 0b011, 0, 0, &occ), joint_iter_word(&g, &w, &v, 0b011, 0, 0));
/// ```
#[inline]
pub fn joint_iter_word_occ(
    geom: &Geometry,
    w: &[Word],
    v: &[Word],
    erased: u64,
    c: usize,
    wi: usize,
    occ: &[u64],
) -> Word {
    if erased & (1 << c) == 0 {
        return v[c * geom.words_per_cluster() + wi];
    }
    bail_out_early_word_occ(geom, w, v, c, wi, erased, occ)
}
