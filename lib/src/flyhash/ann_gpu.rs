//! The approximate index on GPUs: where it searches ([`AnnDevice`]: the CPU, one GPU, or its ids
//! sharded over several), and the GPU search itself — candidates on the host (table lookups,
//! `ann_search::candidates_csr`), re-ranking on the device (`neurobits_gpu_host::flyhash::ann`:
//! the core's distances and `top_r` in kernels), the hits converted as the CPU converts them.
//! Ids and distances equal the CPU's.

use neurobits_gpu_host::flyhash::ann::{AnnQueries, AnnRows, Candidates, ShardedRows};
use neurobits_gpu_host::{Gpu, GpuError};
use std::sync::{Arc, Mutex};

use super::ann::Vectors;
use super::ann_search::{self, Rank, Tables};
use crate::device::{Device, Target};

/// Where an approximate index hashes and searches.
///
/// ```
/// use neurobits::flyhash::ann_gpu::AnnDevice;
/// use neurobits::device::Target;
/// assert_eq!("gpus".parse::<AnnDevice>(), Ok(AnnDevice::Gpus(None)));
/// assert_eq!("gpus:2".parse::<AnnDevice>(), Ok(AnnDevice::Gpus(Some(2))));
/// assert_eq!("cuda:1".parse::<AnnDevice>(), Ok(AnnDevice::One(Target::Gpu(1))));
/// assert!("gpus:0".parse::<AnnDevice>().is_err());
/// assert!("tpu".parse::<AnnDevice>().unwrap_err().ends_with("auto, gpus or gpus:N"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnnDevice {
    /// One device as every model takes it: the CPU (candidates and re-ranking on its threads),
    /// a GPU (candidates on the host, re-ranking on the GPU), or `auto`.
    One(Target),
    /// The ids sharded over the first `n` GPUs (`None`: every GPU here), re-ranked on all at
    /// once; queries hashed on GPU 0.
    Gpus(Option<usize>),
}

impl Default for AnnDevice {
    fn default() -> Self {
        AnnDevice::One(Target::default())
    }
}

impl std::str::FromStr for AnnDevice {
    type Err = String;
    fn from_str(s: &str) -> Result<AnnDevice, String> {
        match s {
            "gpus" => Ok(AnnDevice::Gpus(None)),
            _ => match s.strip_prefix("gpus:") {
                Some(n) => match n.parse::<usize>() {
                    Ok(n) if n >= 1 => Ok(AnnDevice::Gpus(Some(n))),
                    _ => Err(format!("device '{s}': '{n}' is not a GPU count (1 or more)")),
                },
                None => s.parse::<Target>().map(AnnDevice::One).map_err(|e| match s.split_once(':') {
                    Some(("gpu" | "cuda", _)) => e,
                    _ => format!("device '{s}': expected cpu, gpu, cuda, gpu:N, cuda:N, auto, gpus or gpus:N"),
                }),
            },
        }
    }
}

/// The rows uploaded for the last GPU search, kept for the next (the upload costs more than a
/// search); made again for another device, dropped by `add`. A clone of the index starts
/// without.
#[derive(Default)]
pub(crate) struct Resident(Mutex<Option<(Key, Arc<ShardedRows>)>>);

/// What the kept rows were made for: the device of an index on one GPU, or a GPU count.
#[derive(Clone, PartialEq)]
enum Key {
    One(usize),
    Gpus(usize),
}

impl Resident {
    fn get(
        &self,
        key: Key,
        make: impl FnOnce() -> Result<ShardedRows, GpuError>,
    ) -> Result<Arc<ShardedRows>, GpuError> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, rows)) = slot.as_ref() {
            if *k == key {
                return Ok(rows.clone());
            }
        }
        // Freed first: two copies of a large index may not fit on a GPU.
        *slot = None;
        let rows = Arc::new(make()?);
        *slot = Some((key, rows.clone()));
        Ok(rows)
    }
}

impl Clone for Resident {
    fn clone(&self) -> Self {
        Resident::default()
    }
}

impl std::fmt::Debug for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Resident")
    }
}

/// The rows and queries the GPU re-ranks with, from what the CPU re-ranks with.
fn rows_of<'a>(rank: &'a Rank<'a>) -> (AnnRows<'a>, AnnQueries<'a>) {
    match rank {
        Rank::Hamming { db, queries, words } => {
            (AnnRows::Codes { words: *words, codes: db }, AnnQueries::Codes(queries))
        }
        Rank::Euclidean { db, queries } => {
            let d = queries.cols;
            let rows = match db {
                Vectors::Pixels(bytes) => AnnRows::Pixels { d, bytes },
                Vectors::Floats(values) => AnnRows::Floats { d, values },
            };
            (rows, AnnQueries::Vectors(&queries.data))
        }
    }
}

/// The GPUs of [`AnnDevice::Gpus`]: the first `n`, or all.
fn open_gpus(n: Option<usize>) -> Result<Vec<Arc<Gpu>>, GpuError> {
    let n = match n {
        Some(n) => n,
        None => match Gpu::count() {
            0 => return Err(GpuError::NoDevice(0)),
            c => c,
        },
    };
    (0..n).map(|i| Gpu::open(i).map(Arc::new)).collect()
}

/// Per query `(id, distance)`, nearest first.
type Hits = Vec<Vec<(u32, f32)>>;

/// The search on GPUs: candidates of every query on `device`'s CPU pool, re-ranked on `gpu`
/// (`Some`: the one GPU of an [`AnnDevice::One`]) or on the first `gpus` GPUs, sharded. Returns
/// per query `(id, distance)` nearest first, and the candidates re-ranked.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    resident: &Resident,
    device: &Device,
    gpu: Option<&Arc<Gpu>>,
    gpus: Option<usize>,
    tables: &Tables,
    sums: &[f32],
    rank: &Rank,
    k: usize,
    probes: usize,
) -> anyhow::Result<(Hits, u64)> {
    let (rows, queries) = rows_of(rank);
    let held = match gpu {
        Some(g) => {
            resident.get(Key::One(Arc::as_ptr(g) as usize), || ShardedRows::upload(std::slice::from_ref(g), &rows))?
        }
        None => {
            let want = gpus.unwrap_or(0);
            resident.get(Key::Gpus(want), || ShardedRows::upload(&open_gpus(gpus)?, &rows))?
        }
    };
    let (offsets, ids) = device.cpu().install(|| ann_search::candidates_csr(tables, sums, probes));
    let hits = held.rerank(&queries, &Candidates { offsets: &offsets, ids: &ids }, k)?;
    let hits = hits
        .into_iter()
        .map(|row| row.into_iter().map(|(id, key)| (id, ann_search::distance_of(rank, key))).collect())
        .collect();
    Ok((hits, ids.len() as u64))
}

/// The name a benchmark row gives `device`: `cpu (N threads)`, `gpu (NAME)` or `N gpus (NAME)`.
pub(crate) fn device_name(on: AnnDevice, device: &Device) -> String {
    match on {
        AnnDevice::Gpus(n) => {
            let n = n.unwrap_or_else(Gpu::count);
            let name = neurobits_gpu_host::opened_gpus().first().map_or("CUDA".into(), |g| g.1.clone());
            format!("{n} gpus ({name})")
        }
        AnnDevice::One(_) => device.name(),
    }
}
