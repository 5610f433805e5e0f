//! The OCNN as a clusterer (scikit-learn's `fit` / `labels_`): the clustering of the points it
//! was fitted on, with the run's report. The network is transductive — its weights are the
//! points — so there is no `predict` for new points; a saved OCNN keeps its configuration, the
//! report and the labels.

use serde::{Deserialize, Serialize};

use super::points::Points;
use super::{Config, Report};
use crate::device::{DeviceCache, Target};
use crate::error::{Error, Result};
use crate::io::model_file::{self, Payload, Reader, Saved};
use crate::model::Model;

/// An OCNN clusterer.
///
/// ```
/// use neurobits::ocnn::{model::Ocnn, points::Points, Config};
/// // Two tight groups of three points.
/// let coords = vec![0., 0., 0.1, 0., 0., 0.1, 5., 5., 5.1, 5., 5., 5.1];
/// let p = Points { n: 6, dim: 2, coords };
/// let mut ocnn = Ocnn::new(Config { iters: 200, ..Default::default() });
/// let labels = ocnn.fit(&p)?.labels()?.to_vec();
/// assert_eq!(labels[0], labels[1]);
/// assert_ne!(labels[0], labels[3]);
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ocnn {
    /// The configuration, as given.
    pub config: Config,
    /// Where the dynamics and synchronization run.
    pub device: Target,
    opened: DeviceCache,
    report: Option<Report>,
}

impl Ocnn {
    /// An unfitted clusterer computing on the CPU.
    pub fn new(config: Config) -> Self {
        Ocnn { config, device: Target::CPU, opened: DeviceCache::default(), report: None }
    }

    /// The same, computing on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.device = device;
        self
    }

    /// Clusters `p`.
    pub fn fit(&mut self, p: &Points) -> Result<&mut Self> {
        self.config.validate()?;
        if p.n < 2 || p.dim == 0 || p.coords.len() != p.n * p.dim {
            return Err(Error::input(
                "the points",
                format!("{} points of {} coordinates: need at least 2 points of at least 1", p.n, p.dim),
            ));
        }
        if let Some(v) = p.coords.iter().find(|v| !v.is_finite()) {
            return Err(Error::input("the points", format!("{v} is not a finite coordinate")));
        }
        let device = self.opened.get(self.device)?;
        let c = &self.config;
        let report = device.run(|g| super::cluster(p, c, Some(g)), |cpu| cpu.install(|| super::cluster(p, c, None)))?;
        self.report = Some(report);
        Ok(self)
    }

    /// [`Ocnn::fit`], then the labels.
    pub fn fit_predict(&mut self, p: &Points) -> Result<Vec<u32>> {
        Ok(self.fit(p)?.labels()?.to_vec())
    }

    /// One label per point: clusters numbered by their smallest member.
    pub fn labels(&self) -> Result<&[u32]> {
        Ok(&self.report()?.labels)
    }

    /// The run's report: scale, threshold, clusters, the k(θ) curve, digests, times.
    pub fn report(&self) -> Result<&Report> {
        self.report.as_ref().ok_or(Error::NotFitted("OCNN"))
    }
}

#[derive(Serialize, Deserialize)]
struct SavedOcnn {
    config: Config,
    report: Report,
}

impl Model for Ocnn {
    const KIND: &'static str = "ocnn";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let report = self.report()?.clone();
        let payload = std::mem::take(Payload::default().u32s(&report.labels)).0;
        let v = serde_json::to_value(SavedOcnn { config: self.config.clone(), report })
            .map_err(|e| Error::input("ocnn", e.to_string()))?;
        Ok((v, payload))
    }

    fn from_parts(saved: &Saved, name: &str) -> Result<Self> {
        let SavedOcnn { mut config, mut report } = model_file::config(saved, name)?;
        // A file from before the link rule existed was clustered over every pair: say so,
        // rather than the default a new configuration gets.
        if saved.config.get("config").is_some_and(|c| c.get("links").is_none()) {
            config.links = super::Links::All;
        }
        let mut r = Reader::new(&saved.payload, name);
        report.labels = r.u32s()?;
        r.finish()?;
        if report.labels.len() != report.n {
            return Err(Error::input(
                name,
                format!("{} labels for {} points (a corrupted file?)", report.labels.len(), report.n),
            ));
        }
        Ok(Ocnn { config, device: Target::CPU, opened: DeviceCache::default(), report: Some(report) })
    }
}
