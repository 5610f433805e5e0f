//! The CPU drivers: single thread (the core's `Net::step`, the baseline of every speed-up, as in
//! the paper) and rayon (each level's hypercolumns in parallel, the paper's Pthreads analogue).

use neurobits_core::cortical::rules::Rule;
use neurobits_core::cortical::{column_step, Column, Learner, Net, Schedule, StepCtx};
use rayon::prelude::*;

use super::network::Network;

/// How the CPU runs a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread: the core's loop.
    Single,
    /// Every level's hypercolumns spread over the rayon pool.
    Rayon,
}

/// One step of every level on the CPU (see [`Net::step`] for `prev`).
/// `learn` uses the network's step counter and seed, and `rule`.
pub fn step(
    net: &mut Network,
    x: &[u64],
    winners: &mut [i32],
    prev: Option<&[i32]>,
    learn: bool,
    rule: Rule,
    threads: Threads,
) {
    let ctx = StepCtx { rule, ..StepCtx::new(&net.geo, net.t, net.seed, learn) };
    match threads {
        Threads::Single => net.net().step(x, winners, prev, &ctx),
        Threads::Rayon => step_rayon(&mut net.net(), x, winners, prev, &ctx),
    }
}

/// Spans of at most this many hypercolumns run on the calling thread.
const SERIAL_SPAN: usize = 32;

/// The rayon step of a whole network or a part: each span's hypercolumns in parallel, spans in
/// order (a span's children are written before it: they come earlier in the winner buffer).
pub fn step_rayon(net: &mut Net<'_>, x: &[u64], winners: &mut [i32], prev: Option<&[i32]>, ctx: &StepCtx) {
    let (geo, part) = (net.geo, net.part);
    let (m, wp) = (geo.minicolumns(), geo.weights_per_column());
    for s in part.spans() {
        let (o, n, out) = (s.slot as usize, s.count as usize, s.out as usize);
        let (below, here) = winners.split_at_mut(out);
        let src: &[i32] = prev.unwrap_or(below);
        if n <= SERIAL_SPAN {
            // Waking the pool costs more than these few hypercolumns (the top levels a split
            // gives the CPU while it waited for the GPUs).
            for (k, win) in here[..n].iter_mut().enumerate() {
                let xin = s.input(&geo, k, x, src);
                *win = column_step(net.column(o + k), s.id(&geo, k) as u64, &xin, ctx);
            }
            continue;
        }
        let columns = net.w[o * wp..(o + n) * wp]
            .par_chunks_mut(wp)
            .zip(net.omega[o * m..(o + n) * m].par_chunks_mut(m))
            .zip(net.cnt[o * m..(o + n) * m].par_chunks_mut(m))
            .zip(net.rf[o * m..(o + n) * m].par_chunks_mut(m));
        here[..n].par_iter_mut().zip(columns).with_min_len(16).enumerate().for_each(
            |(k, (win, (((w, omega), cnt), rf)))| {
                let xin = s.input(&geo, k, x, src);
                *win = column_step(Column { w, omega, cnt, rf }, s.id(&geo, k) as u64, &xin, ctx);
            },
        );
    }
}

/// The CPU as a [`Learner`]: a network, its training images' bottom inputs, the schedule.
#[derive(Debug)]
pub struct CpuTrainer<'a> {
    /// The network (its `t` counts the steps).
    pub net: &'a mut Network,
    /// Bottom inputs, `geo.bottom_words()` per image.
    pub images: &'a [u64],
    /// Schedule.
    pub schedule: Schedule,
    /// Single thread or rayon.
    pub threads: Threads,
    /// Winners of the last step.
    pub winners: Vec<i32>,
    /// Winners of the step before (pipelined).
    pub prev: Vec<i32>,
    /// The learning rule (the network's).
    pub rule: Rule,
}

impl<'a> CpuTrainer<'a> {
    /// A trainer at the network's current step, pipeline buffers empty (all silent).
    pub fn new(net: &'a mut Network, images: &'a [u64], schedule: Schedule, threads: Threads) -> Self {
        let n = net.geo.hypercolumns();
        let rule = net.rule;
        CpuTrainer { net, images, schedule, threads, winners: vec![-1; n], prev: vec![-1; n], rule }
    }
}

impl Learner for CpuTrainer<'_> {
    type Error = std::convert::Infallible;
    fn learn(&mut self, image: usize) -> Result<(), Self::Error> {
        let nw = self.net.geo.bottom_words();
        let x = &self.images[image * nw..(image + 1) * nw];
        match self.schedule {
            Schedule::Synchronous => step(self.net, x, &mut self.winners, None, true, self.rule, self.threads),
            Schedule::Pipelined => {
                step(self.net, x, &mut self.winners, Some(&self.prev), true, self.rule, self.threads);
                self.prev.copy_from_slice(&self.winners);
            }
        }
        self.net.t += 1;
        Ok(())
    }
}

/// The evaluation pass (learning off, synchronous, the network's rule) over `images`: winners
/// `[image][hc]`.
pub fn evaluate(net: &mut Network, images: &[u64], threads: Threads) -> Vec<i32> {
    let (nw, n_hc) = (net.geo.bottom_words(), net.geo.hypercolumns());
    let mut winners = vec![-1; images.len() / nw * n_hc];
    for (x, w) in images.chunks(nw).zip(winners.chunks_mut(n_hc)) {
        step(net, x, w, None, false, net.rule, threads);
    }
    winners
}

/// The readout pass over `images`, features `[image][hc]`: under the competitive rule the
/// evaluation winners themselves (lateral inhibition always picks one), under the spec's rule
/// [`Net::features`] (each hypercolumn's nearest feature, firing or not).
pub fn features(net: &mut Network, images: &[u64]) -> Vec<i32> {
    if net.rule.is_competitive() {
        return evaluate(net, images, Threads::Rayon);
    }
    let (nw, n_hc) = (net.geo.bottom_words(), net.geo.hypercolumns());
    let mut out = vec![-1; images.len() / nw * n_hc];
    let view = net.net();
    out.par_chunks_mut(n_hc).zip(images.par_chunks(nw)).for_each(|(o, x)| view.features(x, o));
    out
}

/// The competitive rule's evaluation pass with the population code ([`Net::population`]) over
/// `images`, in parallel over the images: winners `[image][hc]` and codes `[image][hc][m]`
/// (every minicolumn's matched mass; the readout's input).
pub fn population(net: &mut Network, images: &[u64]) -> (Vec<i32>, Vec<u32>) {
    let (nw, n_hc, m) = (net.geo.bottom_words(), net.geo.hypercolumns(), net.geo.minicolumns());
    let n = images.len() / nw;
    let (mut winners, mut codes) = (vec![-1; n * n_hc], vec![0; n * n_hc * m]);
    let view = net.net();
    winners
        .par_chunks_mut(n_hc)
        .zip(codes.par_chunks_mut(n_hc * m))
        .zip(images.par_chunks(nw))
        .for_each(|((w, c), x)| view.population(x, w, c));
    (winners, codes)
}
