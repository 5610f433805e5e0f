//! FlyHash as a transformer: `fit` fixes the input dimension and draws the projection (from the
//! seed, by the portable counter-based generator, so every target draws the same one), and
//! `transform` turns vectors into sparse binary codes, bit-packed.

use neurobits_core::flyhash::FlyParams;
use neurobits_core::Word;
use serde::{Deserialize, Serialize};

use super::cpu::{self, Wta};
use super::data::{Matrix, MatrixRef};
use crate::device::{simd_level, Device, DeviceCache, Target};
use crate::error::{Error, Result};
use crate::io::memory::ensure_fits;
use crate::io::model_file::Saved;
use crate::model::{check_features, Model};

/// FlyHash's configuration. Sizes left `None` follow the input dimension `d` at `fit`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlyHashConfig {
    /// Code length m (projection rows); `None`: 32·d, the expansion of the fly's olfactory
    /// circuit (50 projection neurons to about 2 000 Kenyon cells) and of FlyNN.
    pub code_bits: Option<usize>,
    /// Inputs sampled by each projection row, s; `None`: 5 % of d (at least 1).
    pub ones_per_row: Option<usize>,
    /// Winners k (ones per code); `None`: m/20 (5 %, the paper's Kenyon-cell sparsity).
    pub winners: Option<usize>,
    /// Seed of the projection.
    pub seed: u64,
    /// Winner-take-all variant.
    pub wta: Wta,
}

impl Default for FlyHashConfig {
    fn default() -> Self {
        FlyHashConfig { code_bits: None, ones_per_row: None, winners: None, seed: 1, wta: Wta::Exact }
    }
}

impl FlyHashConfig {
    /// Checks what can be checked before the data is seen.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in
            [("code_bits", self.code_bits), ("ones_per_row", self.ones_per_row), ("winners", self.winners)]
        {
            match v {
                Some(0) => return Err(Error::config(field, 0, "must be at least 1")),
                Some(n) if n > u32::MAX as usize => return Err(Error::config(field, n, "must fit 32 bits")),
                _ => {}
            }
        }
        if let (Some(m), Some(k)) = (self.code_bits, self.winners) {
            if k > m {
                return Err(Error::config("winners", k, format!("must be at most code_bits ({m})")));
            }
        }
        Ok(())
    }

    /// The parameters for inputs of dimension `d`, with `default_winners(m)` for an unset k.
    pub fn params_with(&self, d: usize, default_winners: impl Fn(usize) -> usize) -> Result<FlyParams> {
        self.validate()?;
        let m = self.code_bits.unwrap_or(32 * d);
        let s = self.ones_per_row.unwrap_or((d / 20).max(1));
        let k = self.winners.unwrap_or(default_winners(m).max(1));
        if s > d {
            return Err(Error::config("ones_per_row", s, format!("must be at most the input dimension ({d})")));
        }
        let u = |v: usize, f: &'static str| u32::try_from(v).map_err(|_| Error::config(f, v, "must fit 32 bits"));
        Ok(FlyParams::new(u(d, "d")?, u(m, "code_bits")?, u(s, "ones_per_row")?, u(k, "winners")?, self.seed)?)
    }
}

/// FlyHash, fitted or not.
///
/// ```
/// use neurobits::flyhash::{data::Matrix, model::{FlyHash, FlyHashConfig}};
/// let x = Matrix { rows: 2, cols: 4, data: vec![1., 0., 0., 2., 0., 3., 1., 0.] };
/// let mut h = FlyHash::new(FlyHashConfig { code_bits: Some(64), winners: Some(4), ..Default::default() });
/// h.fit(&x)?;
/// let codes = h.transform(&x)?;
/// assert_eq!(codes.len(), 2); // one 64-bit word per row
/// assert!(codes.iter().all(|c| c.count_ones() == 4));
/// # Ok::<(), neurobits::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FlyHash {
    /// The configuration, as given.
    pub config: FlyHashConfig,
    /// Where `transform` computes.
    pub device: Target,
    pub(crate) opened: DeviceCache,
    fitted: Option<Fitted>,
}

#[derive(Clone, Debug)]
struct Fitted {
    params: FlyParams,
    projection: Vec<u32>,
}

impl FlyHash {
    /// An unfitted FlyHash computing on the CPU.
    pub fn new(config: FlyHashConfig) -> Self {
        FlyHash { config, device: Target::CPU, opened: DeviceCache::default(), fitted: None }
    }

    /// The same, computing on `device`.
    pub fn with_device(mut self, device: Target) -> Self {
        self.device = device;
        self
    }

    /// Fixes the input dimension from `x` and draws the projection.
    pub fn fit(&mut self, x: &Matrix) -> Result<&mut Self> {
        let p = self.config.params_with(x.cols, |m| m / 20)?;
        self.fit_params(p)
    }

    /// Fits to explicit parameters (FlyNN and the index use their own defaults).
    pub fn fit_params(&mut self, params: FlyParams) -> Result<&mut Self> {
        crate::io::memory::ensure_fits("the projection", params.m as u128 * params.s as u128 * 4)?;
        self.fitted = Some(Fitted { params, projection: cpu::projection(&params) });
        Ok(self)
    }

    /// The fitted parameters (d, m, s, k, seed).
    pub fn params(&self) -> Result<FlyParams> {
        Ok(self.fitted()?.params)
    }

    /// The projection: m rows of s ascending input indices.
    pub fn projection(&self) -> Result<&[u32]> {
        Ok(&self.fitted()?.projection)
    }

    fn fitted(&self) -> Result<&Fitted> {
        self.fitted.as_ref().ok_or(Error::NotFitted("FlyHash"))
    }

    /// Codes of every row of `x`: `rows · ⌈m/64⌉` words, bit `i` of a code in word `i / 64`.
    pub fn transform(&self, x: &Matrix) -> Result<Vec<Word>> {
        self.transform_with(self.device, x)
    }

    /// [`FlyHash::transform`] on `device` for this call only. The device is opened once and kept
    /// by the model (a GPU context and its module cost far more than a batch's kernels), so
    /// callers that choose the device per call — Python — do not reopen it every time.
    pub fn transform_with(&self, device: Target, x: &Matrix) -> Result<Vec<Word>> {
        self.transform_view(device, x.view())
    }

    /// [`FlyHash::transform_with`] of rows the caller holds (no copy into a [`Matrix`]).
    pub fn transform_view(&self, device: Target, x: MatrixRef<'_>) -> Result<Vec<Word>> {
        self.transform_view_on(&*self.opened.get(device)?, x)
    }

    /// [`FlyHash::transform`] on an opened device (FlyNN and the index keep their own).
    pub(crate) fn transform_on(&self, device: &Device, x: &Matrix) -> Result<Vec<Word>> {
        self.transform_view_on(device, x.view())
    }

    fn transform_view_on(&self, device: &Device, x: MatrixRef<'_>) -> Result<Vec<Word>> {
        let f = self.fitted()?;
        if x.data.len() != x.rows * x.cols {
            return Err(Error::input(
                "the vectors",
                format!("{} values are not {} rows of {}", x.data.len(), x.rows, x.cols),
            ));
        }
        check_features("the vectors", x.rows, x.cols, f.params.d as usize)?;
        x.check_finite("the vectors")?;
        Ok(hash_view(&f.params, &f.projection, x, self.config.wta, device)?)
    }
}

/// Hashes `x` on the chosen device.
pub fn hash_matrix(p: &FlyParams, proj: &[u32], x: &Matrix, wta: Wta, device: &Device) -> anyhow::Result<Vec<Word>> {
    hash_view(p, proj, x.view(), wta, device)
}

/// [`hash_matrix`] of a borrowed matrix.
pub fn hash_view(
    p: &FlyParams,
    proj: &[u32],
    x: MatrixRef<'_>,
    wta: Wta,
    device: &Device,
) -> anyhow::Result<Vec<Word>> {
    ensure_fits(
        "the codes",
        x.rows as u128 * p.code_words() as u128 * 8 + p.m as u128 * 4 * rayon::current_num_threads() as u128,
    )?;
    device.run(
        |g| super::gpu::hash(g, p, proj, x, wta),
        |cpu| Ok(cpu.install(|| cpu::hash_view(simd_level(), p, proj, x, wta))),
    )
}

/// What the header of a saved FlyHash (and index, and FlyNN) holds: the configuration as given
/// and the parameters it resolved to.
#[derive(Serialize, Deserialize)]
pub(crate) struct SavedHasher {
    pub config: FlyHashConfig,
    pub d: u32,
    pub m: u32,
    pub s: u32,
    pub k: u32,
}

impl SavedHasher {
    pub(crate) fn of(h: &FlyHash) -> Result<Self> {
        let p = h.params()?;
        Ok(SavedHasher { config: h.config.clone(), d: p.d, m: p.m, s: p.s, k: p.k })
    }

    pub(crate) fn hasher(&self, name: &str) -> Result<FlyHash> {
        let p = FlyParams::new(self.d, self.m, self.s, self.k, self.config.seed)
            .map_err(|e| Error::input(name, format!("FlyHash parameters: {e}")))?;
        let mut h = FlyHash::new(self.config.clone());
        h.fit_params(p)?;
        Ok(h)
    }
}

impl Model for FlyHash {
    const KIND: &'static str = "flyhash";

    fn parts(&self) -> Result<(serde_json::Value, Vec<u8>)> {
        let v = serde_json::to_value(SavedHasher::of(self)?).map_err(|e| Error::input("flyhash", e.to_string()))?;
        Ok((v, Vec::new()))
    }

    fn from_parts(saved: &Saved, name: &str) -> Result<Self> {
        crate::io::model_file::config::<SavedHasher>(saved, name)?.hasher(name)
    }
}
