//! FlyNN (Sinha & Ram, KDD 2021) as a classifier: each class keeps a memory of how often each
//! code bit was a winner in its training vectors; a vector goes to the class it is least novel
//! to. Training only counts (saturating): `fit` counts every training code, then runs
//! `config.rounds` error-driven rounds over them (each counts again the codes the memories
//! misclassify: the core's `flynn_restore`); `partial_fit` only counts, so without centring and
//! with `rounds = 0`, `partial_fit` on batches gives exactly the memories of one `fit`.
//!
//! Hashing runs on the chosen device; the class memories and the novelty sums on the CPU (the
//! integers are the same on every target: the GPU path is checked against these by `flyhash
//! flynn --device all`).

use neurobits_core::flyhash::{flynn_novelty, flynn_weights, FLYNN_WEIGHTS};
use neurobits_core::Word;
use serde::{Deserialize, Serialize};

use super::data::Matrix;
use super::flynn;
use super::model::{FlyHash, FlyHashConfig, SavedHasher};
use crate::device::{DeviceCache, Target};
use crate::error::{Error, Result};
use crate::io::model_file::{self, Payload, Reader, Saved};
use crate::model::Model;

/// Most classes: the class memories are indexed by a byte.
pub const MAX_CLASSES: usize = 256;

/// FlyNN's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlyNNConfig {
    /// The FlyHash of the inputs; an unset `code_bits` is [`FlyNNConfig::default_code_bits`]
    /// and an unset `winners` [`FlyNNConfig::default_winners`] (FlyNN wants longer and sparser
    /// codes than search does).
    pub hash: FlyHashConfig,
    /// The decay γ in [0, 1]: a memory bit weighs γ^n after n training codes of its class set it.
    pub decay: f64,
    /// Subtract the mean training vector (of the first `fit`/`partial_fit` batch, kept in the
    /// model) from every vector before hashing, so that the winners are the outputs most above
    /// the average input rather than the brightest. Absent from a configuration: the default
    /// (`true`); absent from a model file written before it existed: `false`, as it was fitted.
    pub centre: bool,
    /// Error-driven rounds of `fit` after its counting pass: each classifies every training
    /// vector with the memories as they stand and counts again, in its class, each one given
    /// another class (`partial_fit` only counts). Absent from a configuration: the default;
    /// absent from a model file written before it existed: 0, as it was fitted.
    pub rounds: u32,
}

/// Most error-driven rounds (each costs one classification of the training set).
pub const MAX_ROUNDS: u32 = 1000;

impl Default for FlyNNConfig {
    /// The defaults chosen on a validation split of Fashion-MNIST's training set (the last
    /// 10 000 of its 60 000 images, trained on the first 50 000; `make flyhash-quality`,
    /// results/flyhash/flynn-sweep.csv): centred inputs, γ = 0.99, 10 error-driven rounds,
    /// m = 32·d, k = m/250 — the best of the sweep at a code length whose prediction stays
    /// ≥ 10× faster than k-NN.
    fn default() -> Self {
        FlyNNConfig { hash: FlyHashConfig::default(), decay: 0.99, centre: true, rounds: 10 }
    }
}

impl FlyNNConfig {
    /// Code length m for inputs of dimension `d` when `hash.code_bits` is unset: 32·d (64·d
    /// is 0.3 point more accurate on validation, with the rounds, but predicts only about 7×
    /// faster than k-NN).
    pub fn default_code_bits(d: usize) -> usize {
        32 * d
    }

    /// Winners k of a code of `m` bits when `hash.winners` is unset: m/250 (at least 1).
    pub fn default_winners(m: usize) -> usize {
        (m / 250).max(1)
    }

    /// FlyNN's FlyHash parameters for inputs of dimension `d` (its own defaults for unset sizes).
    pub fn params(&self, d: usize) -> Result<neurobits_core::flyhash::FlyParams> {
        let m = self.hash.code_bits.unwrap_or_else(|| Self::default_code_bits(d));
        FlyHashConfig { code_bits: Some(m), ..self.hash.clone() }.params_with(d, Self::default_winners)
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<()> {
        self.hash.validate()?;
        if !(0.0..=1.0).contains(&self.decay) {
            return Err(Error::config("decay", self.decay, "must be in [0, 1]"));
        }
        if self.rounds > MAX_ROUNDS {
            return Err(Error::config("rounds", self.rounds, format!("must be at most {MAX_ROUNDS}")));
        }
        Ok(())
    }
}

/// The FlyNN classifier.
///
/// ```
/// use neurobits::flyhash::{classifier::{FlyNN, FlyNNConfig}, data::Matrix};
/// let x = Matrix { rows: 4, cols: 4, data: vec![9., 0., 0., 1., 8., 1., 0., 0., 0., 0., 9., 1., 0., 1., 8., 0.] };
/// let y = [3, 3, 7, 7];
/// let mut clf = FlyNN::new(FlyNNConfig::default());
/// clf.fit(&x, &y)?;
/// assert_eq!(clf.classes()?, [3, 7]);
/// assert_eq!(clf.predict(&x)?, y);
/// assert_eq!(clf.score(&x, &y)?, 1.0);
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FlyNN {
    /// The configuration, as given.
    pub config: FlyNNConfig,
    /// Where hashing runs.
    pub device: Target,
    opened: DeviceCache,
    fitted: Option<Fitted>,
}

#[derive(Clone, Debug)]
struct Fitted {
    hasher: FlyHash,
    /// The mean training vector subtracted before hashing (`config.centre`).
    mean: Option<Vec<f32>>,
    /// Sorted class labels; memory `c` belongs to `classes[c]`.
    classes: Vec<i64>,
    /// `classes · m` saturating counts, class-major.
    counts: Vec<u16>,
}

impl FlyNN {
    /// An unfitted classifier hashing on the CPU.
    pub fn new(config: FlyNNConfig) -> Self {
        FlyNN { config, device: Target::CPU, opened: DeviceCache::default(), fitted: None }
    }

    /// The same, hashing on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.device = device;
        self
    }

    fn fitted(&self) -> Result<&Fitted> {
        self.fitted.as_ref().ok_or(Error::NotFitted("FlyNN"))
    }

    /// The class labels, sorted.
    pub fn classes(&self) -> Result<&[i64]> {
        Ok(&self.fitted()?.classes)
    }

    /// The fitted FlyHash.
    pub fn hasher(&self) -> Result<&FlyHash> {
        Ok(&self.fitted()?.hasher)
    }

    /// The class memories: `classes · m` saturating counts, class-major (class `c`, bit `i` at
    /// `c·m + i`), in [`FlyNN::classes`] order.
    pub fn counts(&self) -> Result<&[u16]> {
        Ok(&self.fitted()?.counts)
    }

    /// The table `γ^n` (fixed point, `2^63` is 1) for every count `n`
    /// ([`neurobits_core::flyhash::flynn_weights`] of the decay).
    pub fn weight_table(&self) -> Vec<u64> {
        self.weights()
    }

    /// Forgets any earlier fit, then learns `x` with labels `y`: counts their codes, then runs
    /// `config.rounds` error-driven rounds over them.
    pub fn fit(&mut self, x: &Matrix, y: &[i64]) -> Result<&mut Self> {
        self.begin(x)?;
        let codes = self.codes(x)?;
        self.learn_codes(&codes, y)
    }

    /// Forgets any earlier fit and fixes what the first batch fixes — the input dimension, the
    /// projection and, with `centre`, the mean — from all of `x`, learning nothing yet: a
    /// caller that hashes `x` in chunks ([`FlyNN::codes`]) and then learns them
    /// ([`FlyNN::learn_codes`]) — the Python package, to stay interruptible — gets exactly the
    /// memories of one `fit(x)`.
    pub fn begin(&mut self, x: &Matrix) -> Result<&mut Self> {
        self.config.validate()?;
        self.fitted = None;
        let mut hasher = FlyHash::new(self.config.hash.clone());
        hasher.fit_params(self.config.params(x.cols)?)?;
        x.check_finite("the vectors")?;
        let mean = self.config.centre.then(|| column_mean(x));
        self.fitted = Some(Fitted { hasher, mean, classes: Vec::new(), counts: Vec::new() });
        Ok(self)
    }

    /// Learns `x` with labels `y` on top of what was learned before (the first call fixes the
    /// input dimension and the projection). New labels add classes. Counts only: no
    /// error-driven rounds.
    pub fn partial_fit(&mut self, x: &Matrix, y: &[i64]) -> Result<&mut Self> {
        self.config.validate()?;
        if y.len() != x.rows {
            return Err(Error::input("the labels", format!("{} labels for {} vectors", y.len(), x.rows)));
        }
        if self.fitted.is_none() {
            self.begin(x)?;
        }
        let codes = self.codes(x)?;
        self.count(&codes, y).map(|_| self)
    }

    /// Learns the codes of [`FlyNN::codes`] (of a fit begun with [`FlyNN::begin`]) with labels
    /// `y`: counts them, then runs `config.rounds` error-driven rounds over them (with the
    /// memories learned before, which the rounds read too).
    pub fn learn_codes(&mut self, codes: &[Word], y: &[i64]) -> Result<&mut Self> {
        self.config.validate()?;
        let idx = self.count(codes, y)?;
        let w = self.weights();
        let f = self.fitted.as_mut().expect("counted above");
        let m = f.hasher.params()?.m as usize;
        flynn::rounds(&mut f.counts, codes, &idx, m, &w, self.config.rounds, |_, _| {});
        Ok(self)
    }

    /// Counts `codes` with labels `y` into the memories (new labels add classes); returns the
    /// memory index of each label.
    fn count(&mut self, codes: &[Word], y: &[i64]) -> Result<Vec<u8>> {
        let f = self.fitted.as_mut().ok_or(Error::NotFitted("FlyNN (call begin first)"))?;
        let m = f.hasher.params()?.m as usize;
        if codes.len() != y.len() * m.div_ceil(64) {
            return Err(Error::input(
                "the codes",
                format!("{} words for {} labels of {}-bit codes", codes.len(), y.len(), m),
            ));
        }
        // New classes join in sorted order, their memories empty.
        let mut classes = f.classes.clone();
        classes.extend_from_slice(y);
        classes.sort_unstable();
        classes.dedup();
        if classes.len() > MAX_CLASSES {
            return Err(Error::input("the labels", format!("{} classes, at most {MAX_CLASSES}", classes.len())));
        }
        crate::io::memory::ensure_fits("the class memories", classes.len() as u128 * m as u128 * 2)?;
        let mut counts = vec![0u16; classes.len() * m];
        for (c, label) in f.classes.iter().enumerate() {
            let to = classes.binary_search(label).expect("old classes are kept");
            counts[to * m..(to + 1) * m].copy_from_slice(&f.counts[c * m..(c + 1) * m]);
        }
        let idx: Vec<u8> = y.iter().map(|l| classes.binary_search(l).expect("added above") as u8).collect();
        let batch = flynn::train(codes, &idx, classes.len(), m);
        for (a, b) in counts.iter_mut().zip(batch) {
            *a = a.saturating_add(b);
        }
        f.classes = classes;
        f.counts = counts;
        Ok(idx)
    }

    fn weights(&self) -> Vec<u64> {
        let mut w = vec![0u64; FLYNN_WEIGHTS];
        flynn_weights(self.config.decay, &mut w);
        w
    }

    /// The class of each row of `x`.
    pub fn predict(&self, x: &Matrix) -> Result<Vec<i64>> {
        let f = self.fitted()?;
        let m = f.hasher.params()?.m as usize;
        let codes = self.codes(x)?;
        let idx = flynn::classify(&f.counts, f.classes.len(), m, &self.weights(), &codes);
        Ok(idx.into_iter().map(|c| f.classes[c as usize]).collect())
    }

    /// For each row of `x`, one value per class (in [`FlyNN::classes`] order) summing to 1: the
    /// familiarity `1 − novelty/(k·2^63)` of the row's code to each class, normalised. The
    /// largest is the predicted class (ties: the lower class, as in `predict`). A score for
    /// ranking, not a calibrated probability.
    pub fn predict_proba(&self, x: &Matrix) -> Result<Vec<f64>> {
        use rayon::prelude::*;
        let f = self.fitted()?;
        let p = f.hasher.params()?;
        let (m, nc) = (p.m as usize, f.classes.len());
        let codes = self.codes(x)?;
        let w = self.weights();
        let full = p.k as f64 * 9_223_372_036_854_775_808.0;
        Ok(codes
            .par_chunks(p.code_words())
            .flat_map_iter(|code| {
                let fam: Vec<f64> = (0..nc)
                    .map(|c| 1.0 - flynn_novelty(code, |i| f.counts[c * m + i], |n| w[n as usize]) as f64 / full)
                    .collect();
                let sum: f64 = fam.iter().sum();
                fam.into_iter().map(move |v| if sum > 0.0 { v / sum } else { 1.0 / nc as f64 })
            })
            .collect())
    }

    /// Fraction of rows of `x` predicted as labelled in `y`.
    pub fn score(&self, x: &Matrix, y: &[i64]) -> Result<f64> {
        if y.len() != x.rows {
            return Err(Error::input("the labels", format!("{} labels for {} vectors", y.len(), x.rows)));
        }
        let pred = self.predict(x)?;
        Ok(pred.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64)
    }

    /// The codes of the rows of `x` (centred as the model centres them), hashed on the
    /// classifier's device: `rows · ⌈m/64⌉` words.
    pub fn codes(&self, x: &Matrix) -> Result<Vec<Word>> {
        let f = self.fitted()?;
        f.hasher.transform_on(&*self.opened.get(self.device)?, &centred(x, f.mean.as_deref()))
    }
}

/// The mean of each column of `x` (summed in `f64`, row order).
pub fn column_mean(x: &Matrix) -> Vec<f32> {
    let mut sum = vec![0f64; x.cols];
    for r in x.data.chunks(x.cols) {
        for (s, &v) in sum.iter_mut().zip(r) {
            *s += v as f64;
        }
    }
    sum.iter().map(|s| (s / x.rows.max(1) as f64) as f32).collect()
}

/// `x` minus `mean` in every row (a copy), or `x` itself without a mean. A row of another width
/// is left for the caller's feature check to refuse.
pub fn centred<'a>(x: &'a Matrix, mean: Option<&[f32]>) -> std::borrow::Cow<'a, Matrix> {
    match mean {
        Some(mu) if mu.len() == x.cols => {
            let data = x.data.chunks(x.cols).flat_map(|r| r.iter().zip(mu).map(|(v, m)| v - m)).collect();
            std::borrow::Cow::Owned(Matrix { rows: x.rows, cols: x.cols, data })
        }
        _ => std::borrow::Cow::Borrowed(x),
    }
}

#[derive(Serialize, Deserialize)]
struct SavedFlyNN {
    config: FlyNNConfig,
    hasher: SavedHasher,
    classes: Vec<i64>,
}

impl Model for FlyNN {
    const KIND: &'static str = "flynn";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let f = self.fitted()?;
        let head =
            SavedFlyNN { config: self.config.clone(), hasher: SavedHasher::of(&f.hasher)?, classes: f.classes.clone() };
        let v = serde_json::to_value(head).map_err(|e| Error::input("flynn", e.to_string()))?;
        let mut payload = Payload::default();
        payload.u16s(&f.counts);
        if let Some(mu) = &f.mean {
            payload.u32s(&mu.iter().map(|v| v.to_bits()).collect::<Vec<u32>>());
        }
        Ok((v, payload.0))
    }

    fn from_parts(saved: &Saved, name: &str) -> Result<Self> {
        let mut head: SavedFlyNN = model_file::config(saved, name)?;
        let given = |key: &str| saved.config.get("config").is_some_and(|c| c.get(key).is_some());
        if !given("centre") {
            head.config.centre = false; // written before centring existed, fitted without it
        }
        if !given("rounds") {
            head.config.rounds = 0; // written before the rounds existed, fitted without them
        }
        let hasher = head.hasher.hasher(name)?;
        let mut r = Reader::new(&saved.payload, name);
        let counts = r.u16s()?;
        let mean = if head.config.centre {
            Some(r.u32s()?.into_iter().map(f32::from_bits).collect::<Vec<f32>>())
        } else {
            None
        };
        r.finish()?;
        let m = hasher.params()?.m as usize;
        let sorted = head.classes.windows(2).all(|w| w[0] < w[1]);
        if !sorted
            || head.classes.is_empty()
            || head.classes.len() > MAX_CLASSES
            || counts.len() != head.classes.len() * m
            || mean.as_ref().is_some_and(|mu| mu.len() != hasher.params().map_or(0, |p| p.d as usize))
        {
            return Err(Error::input(
                name,
                "class memories do not match the classes and code length (a corrupted file?)",
            ));
        }
        head.config.validate().map_err(|e| Error::input(name, e.to_string()))?;
        Ok(FlyNN {
            config: head.config,
            device: Target::CPU,
            opened: DeviceCache::default(),
            fitted: Some(Fitted { hasher, mean, classes: head.classes, counts }),
        })
    }
}
