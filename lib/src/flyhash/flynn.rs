//! `neurobits flyhash flynn`: the FlyNN classifier (Sinha & Ram, KDD 2021) over FlyHash codes —
//! one memory per class, a point goes to the class it is least novel to (rules in
//! `neurobits_core::flyhash::flynn`) — on the CPU and the GPU (bit-identical), beside exact
//! k-nearest-neighbour classification of the same images.

use anyhow::{anyhow, bail, Result};
use neurobits_core::bits::set_bits;
use neurobits_core::flyhash::{
    flynn_class, flynn_novelty, flynn_restore, flynn_store, flynn_weights, top_r, FLYNN_WEIGHTS,
};
use neurobits_core::Word;
use neurobits_gpu_host::flyhash::FlyWta;
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::classifier::{centred, column_mean, FlyNNConfig};
use super::cpu::{self, Wta};
use super::data::{self, Matrix};
use super::model::FlyHashConfig;
use crate::device::{bench_devices, BenchDevice};
use crate::progress::stages;

#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
/// `flyhash flynn`: FlyNN and exact k-NN on labelled images.
pub struct FlynnConfig {
    /// Training vectors (IDX, CSV or NPY).
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
    )]
    pub train: PathBuf,
    /// Training labels (one value per vector; default: the `labels-idx1` sibling of an
    /// `images-idx3` file).
    #[cfg_attr(feature = "cli", arg(long))]
    pub train_labels: Option<PathBuf>,
    /// Test vectors.
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz")
    )]
    pub test: PathBuf,
    /// Test labels (default as for `--train-labels`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub test_labels: Option<PathBuf>,
    /// Use only the first N training vectors.
    #[cfg_attr(feature = "cli", arg(long, value_parser = crate::validate::positive))]
    pub train_limit: Option<usize>,
    /// Use only the first N test vectors.
    #[cfg_attr(feature = "cli", arg(long, value_parser = crate::validate::positive))]
    pub test_limit: Option<usize>,
    /// Code length m (default: the library's `FlyNNConfig::default_code_bits`, 32·d).
    #[cfg_attr(feature = "cli", arg(long = "code-bits", alias = "m", value_parser = crate::validate::positive))]
    pub m: Option<usize>,
    /// Ones per projection row s (default: the library's, 5 % of d).
    #[cfg_attr(feature = "cli", arg(long = "ones-per-row", alias = "s", value_parser = crate::validate::positive))]
    pub s: Option<usize>,
    /// Winners k (default: the library's `FlyNNConfig::default_winners`, m/250: FlyNN wants
    /// sparser codes than search; see the manual, docs/manual/src/flyhash.md).
    #[cfg_attr(feature = "cli", arg(long = "winners", alias = "k", value_parser = crate::validate::positive))]
    pub k: Option<usize>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = FlyHashConfig::default().seed))]
    /// Seed of the portable random streams (projection; default: the library's).
    pub seed: u64,
    /// FlyNN's decay γ in [0, 1]: a memory bit weighs γ^n after n training codes of its class.
    /// Several, comma-separated, are each evaluated on the same codes (a sweep). Default: the
    /// library's (`FlyNNConfig::default().decay`).
    #[cfg_attr(feature = "cli", arg(long = "decay", alias = "gamma", value_delimiter = ',', value_parser = crate::validate::unit_interval))]
    pub gamma: Vec<f64>,
    /// Subtract the mean training vector before hashing (`true`/`false`; default: the
    /// library's, `FlyNNConfig::default().centre`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub centre: Option<bool>,
    /// Error-driven rounds after the counting pass (the core's `flynn_restore`). Several,
    /// comma-separated, are each scored: the rounds run once, up to the largest, and FlyNN is
    /// scored after each listed one. Default: the library's (`FlyNNConfig::default().rounds`).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', value_parser = crate::validate::rounds))]
    pub rounds: Vec<u32>,
    /// Where FlyNN runs: cpu, gpu, all (side by side, compared) or auto.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = BenchDevice::Cpu))]
    pub device: BenchDevice,
    /// The k of the exact k-NN baselines (on the raw vectors; 8-bit images only).
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_values_t = [1usize, 10], value_parser = crate::validate::positive))]
    pub knn: Vec<usize>,
    /// Skip the k-NN baselines.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_knn: bool,
    /// Also write the results as JSON.
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: Option<PathBuf>,
}

#[derive(Serialize, Debug)]
/// One classifier's result.
pub struct Row {
    /// Classifier and device.
    pub method: String,
    /// FlyNN's decay γ (k-NN: none).
    pub gamma: Option<f64>,
    /// FlyNN's error-driven rounds (k-NN: none).
    pub rounds: Option<u32>,
    /// Fraction of test vectors classified as labelled.
    pub accuracy: f64,
    /// Seconds to train (hash and store the training set, then the rounds, with the scoring of
    /// the listed round counts before this one; k-NN: none).
    pub train_seconds: f64,
    /// Seconds to classify the test set (hashing included).
    pub test_seconds: f64,
    /// GPU: whether its memories and classes equal the CPU's (where both ran).
    pub identical_to_cpu: Option<bool>,
}

/// FlyNN's class memories on the CPU: `classes · m` saturating counts, class-major.
pub fn train(codes: &[Word], labels: &[u8], classes: usize, m: usize) -> Vec<u16> {
    train_if(codes, labels, classes, m, |_| true)
}

/// The same, counting only the codes `j` with `keep(j)`.
fn train_if(codes: &[Word], labels: &[u8], classes: usize, m: usize, keep: impl Fn(usize) -> bool + Sync) -> Vec<u16> {
    let words = m.div_ceil(64);
    let mut counts = vec![0u16; classes * m];
    counts.par_chunks_mut(m).enumerate().for_each(|(c, mem)| {
        for (_, (code, _)) in
            codes.chunks(words).zip(labels).enumerate().filter(|(j, (_, &l))| l as usize == c && keep(*j))
        {
            for (w, &word) in code.iter().enumerate() {
                for b in set_bits(word) {
                    mem[w * 64 + b] = flynn_store(mem[w * 64 + b]);
                }
            }
        }
    });
    counts
}

/// `rounds` error-driven rounds over the training codes (the core's `flynn_restore`: each round
/// counts again, in its class, every code that the memories of the round's start misclassify
/// under `weights`), on top of `counts` (`classes · m`). Calls `after(r, counts)` after round
/// `r` (1-based; a sweep scores each). A round that finds no error changes nothing.
pub fn rounds(
    counts: &mut [u16],
    codes: &[Word],
    labels: &[u8],
    m: usize,
    weights: &[u64],
    rounds: u32,
    mut after: impl FnMut(u32, &[u16]),
) {
    let classes = counts.len() / m.max(1);
    for r in 1..=rounds {
        let wrong: Vec<bool> = codes
            .par_chunks(m.div_ceil(64))
            .zip(labels.par_iter())
            .map(|(code, &l)| {
                flynn_restore(l as usize, classes, |c| {
                    flynn_novelty(code, |i| counts[c * m + i], |n| weights[n as usize])
                })
            })
            .collect();
        if wrong.iter().any(|&w| w) {
            let more = train_if(codes, labels, classes, m, |j| wrong[j]);
            for (a, b) in counts.iter_mut().zip(more) {
                *a = a.saturating_add(b);
            }
        }
        after(r, counts);
    }
}

/// The class of each code under the memories `counts` and the weights of `flynn_weights`.
pub fn classify(counts: &[u16], classes: usize, m: usize, weights: &[u64], codes: &[Word]) -> Vec<u32> {
    codes
        .par_chunks(m.div_ceil(64))
        .map(|code| {
            flynn_class(classes, |c| flynn_novelty(code, |i| counts[c * m + i], |n| weights[n as usize])) as u32
        })
        .collect()
}

/// Exact k-NN on 8-bit images: squared Euclidean distances (exact integers), the `k` nearest
/// (ties: lower index, the core's `top_r`), the most frequent label among them (ties: lower label).
pub fn knn(train: &[u8], labels: &[u8], test: &[u8], d: usize, k: usize) -> Vec<u32> {
    let n = labels.len();
    test.par_chunks(d)
        .map_init(
            || vec![0u32; n],
            |dist, x| {
                for (j, y) in train.chunks(d).enumerate() {
                    dist[j] = x.iter().zip(y).map(|(&a, &b)| (a as i32 - b as i32).pow(2) as u32).sum();
                }
                let mut votes = [0u32; 256];
                top_r(n, k.min(n), |j| dist[j], &mut [0; 256], |j| votes[labels[j] as usize] += 1);
                let best = votes.iter().max().copied().unwrap_or(0);
                votes.iter().position(|&v| v == best).unwrap_or(0) as u32
            },
        )
        .collect()
}

fn labels_of(images: &Path, given: &Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.clone());
    }
    let name = images.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !name.contains("images-idx3") {
        bail!("{}: give its labels with --train-labels / --test-labels", images.display());
    }
    Ok(images.with_file_name(name.replace("images-idx3", "labels-idx1")))
}

/// Vectors and their labels (integers 0..=255), the first `limit` of them.
fn read_labelled(images: &Path, labels: &Path, limit: Option<usize>) -> Result<(Matrix, Vec<u8>)> {
    let mut x = data::read(images)?;
    let l = data::read(labels)?;
    if l.cols != 1 || l.rows != x.rows {
        bail!("{}: {} labels for {} vectors in {}", labels.display(), l.rows * l.cols, x.rows, images.display());
    }
    let mut y = Vec::with_capacity(l.rows);
    for &v in &l.data {
        if !(0.0..=255.0).contains(&v) || v.fract() != 0.0 {
            bail!("{}: label {v} is not an integer in 0..=255", labels.display());
        }
        y.push(v as u8);
    }
    if let Some(n) = limit {
        let n = n.min(x.rows);
        x.data.truncate(n * x.cols);
        x.rows = n;
        y.truncate(n);
    }
    if x.rows == 0 {
        bail!("{}: no vectors", images.display());
    }
    Ok((x, y))
}

fn accuracy(pred: &[u32], labels: &[u8]) -> f64 {
    pred.iter().zip(labels).filter(|(&p, &l)| p == l as u32).count() as f64 / labels.len().max(1) as f64
}

/// Runs `flyhash flynn`.
pub fn run(a: &FlynnConfig) -> Result<()> {
    if let Some(p) = &a.json {
        crate::io::atomic::check_writable(p)?;
    }
    let (cpu_on, gpu) = bench_devices(a.device)?;
    let knn_ks: &[usize] = if a.no_knn { &[] } else { &a.knn };
    let pb = stages(1 + 2 * cpu_on as u64 + 2 * gpu.is_some() as u64 + knn_ks.len() as u64);
    pb.set_message("reading the data");
    let (xtr, ytr) = read_labelled(&a.train, &labels_of(&a.train, &a.train_labels)?, a.train_limit)?;
    let (xte, yte) = read_labelled(&a.test, &labels_of(&a.test, &a.test_labels)?, a.test_limit)?;
    if xtr.cols != xte.cols {
        bail!("training vectors have {} values, test vectors {}", xtr.cols, xte.cols);
    }
    let d = xtr.cols;
    let lib = FlyNNConfig::default();
    let hash = FlyHashConfig { code_bits: a.m, ones_per_row: a.s, winners: a.k, seed: a.seed, ..lib.hash.clone() };
    let p = FlyNNConfig { hash, ..lib.clone() }
        .params(d)
        .map_err(|e| anyhow!("FlyHash parameters d={d}, m={:?}, s={:?}, k={:?}: {e}", a.m, a.s, a.k))?;
    let (m, s, k) = (p.m as usize, p.s as usize, p.k as usize);
    let gammas = if a.gamma.is_empty() { vec![lib.decay] } else { a.gamma.clone() };
    let centre = a.centre.unwrap_or(lib.centre);
    let rounds_at = if a.rounds.is_empty() { vec![lib.rounds] } else { a.rounds.clone() };
    let max_rounds = rounds_at.iter().copied().max().unwrap_or(0);
    crate::io::memory::ensure_fits("the codes", (xtr.rows + xte.rows) as u128 * p.code_words() as u128 * 8)?;
    let classes = ytr.iter().copied().max().unwrap_or(0) as usize + 1;
    crate::io::memory::ensure_fits(
        "the projection and the class memories",
        (s as u128 * 4 + classes as u128 * 2) * m as u128,
    )?;
    // The hashed copies: centred on the training mean (the k-NN baseline keeps the raw vectors).
    let mean = centre.then(|| column_mean(&xtr));
    let (htr, hte) = (centred(&xtr, mean.as_deref()), centred(&xte, mean.as_deref()));
    let weights: Vec<Vec<u64>> = gammas
        .iter()
        .map(|&g| {
            let mut w = vec![0u64; FLYNN_WEIGHTS];
            flynn_weights(g, &mut w);
            w
        })
        .collect();
    crate::outln!(
        "FlyNN on {} training and {} test vectors of {d} values, {classes} classes; FlyHash m={m}, s={s}, k={k}; γ={gammas:?}; centred: {centre}; rounds {rounds_at:?}",
        xtr.rows,
        xte.rows,
    )?;
    pb.inc(1);
    let mut rows = Vec::new();
    let mut cpu_result = None;
    if cpu_on {
        pb.set_message("CPU: hashing and storing the training set");
        let proj = cpu::projection(&p);
        let t = Instant::now();
        let codes = cpu::hash(&p, &proj, &htr, Wta::Exact);
        let counts = train(&codes, &ytr, classes, m);
        let train_s = t.elapsed().as_secs_f64();
        pb.inc(1);
        pb.set_message("CPU: the rounds; hashing and classifying the test set");
        let t = Instant::now();
        let test_codes = cpu::hash(&p, &proj, &hte, Wta::Exact);
        let hash_s = t.elapsed().as_secs_f64();
        let mut preds = Vec::new();
        for (w, &g) in weights.iter().zip(&gammas) {
            let mut mem = counts.clone();
            let t_rounds = Instant::now();
            let mut score = |r: u32, mem: &[u16]| {
                if !rounds_at.contains(&r) {
                    return;
                }
                let rounds_s = t_rounds.elapsed().as_secs_f64();
                let t = Instant::now();
                let pred = classify(mem, classes, m, w, &test_codes);
                rows.push(Row {
                    method: format!("FlyNN, cpu ({} threads)", rayon::current_num_threads()),
                    gamma: Some(g),
                    rounds: Some(r),
                    accuracy: accuracy(&pred, &yte),
                    train_seconds: train_s + rounds_s,
                    test_seconds: hash_s + t.elapsed().as_secs_f64(),
                    identical_to_cpu: None,
                });
                preds.push((mem.to_vec(), pred));
            };
            score(0, &mem);
            rounds(&mut mem, &codes, &ytr, m, w, max_rounds, score);
        }
        pb.inc(1);
        cpu_result = Some(preds);
    }
    if let Some(g) = &gpu {
        let f = g.fly(p)?;
        let hash = |x: &Matrix| -> Result<Vec<Word>> {
            let inputs = f.upload(&x.data, x.rows)?;
            Ok(f.hash(&inputs, FlyWta::Exact)?.codes)
        };
        hash(&hte)?; // warm-up: JIT, buffers
        pb.set_message("GPU: hashing the training and test sets");
        let t = Instant::now();
        let train_codes = hash(&htr)?;
        let train_hash_s = t.elapsed().as_secs_f64();
        pb.inc(1);
        pb.set_message("GPU: storing, the rounds, classifying");
        let t = Instant::now();
        let test_codes = hash(&hte)?;
        let hash_s = t.elapsed().as_secs_f64();
        let words = m.div_ceil(64);
        // The rounds on the GPU: its kernels classify the training codes (the core's
        // `flynn_class`, as `flynn_restore` does) and count the codes stored so far, the
        // training set followed by each round's misclassified codes (the same counts as adding
        // them, saturation included: min(a + b, max) either way).
        let mut i = 0;
        for (w, &gamma) in weights.iter().zip(&gammas) {
            let (mut stored, mut labels) = (train_codes.clone(), ytr.clone());
            let t_rounds = Instant::now();
            for r in 0..=max_rounds {
                let (mem, _) = g.flynn_train(&stored, &labels, classes, m)?;
                let train_s = train_hash_s + t_rounds.elapsed().as_secs_f64();
                if rounds_at.contains(&r) {
                    let t = Instant::now();
                    let (pred, _) = mem.classify(&test_codes, w)?;
                    let test_s = hash_s + t.elapsed().as_secs_f64();
                    let same = match &cpu_result {
                        Some(cpu) => Some(cpu[i].0 == mem.counts()? && cpu[i].1 == pred),
                        None => None,
                    };
                    i += 1;
                    rows.push(Row {
                        method: format!("FlyNN, gpu ({})", g.name()),
                        gamma: Some(gamma),
                        rounds: Some(r),
                        accuracy: accuracy(&pred, &yte),
                        train_seconds: train_s,
                        test_seconds: test_s,
                        identical_to_cpu: same,
                    });
                    if same == Some(false) {
                        bail!("GPU FlyNN differs from the CPU's");
                    }
                }
                if r < max_rounds {
                    let (pred, _) = mem.classify(&train_codes, w)?;
                    for (j, (&c, &l)) in pred.iter().zip(&ytr).enumerate() {
                        if c != l as u32 {
                            stored.extend_from_slice(&train_codes[j * words..(j + 1) * words]);
                            labels.push(l);
                        }
                    }
                }
            }
        }
        pb.inc(1);
    }
    if !knn_ks.is_empty() {
        let bytes = |x: &Matrix| -> Result<Vec<u8>> {
            x.data
                .iter()
                .map(|&v| neurobits_core::flyhash::is_pixel(v).then_some(v as u8))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| anyhow!("the k-NN baseline needs 8-bit images (integers 0..=255); --no-knn skips it"))
        };
        // Squared distances of 8-bit vectors stay exact u32s up to 66 051 values per vector.
        if (d as u64) * 255 * 255 > u32::MAX as u64 {
            bail!("the k-NN baseline takes vectors of at most 66 051 values ({d} given); --no-knn skips it");
        }
        let (tr, te) = (bytes(&xtr)?, bytes(&xte)?);
        for &kk in knn_ks {
            pb.set_message(format!("exact {kk}-NN on the CPU"));
            let t = Instant::now();
            let pred = knn(&tr, &ytr, &te, d, kk);
            rows.push(Row {
                method: format!("exact {kk}-NN, cpu ({} threads)", rayon::current_num_threads()),
                gamma: None,
                rounds: None,
                accuracy: accuracy(&pred, &yte),
                train_seconds: 0.0,
                test_seconds: t.elapsed().as_secs_f64(),
                identical_to_cpu: None,
            });
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    crate::outln!("{:<44} {:>6} {:>6} {:>9} {:>10} {:>10}", "method", "γ", "rounds", "accuracy", "train s", "test s")?;
    for r in &rows {
        let same = match r.identical_to_cpu {
            Some(true) => "  identical to the CPU's",
            Some(false) => "  DIFFERS",
            None => "",
        };
        let g = r.gamma.map_or(String::new(), |g| g.to_string());
        let rounds = r.rounds.map_or(String::new(), |r| r.to_string());
        crate::outln!(
            "{:<44} {:>6} {:>6} {:>9.4} {:>10.3} {:>10.3}{same}",
            r.method,
            g,
            rounds,
            r.accuracy,
            r.train_seconds,
            r.test_seconds
        )?;
    }
    if let Some(p) = &a.json {
        crate::io::json::write(p, &rows)?;
    }
    Ok(())
}
