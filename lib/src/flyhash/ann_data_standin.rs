//! STAND-IN, to be dropped at merge for `neurobits::io::ann::read` (the ann-benchmarks HDF5
//! reader of the `annbench` branch): an ann-benchmarks data set built from the Fashion-MNIST
//! IDX files — `train` = the 60 000 training images, `test` = the 10 000 test images, and each
//! test image's true Euclidean top-100 training ids by brute force (squared distance by core's
//! `sq_euclidean`, ties to the lower id), as `fashion-mnist-784-euclidean.hdf5` holds them.

use anyhow::{Context, Result};
use neurobits_core::flyhash::{sort_hits, sort_key, sq_euclidean, top_r};
use rayon::prelude::*;
use std::path::Path;

use super::data::{self, Matrix};

/// An ann-benchmarks data set: `train` (the database), `test` (the queries) and `neighbors`
/// (each query's true nearest train ids, nearest first).
#[derive(Clone, Debug)]
pub struct AnnData {
    /// The database vectors.
    pub train: Matrix,
    /// The query vectors.
    pub test: Matrix,
    /// True neighbours of each query, nearest first.
    pub neighbors: Vec<Vec<u32>>,
}

/// Neighbours kept per query (ann-benchmarks keeps 100).
const TRUE_NEIGHBOURS: usize = 100;

/// Reads `path`: a folder holding `train-images-idx3-ubyte(.gz)` and `t10k-images-idx3-ubyte(.gz)`.
pub fn read(path: &Path) -> Result<AnnData> {
    let file = |stem: &str| {
        let gz = path.join(format!("{stem}.gz"));
        if gz.exists() {
            gz
        } else {
            path.join(stem)
        }
    };
    if !path.is_dir() {
        anyhow::bail!(
            "{}: not a folder of Fashion-MNIST IDX files (the HDF5 reader is not merged yet)",
            path.display()
        );
    }
    let train = data::read(&file("train-images-idx3-ubyte")).context("ann data")?;
    let test = data::read(&file("t10k-images-idx3-ubyte")).context("ann data")?;
    let k = TRUE_NEIGHBOURS.min(train.rows);
    // The brute force takes minutes on two cores: `NEUROBITS_ANN_TRUTH_CACHE=FILE` keeps it
    // (little-endian u32, test rows × k; used only when its size fits).
    let cache = std::env::var_os("NEUROBITS_ANN_TRUTH_CACHE").map(std::path::PathBuf::from);
    if let Some(b) = cache.as_ref().and_then(|c| std::fs::read(c).ok()).filter(|b| b.len() == test.rows * k * 4) {
        let ids: Vec<u32> = b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
        let neighbors = ids.chunks(k).map(|c| c.to_vec()).collect();
        return Ok(AnnData { train, test, neighbors });
    }
    let neighbors = brute_force(&train, &test, k);
    if let Some(c) = cache {
        let b: Vec<u8> = neighbors.iter().flatten().flat_map(|i: &u32| i.to_le_bytes()).collect();
        crate::io::atomic::write_atomic(&c, |w| Ok(w.write_all(&b)?))?;
    }
    Ok(AnnData { train, test, neighbors })
}

/// The `k` nearest train rows of every test row by squared Euclidean distance.
pub fn brute_force(train: &Matrix, test: &Matrix, k: usize) -> Vec<Vec<u32>> {
    (0..test.rows)
        .into_par_iter()
        .map_init(
            || vec![0u32; train.rows],
            |keys, q| {
                let x = test.row(q);
                for (i, key) in keys.iter_mut().enumerate() {
                    *key = sort_key(sq_euclidean(train.row(i), x));
                }
                let mut hits = Vec::with_capacity(k);
                top_r(train.rows, k, |i| keys[i], &mut [0; 256], |i| hits.push((i as u32, keys[i])));
                sort_hits(&mut hits);
                hits.into_iter().map(|(i, _)| i).collect()
            },
        )
        .collect()
}
