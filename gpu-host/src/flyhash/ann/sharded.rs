//! The re-ranking rows sharded over several GPUs: contiguous id ranges, one per GPU, searched at
//! once and merged (see the parent module's notes).

use neurobits_core::flyhash::sort_hits;
use std::sync::Arc;

use super::{check_candidates, AnnHits, AnnQueries, AnnRows, Candidates, DeviceRows};
use crate::{Gpu, GpuError};

/// Shard `i` of `shards` over `n` ids: `i·n/shards .. (i+1)·n/shards`.
pub fn shard_bounds(n: usize, shards: usize) -> Vec<usize> {
    (0..=shards).map(|i| (i as u128 * n as u128 / shards.max(1) as u128) as usize).collect()
}

/// The candidates of ids `lo..hi` (each query's ids are ascending: one contiguous run), as
/// offsets and ids relative to `lo`.
pub fn split_candidates(cand: &Candidates, lo: usize, hi: usize) -> (Vec<u64>, Vec<u32>) {
    let nq = cand.offsets.len() - 1;
    let mut offsets = Vec::with_capacity(nq + 1);
    let mut ids = Vec::new();
    offsets.push(0);
    for q in 0..nq {
        let row = &cand.ids[cand.offsets[q] as usize..cand.offsets[q + 1] as usize];
        let (a, b) = (row.partition_point(|&i| (i as usize) < lo), row.partition_point(|&i| (i as usize) < hi));
        ids.extend(row[a..b].iter().map(|&i| i - lo as u32));
        offsets.push(ids.len() as u64);
    }
    (offsets, ids)
}

/// The shards' hits merged per query: ids made global (`+ bounds[s]`), ordered by (key, id), the
/// first `r` kept — the `r` nearest of the union, which is one GPU's answer.
pub fn merge_hits(parts: Vec<AnnHits>, bounds: &[usize], r: usize) -> AnnHits {
    let nq = parts.first().map_or(0, |p| p.len());
    (0..nq)
        .map(|q| {
            let mut v: Vec<(u32, u32)> = parts
                .iter()
                .enumerate()
                .flat_map(|(s, p)| p[q].iter().map(move |&(i, d)| (i + bounds[s] as u32, d)))
                .collect();
            sort_hits(&mut v);
            v.truncate(r);
            v
        })
        .collect()
}

/// Rows sharded over several GPUs: contiguous id ranges, one per GPU.
pub struct ShardedRows {
    gpus: Vec<Arc<Gpu>>,
    shards: Vec<DeviceRows>,
    bounds: Vec<usize>,
}

impl ShardedRows {
    /// Uploads `rows` split into `min(gpus, rows)` contiguous shards (at least one), shard `i`
    /// on `gpus[i]`, all at once.
    pub fn upload(gpus: &[Arc<Gpu>], rows: &AnnRows) -> Result<ShardedRows, GpuError> {
        if gpus.is_empty() {
            return Err(GpuError::Input("no GPU to shard over".into()));
        }
        let count = gpus.len().min(rows.len()).max(1);
        let bounds = shard_bounds(rows.len(), count);
        let shards = std::thread::scope(|s| {
            let handles: Vec<_> = (0..count)
                .map(|i| {
                    let (g, part) = (&gpus[i], rows.rows(bounds[i]..bounds[i + 1]));
                    s.spawn(move || g.upload_rows(&part))
                })
                .collect();
            handles.into_iter().map(join).collect::<Result<Vec<_>, _>>()
        })?;
        Ok(ShardedRows { gpus: gpus[..count].to_vec(), shards, bounds })
    }

    /// GPUs holding a shard.
    pub fn gpus(&self) -> &[Arc<Gpu>] {
        &self.gpus
    }

    /// The first id of each shard, and the row count last.
    pub fn bounds(&self) -> &[usize] {
        &self.bounds
    }

    /// [`DeviceRows::rerank`] over every shard at once (ids: rows of all the rows), merged.
    pub fn rerank(&self, q: &AnnQueries, cand: &Candidates, r: usize) -> Result<AnnHits, GpuError> {
        let n = *self.bounds.last().expect("bounds");
        let nq = cand.offsets.len().saturating_sub(1);
        check_candidates(cand, nq, n)?;
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.shards.len())
                .map(|i| {
                    let (g, rows, bounds) = (&self.gpus[i], &self.shards[i], &self.bounds);
                    s.spawn(move || {
                        let (offsets, ids) = split_candidates(cand, bounds[i], bounds[i + 1]);
                        rows.rerank(g, q, &Candidates { offsets: &offsets, ids: &ids }, r)
                    })
                })
                .collect();
            handles.into_iter().map(join).collect::<Result<Vec<_>, _>>()
        })?;
        Ok(merge_hits(parts, &self.bounds, r))
    }
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T, GpuError>>) -> Result<T, GpuError> {
    h.join().unwrap_or_else(|_| Err(GpuError::Input("GPU thread panicked".into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_then_merge_is_the_whole() {
        // Three queries over ids 0..10, each query's ids ascending; distances from a rule.
        let ids = [0u32, 3, 4, 9, 1, 2, 5, 6, 7, 8];
        let offsets = [0u64, 4, 4, 10];
        let cand = Candidates { offsets: &offsets, ids: &ids };
        let key = |i: u32| (i * 7) % 5;
        let whole: AnnHits = (0..3)
            .map(|q| {
                let mut v: Vec<_> =
                    ids[offsets[q] as usize..offsets[q + 1] as usize].iter().map(|&i| (i, key(i))).collect();
                sort_hits(&mut v);
                v.truncate(3);
                v
            })
            .collect();
        for shards in 1..=4 {
            let bounds = shard_bounds(10, shards);
            let parts = (0..shards)
                .map(|s| {
                    let (o, l) = split_candidates(&cand, bounds[s], bounds[s + 1]);
                    assert_eq!(o.len(), 4);
                    (0..3)
                        .map(|q| {
                            let mut v: Vec<_> = l[o[q] as usize..o[q + 1] as usize]
                                .iter()
                                .map(|&i| (i, key(i + bounds[s] as u32)))
                                .collect();
                            sort_hits(&mut v);
                            v.truncate(3);
                            v
                        })
                        .collect()
                })
                .collect();
            assert_eq!(merge_hits(parts, &bounds, 3), whole, "{shards} shards");
        }
    }

    #[test]
    fn rows_pack_little_endian() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        let w = AnnRows::Pixels { d: 3, bytes: &b }.words();
        assert_eq!(&*w, &[u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]), 9]);
        let f = [1.5f32, -2.0, 3.0];
        let w = AnnRows::Floats { d: 1, values: &f }.words();
        assert_eq!(w[0], (((-2.0f32).to_bits() as u64) << 32) | 1.5f32.to_bits() as u64);
        assert_eq!(w[1], 3.0f32.to_bits() as u64);
        assert_eq!(AnnRows::Floats { d: 1, values: &f }.rows(1..3).len(), 2);
    }
}
