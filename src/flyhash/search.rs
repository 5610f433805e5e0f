//! Top-r Hamming neighbours on the CPU: the core's `hamming` and `top_r` over a rayon pool, with
//! the per-query work compiled again for POPCNT/AVX2 and chosen at run time.

use neurobits_core::flyhash::{hamming, sort_hits, top_r as core_top_r};
use neurobits_core::Word;
use rayon::prelude::*;

/// For each query code, the `r` nearest database codes as `(index, distance)`, nearest first,
/// ties by index. `words` is the code length in words.
///
/// ```
/// let db = [0b0000u64, 0b0111, 0b0001];
/// let hits = neurobits::flyhash::search::top_r(&db, &[0b0011], 1, 2);
/// assert_eq!(hits, [vec![(1, 1), (2, 1)]]);
/// ```
pub fn top_r(db: &[Word], queries: &[Word], words: usize, r: usize) -> Vec<Vec<(u32, u32)>> {
    let n = db.len() / words;
    let r = r.min(n);
    let fast = crate::device::simd();
    queries
        .par_chunks(words)
        .map_init(
            || vec![0u32; n],
            |dist, q| {
                #[cfg(target_arch = "x86_64")]
                if fast {
                    // SAFETY: `device::simd()` checked that the CPU has POPCNT and AVX2.
                    return unsafe { one_query_simd(db, q, words, r, dist) };
                }
                let _ = fast;
                one_query(db, q, words, r, dist)
            },
        )
        .collect()
}

/// One query: every distance, then the top `r` — the same integers on every path.
#[inline(always)]
fn one_query(db: &[Word], q: &[Word], words: usize, r: usize, dist: &mut [u32]) -> Vec<(u32, u32)> {
    for (i, d) in dist.iter_mut().enumerate() {
        *d = hamming(&db[i * words..(i + 1) * words], q);
    }
    let mut out = Vec::with_capacity(r);
    core_top_r(dist.len(), r, |i| dist[i], &mut [0; 256], |i| out.push((i as u32, dist[i])));
    sort_hits(&mut out);
    out
}

/// [`one_query`] compiled with POPCNT and AVX2: the release binary targets baseline x86-64,
/// where `count_ones` is a bit-twiddling sequence.
///
/// # Safety
/// The CPU must support POPCNT and AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
unsafe fn one_query_simd(db: &[Word], q: &[Word], words: usize, r: usize, dist: &mut [u32]) -> Vec<(u32, u32)> {
    one_query(db, q, words, r, dist)
}
