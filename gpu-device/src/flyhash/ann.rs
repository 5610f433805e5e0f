//! The approximate index's re-ranking on the GPU: a thread per candidate calls the core's
//! distance (`hamming`, `sq_euclidean_pixels`, `sq_euclidean_mixed`, `sq_euclidean`) and a
//! thread per query the core's `top_r`, the functions the CPU driver calls.

use core::slice::from_raw_parts;
use neurobits_core::flyhash::kernels::{AnnDist, AnnTopR, ANN_FLOATS, ANN_HAMMING, ANN_PIXELS};
use neurobits_core::flyhash::{hamming, sort_key, sq_euclidean, sq_euclidean_mixed, sq_euclidean_pixels, top_r};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, gid, kernel};

/// The query whose candidates hold entry `e`: the last `q < nq` with `offsets[q] ≤ e`
/// (`offsets[0] = 0 ≤ e < offsets[nq]`).
#[inline(always)]
unsafe fn query_of(offsets: *const u32, nq: usize, e: u32) -> usize {
    let (mut lo, mut hi) = (0usize, nq);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if *offsets.add(mid) <= e {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

kernel! {
    /// The key of candidate entry `e` (see `AnnDist`), one thread per entry.
    fn fly_ann_dist(a: AnnDist {
        kind: u32,
        row: u32,
        nq: u32,
        entries: u32,
        offsets: DevPtr<u32>,
        cand: DevPtr<u32>,
        db: DevPtr<Word>,
        qcodes: DevPtr<Word>,
        qfloats: DevPtr<f32>,
        qpixels: DevPtr<u8>,
        qflags: DevPtr<u32>,
        keys: DevMut<u32>,
    }) {
        let e = gid();
        if e >= a.entries as usize {
            return;
        }
        let q = query_of(a.offsets.0, a.nq as usize, e as u32);
        let (id, w) = (*a.cand.0.add(e) as usize, a.row as usize);
        *a.keys.0.add(e) = match a.kind {
            ANN_HAMMING => hamming(from_raw_parts(a.db.0.add(id * w), w), from_raw_parts(a.qcodes.0.add(q * w), w)),
            ANN_PIXELS => {
                let stored = from_raw_parts((a.db.0 as *const u8).add(id * w), w);
                if *a.qflags.0.add(q) != 0 {
                    sort_key(sq_euclidean_pixels(stored, from_raw_parts(a.qpixels.0.add(q * w), w)))
                } else {
                    sort_key(sq_euclidean_mixed(stored, from_raw_parts(a.qfloats.0.add(q * w), w)))
                }
            }
            ANN_FLOATS => {
                let stored = from_raw_parts((a.db.0 as *const f32).add(id * w), w);
                sort_key(sq_euclidean(stored, from_raw_parts(a.qfloats.0.add(q * w), w)))
            }
            _ => abort(),
        };
    }
}

kernel! {
    /// Query `q`'s `min(r, candidates)` nearest candidates (the core's `top_r` over their keys),
    /// one thread per query; the rest of its row is `u32::MAX`.
    fn fly_ann_top_r(a: AnnTopR {
        nq: u32,
        r: u32,
        offsets: DevPtr<u32>,
        cand: DevPtr<u32>,
        keys: DevPtr<u32>,
        ids: DevMut<u32>,
        dist: DevMut<u32>,
    }) {
        let q = gid();
        if q >= a.nq as usize {
            return;
        }
        let (o, r) = (*a.offsets.0.add(q) as usize, a.r as usize);
        let n = *a.offsets.0.add(q + 1) as usize - o;
        let rq = r.min(n);
        let keys = from_raw_parts(a.keys.0.add(o), n);
        let mut at = 0;
        if rq > 0 {
            top_r(n, rq, |i| keys[i], &mut [0u32; 256], |i| {
                *a.ids.0.add(q * r + at) = *a.cand.0.add(o + i);
                *a.dist.0.add(q * r + at) = keys[i];
                at += 1;
            });
        }
        for j in at..r {
            *a.ids.0.add(q * r + j) = u32::MAX;
            *a.dist.0.add(q * r + j) = u32::MAX;
        }
    }
}
