//! Training on a GPU: the network goes up once, every step runs there, the state comes back at
//! the end.

use anyhow::Result;
use neurobits_core::cortical::rng::{key, FIRE};
use neurobits_core::cortical::rules::Rule;
use neurobits_core::cortical::Learner;
use neurobits_gpu_host::cortical::{CorticalGpu, StepArgs, Variant};
use neurobits_gpu_host::{Gpu, GpuError};

use super::{Network, Prepared};

/// A network resident on a GPU as a [`Learner`].
pub struct GpuTrainer<'g> {
    /// The device copy.
    pub dev: CorticalGpu<'g>,
    /// How each step is mapped.
    pub variant: Variant,
    /// Learning steps done.
    pub t: u64,
    /// `rng::key(seed, FIRE)`.
    pub fire_key: u64,
    /// The learning rule.
    pub rule: Rule,
}

impl Learner for GpuTrainer<'_> {
    type Error = GpuError;
    fn learn(&mut self, image: usize) -> Result<(), GpuError> {
        let a = StepArgs { learn: true, t: self.t, fire_key: self.fire_key, rule: self.rule };
        self.dev.step(image, &a, self.variant)?;
        self.t += 1;
        Ok(())
    }
}

/// Uploads `net` with `images` (bottom inputs) to `gpu`.
pub fn upload<'g>(gpu: &'g Gpu, net: &Network, images: &[u64], variant: Variant, rule: Rule) -> Result<GpuTrainer<'g>> {
    let dev = gpu.cortical(net.geo, &net.w, &net.omega, &net.cnt, &net.rf, images)?;
    Ok(GpuTrainer { dev, variant, t: net.t, fire_key: key(net.seed, FIRE), rule })
}

/// Copies the trained state back into `net`.
pub fn download(tr: &GpuTrainer<'_>, net: &mut Network) -> Result<()> {
    let (w, cnt, rf) = tr.dev.state()?;
    (net.w, net.cnt, net.rf, net.t) = (w, cnt, rf, tr.t);
    net.recompute_omega();
    Ok(())
}

/// Trains the configuration on `gpu` with `variant`; returns the network and the seconds spent
/// (the device finishes before the clock stops).
pub fn train_gpu(gpu: &Gpu, p: &Prepared, c: &super::Config, variant: Variant) -> Result<(Network, f64)> {
    let mut net = Network::new(p.geo, c.seed)?;
    (net.rule, net.lgn_threshold) = (c.rule(), c.lgn_threshold());
    let mut tr = upload(gpu, &net, &p.train_x, variant, net.rule)?;
    let s = super::run_protocol(&mut tr, p, c, |tr| Ok(tr.dev.synchronize()?))?;
    download(&tr, &mut net)?;
    Ok((net, s))
}

/// The evaluation pass on the GPU (learning off, synchronous, `variant` PerLevel, Queue or Graph) over
/// the uploaded images: winners `[image][hc]`.
pub fn evaluate(tr: &mut GpuTrainer<'_>, images: usize) -> Result<Vec<i32>> {
    let mut out = Vec::new();
    for i in 0..images {
        let a = StepArgs { learn: false, t: 0, fire_key: 0, rule: tr.rule };
        tr.dev.step(i, &a, tr.variant)?;
        out.extend(tr.dev.winners(tr.variant)?);
    }
    Ok(out)
}
