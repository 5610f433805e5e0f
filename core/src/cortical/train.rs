//! The training protocol (D-12) and evaluation: what is shown when, for every target. A target
//! implements [`Learner`] (one learning step on one image); [`train`] decides the order.

use super::column::StepCtx;
use super::network::{Net, Schedule};
use super::rng::fisher_yates;

/// Epochs, exposure and seed of a training run (D-12 defaults: 60 epochs, exposure 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Protocol {
    /// Passes over the training list.
    pub epochs: u32,
    /// Consecutive learning steps per image.
    pub exposure: u32,
    /// Seed of the shuffles (and of the network).
    pub seed: u64,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol { epochs: 60, exposure: 4, seed: 1 }
    }
}

/// A target that can run one learning step on training image `image`.
pub trait Learner {
    /// What a step can fail with (a device error; the CPU never fails).
    type Error;
    /// One time step with learning on, then `t += 1`.
    fn learn(&mut self, image: usize) -> Result<(), Self::Error>;
}

/// Trains on the `order.len()` images: each epoch `e` shuffles them (`fisher_yates(order, e)`),
/// and holds each for `exposure` steps. `epoch_done(e)` is called after each epoch.
///
/// ```
/// use neurobits_core::cortical::{train, Learner, Protocol};
/// struct Log(Vec<usize>);
/// impl Learner for Log {
///     type Error = ();
///     fn learn(&mut self, i: usize) -> Result<(), ()> { self.0.push(i); Ok(()) }
/// }
/// let mut log = Log(vec![]);
/// train(&mut log, &mut [0; 3], &Protocol { epochs: 2, exposure: 2, seed: 1 }, |_| {}).unwrap();
/// assert_eq!(log.0.len(), 12);
/// assert_eq!(log.0[0], log.0[1]);
/// ```
pub fn train<L: Learner>(
    learner: &mut L,
    order: &mut [u32],
    p: &Protocol,
    mut epoch_done: impl FnMut(u32),
) -> Result<(), L::Error> {
    for e in 0..p.epochs {
        fisher_yates(order, e as u64, p.seed);
        for &img in order.iter() {
            for _ in 0..p.exposure {
                learner.learn(img as usize)?;
            }
        }
        epoch_done(e);
    }
    Ok(())
}

/// The single-thread CPU target: a [`Net`] and its images (`geo.bottom_words()` words each).
#[derive(Debug)]
pub struct CpuLearner<'a, 'b> {
    /// The network.
    pub net: Net<'a>,
    /// Bottom inputs of the training images, one after another.
    pub images: &'b [u64],
    /// Winners of the last step.
    pub winners: &'b mut [i32],
    /// Pipelined schedule: winners of the step before (all `-1` at the start).
    pub prev: &'b mut [i32],
    /// Which schedule.
    pub schedule: Schedule,
    /// Learning steps done.
    pub t: u64,
    /// Seed (random firing).
    pub seed: u64,
    /// The learning rule (canonically `Rule::spec(LTD)`).
    pub rule: super::rules::Rule,
}

impl Learner for CpuLearner<'_, '_> {
    type Error = core::convert::Infallible;
    fn learn(&mut self, image: usize) -> Result<(), Self::Error> {
        let nw = self.net.geo.bottom_words();
        let x = &self.images[image * nw..(image + 1) * nw];
        let ctx = StepCtx { rule: self.rule, ..StepCtx::new(&self.net.geo, self.t, self.seed, true) };
        match self.schedule {
            Schedule::Synchronous => self.net.step(x, self.winners, None, &ctx),
            Schedule::Pipelined => {
                self.net.step(x, self.winners, Some(self.prev), &ctx);
                self.prev.copy_from_slice(self.winners);
            }
        }
        self.t += 1;
        Ok(())
    }
}

/// The evaluation pass (D-12): learning and random firing off, one synchronous step per image
/// under `rule` (only whether it is competitive matters); `winners` receives `[image][hc]`.
pub fn evaluate(net: &mut Net<'_>, images: &[u64], winners: &mut [i32], rule: super::rules::Rule) {
    let (nw, n_hc) = (net.geo.bottom_words(), net.geo.hypercolumns());
    let ctx = StepCtx { rule, ..StepCtx::new(&net.geo, 0, 0, false) };
    for (x, w) in images.chunks(nw).zip(winners.chunks_mut(n_hc)) {
        net.step(x, w, None, &ctx);
    }
}
