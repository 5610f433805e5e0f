//! Top-r Hamming neighbours, ties to the lower database index, through the core's radix select.

use neurobits_core::flyhash::{hamming, kth_largest, select};
use neurobits_core::Word;
use rayon::prelude::*;

/// For each query code, the `r` nearest database codes as `(index, distance)`, nearest first,
/// ties by index. `words` is the code length in words.
pub fn top_r(db: &[Word], queries: &[Word], words: usize, r: usize) -> Vec<Vec<(u32, u32)>> {
    let n = db.len() / words;
    let r = r.min(n);
    queries
        .par_chunks(words)
        .map_init(
            || vec![0u32; n],
            |dist, q| {
                for (i, d) in dist.iter_mut().enumerate() {
                    *d = hamming(&db[i * words..(i + 1) * words], q);
                }
                let key = |i: usize| u32::MAX - dist[i];
                let (t, above) = kth_largest(n, r, key, &mut [0; 256]);
                let mut out = Vec::with_capacity(r);
                select(n, r, key, t, above, |i| out.push((i as u32, dist[i])));
                out.sort_by_key(|&(i, d)| (d, i));
                out
            },
        )
        .collect()
}
