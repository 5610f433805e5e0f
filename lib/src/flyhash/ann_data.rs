//! `neurobits flyhash ann-data`: the ann-benchmarks file of a data set ([`crate::io::ann`]) built
//! offline from its IDX files, as ann-benchmarks builds `fashion-mnist-784-euclidean.hdf5`:
//! `train` and `test` as `float32` pixels (0–255, not rescaled), `neighbors` the 100 true
//! Euclidean neighbours of each query by exact brute force, `distances` theirs.
//!
//! Distances are exact where the data allows: each squared distance is summed in `f64` from
//! the `f32` values in one fixed order (column `j` into partial sum `j mod 8`, the eight partial
//! sums added pairwise: `((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))`), the same on every instruction
//! set (no fused multiply-add). For integer pixels every partial sum is an integer below 2⁵³,
//! so the squared distances are exact and the order of the neighbours is the true one; ties
//! go to the lower `train` row. The stored distance is `sqrt` of that sum in `f64`, rounded
//! once to `f32` (ann-benchmarks stores the Euclidean distance, not its square).

use std::path::PathBuf;

use crate::io::ann::{self, AnnData};
use crate::{Error, Result};

/// `flyhash ann-data`: an ann-benchmarks HDF5 file from IDX train and test images.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AnnDataConfig {
    /// The points searched: an IDX file (gzipped or not), e.g. Fashion-MNIST's
    /// `train-images-idx3-ubyte.gz`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub train_images: PathBuf,
    /// The queries: an IDX file with as many pixels per image, e.g. `t10k-images-idx3-ubyte.gz`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub test_images: PathBuf,
    /// True neighbours kept per query (ann-benchmarks keeps 100).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 100, value_parser = crate::validate::positive))]
    pub neighbours: usize,
    /// The HDF5 file to write (ann-benchmarks layout; written whole or not at all).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
}

/// `flyhash ann-data`: reads both image files, finds the true neighbours, writes the file.
pub fn run(c: &AnnDataConfig) -> Result<AnnData> {
    crate::io::atomic::check_writable(&c.out)?;
    if c.out == std::path::Path::new("-") {
        // Refused before minutes of brute force, not after.
        return Err(Error::input("-", "an HDF5 file cannot be written to standard output: name a file"));
    }
    let read = |p: &PathBuf| crate::io::read::read::<f32>(p, &Default::default());
    let (train, test) = (read(&c.train_images)?, read(&c.test_images)?);
    if train.cols != test.cols {
        return Err(Error::input(
            c.test_images.display(),
            format!("{} values per image, but --train-images has {}", test.cols, train.cols),
        ));
    }
    if train.rows == 0 {
        return Err(Error::input(c.train_images.display(), "no images"));
    }
    let k = c.neighbours.min(train.rows);
    crate::io::memory::ensure_fits("the neighbours", test.rows as u128 * k as u128 * 8)?;
    let t0 = std::time::Instant::now();
    let (neighbors, distances) = exact_neighbours(&train, &test, k);
    let data = AnnData { train, test, neighbors, distances: Some(distances), metric: "euclidean".into() };
    ann::write(&c.out, &data)?;
    crate::outln!(
        "{}: train {} x {}, test {} x {}, {} exact Euclidean neighbours per query ({:.1} s)",
        c.out.display(),
        data.train.rows,
        data.train.cols,
        data.test.rows,
        data.test.cols,
        k,
        t0.elapsed().as_secs_f64()
    )?;
    Ok(data)
}

pub use super::ann_truth::{exact_neighbours, exact_neighbours_on};
