//! The cortical network as an estimator: `fit` trains it on labelled square images (spec §3–4)
//! and keeps what the readout needs of the training images; `transform` gives any image's
//! features (each hypercolumn's winner), `predict` the label of the training image whose
//! population code is nearest (competitive rule; the features that agree most under the spec's
//! rule), `score` the accuracy.
//! The split is the caller's: what `fit` saw is the reference, nothing is re-drawn.

use neurobits_core::cortical::Geometry;
use serde::{Deserialize, Serialize};

use super::data::{pixels, Dataset};
use super::{cpu, quality, readout_input, Config, Network, Prepared, ReadoutInput};
use crate::device::{DeviceCache, Target};
use crate::error::{Error, Result};
use crate::flyhash::data::Matrix;
use crate::io::model_file::{self, Payload, Reader, Saved};
use crate::model::Model;

/// A cortical-column network with its readout.
///
/// ```
/// use neurobits::cortical::{model::Cortical, Config};
/// use neurobits::flyhash::data::Matrix;
/// // Four 4x4 images (pixels 0..16), two classes.
/// let mut data = vec![0f32; 4 * 16];
/// for (i, img) in data.chunks_mut(16).enumerate() {
///     img.iter_mut().enumerate().for_each(|(p, v)| *v = if (p % 4 < 2) == (i < 2) { 16.0 } else { 0.0 });
/// }
/// let x = Matrix { rows: 4, cols: 16, data };
/// let mut net = Cortical::new(Config { levels: 2, minicolumns: 8, epochs: 5, upsample: 1, ..Default::default() });
/// net.fit(&x, &[0, 0, 1, 1])?;
/// assert_eq!(net.predict(&x)?, [0, 0, 1, 1]);
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Cortical {
    /// The configuration, as given.
    pub config: Config,
    /// Where training runs (features and the readout on the CPU).
    pub device: Target,
    opened: DeviceCache,
    fitted: Option<Fitted>,
}

#[derive(Clone, Debug)]
struct Fitted {
    net: Network,
    side: usize,
    train: ReadoutInput,
    labels: Vec<i64>,
}

impl Cortical {
    /// An untrained network training on the CPU.
    pub fn new(config: Config) -> Self {
        Cortical { config, device: Target::CPU, opened: DeviceCache::default(), fitted: None }
    }

    /// The same, training on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.device = device;
        self
    }

    fn fitted(&self) -> Result<&Fitted> {
        self.fitted.as_ref().ok_or(Error::NotFitted("cortical network"))
    }

    /// The trained network (weights, counters, steps).
    pub fn network(&self) -> Result<&Network> {
        Ok(&self.fitted()?.net)
    }

    /// Bottom inputs of square images (`rows × side²` pixels, 0…16 or 8-bit) through an LGN of
    /// threshold `theta`.
    fn bottom(&self, geo: &Geometry, x: &Matrix, side: Option<usize>, theta: i32) -> Result<(Vec<u64>, usize)> {
        let (px, s) = pixels(&x.data, x.cols, "the images")?;
        if let Some(want) = side.filter(|&w| w != s) {
            return Err(Error::input("the images", format!("{s}x{s} images, the network was fitted on {want}x{want}")));
        }
        let ds = Dataset { pixels: px, side: s, labels: vec![0; x.rows] };
        let ids: Vec<usize> = (0..x.rows).collect();
        Ok((ds.bottom(geo, &ids, self.config.upsample, theta)?, s))
    }

    /// Trains a new network on images `x` (one square image per row) with labels `y`.
    pub fn fit(&mut self, x: &Matrix, y: &[i64]) -> Result<&mut Self> {
        self.config.validate()?;
        if y.len() != x.rows || x.rows == 0 {
            return Err(Error::input("the labels", format!("{} labels for {} images", y.len(), x.rows)));
        }
        let geo = Geometry::new(self.config.levels, self.config.minicolumns)?;
        let (train_x, side) = self.bottom(&geo, x, None, self.config.lgn_threshold())?;
        let p = Prepared { geo, train_x, train_labels: vec![0; x.rows], test_x: vec![], test_labels: vec![] };
        let c = &self.config;
        let threads = match self.device {
            Target::Cpu { threads: Some(1) } => cpu::Threads::Single,
            _ => cpu::Threads::Rayon,
        };
        let device = self.opened.get(self.device)?;
        let (mut net, _) = device.run(
            |g| super::gpu::train_gpu(g, &p, c, c.variant.for_schedule(c.schedule)),
            |cpu| cpu.install(|| super::train_cpu(&p, c, threads)),
        )?;
        let train = readout_input(&mut net, &p.train_x);
        self.fitted = Some(Fitted { net, side, train, labels: y.to_vec() });
        Ok(self)
    }

    /// The training labels, sorted and without repeats (what `predict` answers with).
    pub fn classes(&self) -> Result<Vec<i64>> {
        let mut c = self.fitted()?.labels.clone();
        c.sort_unstable();
        c.dedup();
        Ok(c)
    }

    /// Pixels per image the network was trained on (`side²`).
    pub fn n_features(&self) -> Result<usize> {
        let f = self.fitted()?;
        Ok(f.side * f.side)
    }

    /// Features of each image: `rows × hypercolumns` winners (−1 silent).
    pub fn transform(&self, x: &Matrix) -> Result<Vec<i32>> {
        let f = self.fitted()?;
        if x.rows == 0 {
            return Err(Error::input("the images", "no images"));
        }
        // The images go through the LGN the network was trained behind (kept with it).
        let (bottom, _) = self.bottom(&f.net.geo, x, Some(f.side), f.net.lgn_threshold)?;
        let mut net = f.net.clone();
        Ok(cpu::features(&mut net, &bottom))
    }

    /// The label of each image: that of the training image whose population code is nearest
    /// (competitive rule) or whose features agree most (spec's rule).
    pub fn predict(&self, x: &Matrix) -> Result<Vec<i64>> {
        let f = self.fitted()?;
        if x.rows == 0 {
            return Err(Error::input("the images", "no images"));
        }
        let (bottom, _) = self.bottom(&f.net.geo, x, Some(f.side), f.net.lgn_threshold)?;
        let test = readout_input(&mut f.net.clone(), &bottom);
        // The readout reads labels as u32 class ids: map the caller's labels to their ranks.
        let mut classes = f.labels.clone();
        classes.sort_unstable();
        classes.dedup();
        let ids: Vec<u32> = f.labels.iter().map(|l| classes.binary_search(l).unwrap() as u32).collect();
        let pred = super::readout(&f.net, &f.train, &ids, &test);
        Ok(pred.into_iter().map(|c| classes[c as usize]).collect())
    }

    /// Accuracy and normalised mutual information of [`Cortical::predict`] against `y`.
    pub fn score(&self, x: &Matrix, y: &[i64]) -> Result<(f64, f64)> {
        if y.len() != x.rows {
            return Err(Error::input("the labels", format!("{} labels for {} images", y.len(), x.rows)));
        }
        let pairs: Vec<(i64, i64)> = self.predict(x)?.into_iter().zip(y.iter().copied()).collect();
        let right = pairs.iter().filter(|(p, t)| p == t).count();
        Ok((right as f64 / pairs.len().max(1) as f64, quality::nmi(&pairs)))
    }
}

#[derive(Serialize, Deserialize)]
struct SavedCortical {
    config: Config,
    side: usize,
    /// The LGN threshold trained with; absent from files saved before it could be chosen, which
    /// were all trained with θ = 16.
    #[serde(default)]
    lgn_threshold: Option<i32>,
    images: usize,
    weights_sha256: String,
}

impl Model for Cortical {
    const KIND: &'static str = "cortical";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let f = self.fitted()?;
        let head = SavedCortical {
            config: self.config.clone(),
            side: f.side,
            lgn_threshold: Some(f.net.lgn_threshold),
            images: f.labels.len(),
            weights_sha256: f.net.weights_sha256(),
        };
        let labels: Vec<u64> = f.labels.iter().map(|&l| l as u64).collect();
        let mut p = Payload::default();
        // The codes come last: files saved before the population-code readout end after the labels.
        p.bytes(&f.net.encode()).i32s(&f.train.features).words(&labels).u32s(&f.train.codes);
        let v = serde_json::to_value(head).map_err(|e| Error::input("cortical", e.to_string()))?;
        Ok((v, p.0))
    }

    fn from_parts(saved: &Saved, name: &str) -> Result<Self> {
        let head: SavedCortical = model_file::config(saved, name)?;
        let mut r = Reader::new(&saved.payload, name);
        let net = Network::decode(r.bytes()?, name)?;
        let features = r.i32s()?;
        let labels: Vec<i64> = r.words()?.into_iter().map(|l| l as i64).collect();
        let old = r.at_end();
        let codes = if old { vec![] } else { r.u32s()? };
        r.finish()?;
        let (n_hc, m) = (net.geo.hypercolumns(), net.geo.minicolumns());
        // A file saved before the population-code readout has no codes: it keeps the vote it was
        // saved with (`readout`), so a model that predicted yesterday predicts the same today.
        let want_codes = if net.rule.is_competitive() && !old { head.images * n_hc * m } else { 0 };
        if labels.len() != head.images
            || features.len() != head.images * n_hc
            || codes.len() != want_codes
            || head.side == 0
        {
            return Err(Error::input(name, "features and labels do not match the network (a corrupted file?)"));
        }
        let shape = (head.config.levels as usize, head.config.minicolumns);
        if shape != (net.geo.levels(), net.geo.minicolumns()) {
            return Err(Error::input(name, "the network's shape differs from its configuration (a corrupted file?)"));
        }
        // The network's own record (16 in files written before it was kept), and the header's.
        let theta = net.lgn_threshold;
        if head.lgn_threshold.is_some_and(|t| t != theta) || head.config.lgn_threshold.is_some_and(|t| t != theta) {
            return Err(Error::input(name, "the LGN threshold differs from the network's (a corrupted file?)"));
        }
        // A file from before the threshold was kept: its configuration asked for none, and it was
        // fitted at 16 — which a refit of the loaded configuration must use too, not today's default.
        let mut config = head.config;
        if head.lgn_threshold.is_none() {
            config.lgn_threshold = Some(theta);
        }
        Ok(Cortical {
            config,
            device: Target::CPU,
            opened: DeviceCache::default(),
            fitted: Some(Fitted { net, side: head.side, train: ReadoutInput { features, codes }, labels }),
        })
    }
}
