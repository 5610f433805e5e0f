//! The approximate index's re-ranking kernels: the host sends each query's candidate ids
//! (compressed rows: `offsets[q] .. offsets[q + 1]` index `cand`), `fly_ann_dist` gives every
//! candidate its distance key and `fly_ann_top_r` picks each query's `r` nearest (the core's
//! `top_r`: ties to the earlier position, and the host sends ids ascending, so to the lower id).

use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

/// `fly_ann_dist`'s `kind`: Hamming distance of codes of `row` words (`db` as words).
pub const ANN_HAMMING: u32 = 0;
/// `fly_ann_dist`'s `kind`: squared Euclidean distance of pixel rows of `row` bytes (`db` as
/// bytes); a query flagged as pixels is compared as bytes, any other one as floats.
pub const ANN_PIXELS: u32 = 1;
/// `fly_ann_dist`'s `kind`: squared Euclidean distance of `f32` rows of `row` values.
pub const ANN_FLOATS: u32 = 2;

kernel_struct! {
    /// `fly_ann_dist`: one thread per candidate entry `e < entries`; its query is the `q` with
    /// `offsets[q] ≤ e < offsets[q + 1]` (a binary search). Writes `keys[e]`: the Hamming
    /// distance (`hamming`), or `sort_key` of the squared Euclidean distance
    /// (`sq_euclidean_pixels`, `sq_euclidean_mixed`, `sq_euclidean`), as the CPU re-ranks.
    AnnDist => FlyAnnDist {
        /// [`ANN_HAMMING`], [`ANN_PIXELS`] or [`ANN_FLOATS`].
        kind: u32,
        /// Words per code, or values per vector.
        row: u32,
        /// Queries.
        nq: u32,
        /// Candidate entries, `offsets[nq]`.
        entries: u32,
        /// `nq + 1` ascending offsets into `cand`.
        offsets: DevPtr<u32>,
        /// `entries` candidate ids (rows of `db`).
        cand: DevPtr<u32>,
        /// The resident rows, `row` words / bytes / floats each, row-major.
        db: DevPtr<Word>,
        /// Hamming: `nq · row` query words. Otherwise unused (any buffer).
        qcodes: DevPtr<Word>,
        /// Euclidean: `nq · row` query values. Otherwise unused.
        qfloats: DevPtr<f32>,
        /// [`ANN_PIXELS`]: `nq · row` query bytes (read for flagged queries only). Otherwise unused.
        qpixels: DevPtr<u8>,
        /// [`ANN_PIXELS`]: `nq` flags, 1 where the query is all pixels. Otherwise unused.
        qflags: DevPtr<u32>,
        /// `entries` keys, written.
        keys: DevMut<u32>,
    }
}

kernel_struct! {
    /// `fly_ann_top_r`: one thread per query: the core's `top_r` over its candidates' keys,
    /// `min(r, candidates)` winners written in candidate order into `ids[q · r ..]` (the
    /// candidate's id) and `dist[q · r ..]` (its key), the rest of the row `u32::MAX`.
    AnnTopR => FlyAnnTopR {
        /// Queries.
        nq: u32,
        /// Neighbours per query.
        r: u32,
        /// `nq + 1` offsets into `cand` and `keys`.
        offsets: DevPtr<u32>,
        /// Candidate ids.
        cand: DevPtr<u32>,
        /// Their keys (`fly_ann_dist`).
        keys: DevPtr<u32>,
        /// `nq · r` ids, written.
        ids: DevMut<u32>,
        /// `nq · r` keys, written.
        dist: DevMut<u32>,
    }
}
