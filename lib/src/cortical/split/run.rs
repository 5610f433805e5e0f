//! A network split by a [`Plan`] over the CPU and GPUs: each worker holds its [`Part`] and runs
//! the core's step over it (the CPU) or one launch per span (a GPU); the subtrees' root winners
//! go up to the first upper worker's inbox, and so on to the top (P-4: the network-wide
//! hypercolumn ids keep every random decision where it was, so any split gives the same bits).

use anyhow::{bail, Result};
use neurobits_core::cortical::rng::{key, FIRE, INIT};
use neurobits_core::cortical::rules::{Rule, LTD};
use neurobits_core::cortical::{Geometry, Learner, Net, Part, StepCtx};
use neurobits_gpu_host::cortical::{CorticalGpu, StepArgs, Variant};
use neurobits_gpu_host::Gpu;

use super::plan::{Dev, Plan};
use crate::cortical::cpu::{step_rayon, Threads};
use crate::cortical::Network;

/// The state of a part on the host, hypercolumns in slot order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartState {
    /// Weights `[slot][i][m]`.
    pub w: Vec<u16>,
    /// `Ω` per `[slot][m]`.
    pub omega: Vec<u32>,
    /// Own-win counters.
    pub cnt: Vec<u32>,
    /// Random-firing flags.
    pub rf: Vec<u8>,
}

impl PartState {
    /// `part`'s hypercolumns copied out of a whole network.
    pub fn take(net: &Network, part: &Part) -> PartState {
        let (geo, m, wp) = (net.geo, net.geo.minicolumns(), net.geo.weights_per_column());
        let mut s = PartState { w: vec![], omega: vec![], cnt: vec![], rf: vec![] };
        for sp in part.spans() {
            let (a, b) = (sp.id(&geo, 0), sp.id(&geo, sp.count as usize));
            s.w.extend_from_slice(&net.w[a * wp..b * wp]);
            s.omega.extend_from_slice(&net.omega[a * m..b * m]);
            s.cnt.extend_from_slice(&net.cnt[a * m..b * m]);
            s.rf.extend_from_slice(&net.rf[a * m..b * m]);
        }
        s
    }

    /// The untrained `part` of the network of `seed` (the core's init over the part).
    pub fn untrained(geo: &Geometry, part: &Part, seed: u64) -> Result<PartState> {
        let (n, m) = (part.columns(), geo.minicolumns());
        crate::io::memory::ensure_fits(
            "a part of the cortical network",
            n as u128 * (geo.weights_per_column() as u128 * 2 + m as u128 * 9),
        )?;
        let mut s = PartState {
            w: vec![0; n * geo.weights_per_column()],
            omega: vec![0; n * m],
            cnt: vec![0; n * m],
            rf: vec![1; n * m],
        };
        s.net(geo, part).init(seed);
        Ok(s)
    }

    /// Writes the part's hypercolumns back into a whole network.
    pub fn put(&self, net: &mut Network, part: &Part) {
        let (geo, m, wp) = (net.geo, net.geo.minicolumns(), net.geo.weights_per_column());
        for sp in part.spans() {
            let (a, b, s) = (sp.id(&geo, 0), sp.id(&geo, sp.count as usize), sp.slot as usize);
            let n = b - a;
            net.w[a * wp..b * wp].copy_from_slice(&self.w[s * wp..(s + n) * wp]);
            net.omega[a * m..b * m].copy_from_slice(&self.omega[s * m..(s + n) * m]);
            net.cnt[a * m..b * m].copy_from_slice(&self.cnt[s * m..(s + n) * m]);
            net.rf[a * m..b * m].copy_from_slice(&self.rf[s * m..(s + n) * m]);
        }
    }

    fn net(&mut self, geo: &Geometry, part: &Part) -> Net<'_> {
        Net::part(*geo, *part, &mut self.w, &mut self.omega, &mut self.cnt, &mut self.rf).expect("sized for the part")
    }
}

/// How a worker runs its part.
enum Exec<'g> {
    Cpu { state: PartState, winners: Vec<i32> },
    Gpu(Box<CorticalGpu<'g>>),
}

/// One device's part.
struct Worker<'g> {
    dev: Dev,
    part: Part,
    exec: Exec<'g>,
}

impl Worker<'_> {
    fn set_inbox(&mut self, inbox: &[i32]) -> Result<()> {
        match &mut self.exec {
            Exec::Cpu { winners, .. } => winners[..inbox.len()].copy_from_slice(inbox),
            Exec::Gpu(g) => g.set_inbox(inbox)?,
        }
        Ok(())
    }

    fn outbox(&self) -> Result<Vec<i32>> {
        let top = self.part.top();
        Ok(match &self.exec {
            Exec::Cpu { winners, .. } => winners[top.out as usize..(top.out + top.count) as usize].to_vec(),
            Exec::Gpu(g) => g.outbox()?,
        })
    }
}

/// A network split over devices by a [`Plan`], its training images on every worker.
pub struct SplitNet<'g> {
    geo: Geometry,
    plan: Plan,
    lower: Vec<Worker<'g>>,
    upper: Vec<Worker<'g>>,
    images: Vec<u64>,
    threads: Threads,
    /// Learning steps done.
    pub t: u64,
    /// `rng::key(seed, FIRE)`.
    pub fire_key: u64,
    /// The learning rule.
    pub rule: Rule,
}

/// Where a worker's state comes from.
enum Source<'n> {
    Network(&'n Network),
    Untrained(u64),
}

impl<'g> SplitNet<'g> {
    /// Splits `net` by `plan` (`gpus[i]` is `Dev::Gpu(i)`); `images` are bottom inputs.
    pub fn new(net: &Network, plan: &Plan, gpus: &'g [Gpu], images: &[u64], threads: Threads) -> Result<Self> {
        let mut s = Self::build(&net.geo, Source::Network(net), plan, gpus, images, threads)?;
        (s.t, s.fire_key) = (net.t, key(net.seed, FIRE));
        Ok(s)
    }

    /// The untrained network of `seed` split by `plan`, every part made where it runs (a GPU's
    /// on the device: no host copy of the whole network).
    pub fn untrained(
        geo: &Geometry,
        seed: u64,
        plan: &Plan,
        gpus: &'g [Gpu],
        images: &[u64],
        threads: Threads,
    ) -> Result<Self> {
        let mut s = Self::build(geo, Source::Untrained(seed), plan, gpus, images, threads)?;
        s.fire_key = key(seed, FIRE);
        Ok(s)
    }

    fn build(
        geo: &Geometry,
        src: Source<'_>,
        plan: &Plan,
        gpus: &'g [Gpu],
        images: &[u64],
        threads: Threads,
    ) -> Result<Self> {
        if images.is_empty() || !images.len().is_multiple_of(geo.bottom_words()) {
            bail!("the images do not match the network's bottom level");
        }
        let worker = |dev: Dev, part: Part| -> Result<Worker<'g>> {
            let exec = match dev {
                Dev::Cpu => {
                    let state = match &src {
                        Source::Network(n) => PartState::take(n, &part),
                        Source::Untrained(seed) => PartState::untrained(geo, &part, *seed)?,
                    };
                    Exec::Cpu { state, winners: vec![-1; part.outputs()] }
                }
                Dev::Gpu(i) => {
                    let Some(g) = gpus.get(i) else { bail!("the plan uses gpu{i}, which is not open") };
                    Exec::Gpu(Box::new(match &src {
                        Source::Network(n) => {
                            let s = PartState::take(n, &part);
                            g.cortical_part(*geo, part, (&s.w, &s.omega, &s.cnt, &s.rf), images)?
                        }
                        Source::Untrained(seed) => g.cortical_untrained(*geo, part, key(*seed, INIT), images)?,
                    }))
                }
            };
            Ok(Worker { dev, part, exec })
        };
        let mut lower = vec![];
        for &(d, s, e) in &plan.lower {
            let part = if plan.cut == geo.levels() && s == 0 && e == 1 {
                Part::whole(geo)
            } else {
                Part::subtrees(geo, plan.cut, s, e).map_err(|e| anyhow::anyhow!("plan: {e}"))?
            };
            lower.push(worker(d, part)?);
        }
        let mut upper = vec![];
        for &(d, lo, hi) in &plan.upper {
            upper.push(worker(d, Part::levels(geo, lo, hi).map_err(|e| anyhow::anyhow!("plan: {e}"))?)?);
        }
        Ok(SplitNet {
            geo: *geo,
            plan: plan.clone(),
            lower,
            upper,
            images: images.to_vec(),
            threads,
            t: 0,
            fire_key: 0,
            rule: Rule::spec(LTD),
        })
    }

    /// The plan it runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Caps the launches of GPU `i` at `blocks` blocks (a slower device, made on purpose).
    pub fn slow_down(&mut self, i: usize, blocks: u32) {
        for w in self.lower.iter_mut().chain(self.upper.iter_mut()) {
            if let (Dev::Gpu(j), Exec::Gpu(g)) = (w.dev, &mut w.exec) {
                if j == i {
                    g.set_max_blocks(Some(blocks));
                }
            }
        }
    }

    fn run(&mut self, w: usize, upper: bool, image: usize, learn: bool) -> Result<()> {
        let (geo, threads) = (self.geo, self.threads);
        let nw = geo.bottom_words();
        let ctx = StepCtx { rule: self.rule, fire_key: self.fire_key, ..StepCtx::new(&geo, self.t, 0, learn) };
        let x = &self.images[image * nw..(image + 1) * nw];
        let wk = if upper { &mut self.upper[w] } else { &mut self.lower[w] };
        match &mut wk.exec {
            Exec::Cpu { state, winners } => {
                let mut net = state.net(&geo, &wk.part);
                match threads {
                    Threads::Single => net.step(x, winners, None, &ctx),
                    Threads::Rayon => step_rayon(&mut net, x, winners, None, &ctx),
                }
            }
            Exec::Gpu(g) => {
                let a = StepArgs { learn, t: self.t, fire_key: self.fire_key, rule: self.rule };
                g.step(image, &a, Variant::PerLevel)?;
            }
        }
        Ok(())
    }

    /// One synchronous step on image `image`: the GPUs' lower parts are launched first, the
    /// CPU's run meanwhile, then the upper levels bottom up, each fed the winners below.
    pub fn step(&mut self, image: usize, learn: bool) -> Result<()> {
        if (image + 1) * self.geo.bottom_words() > self.images.len() {
            bail!("image {image} was not given");
        }
        for pass in [true, false] {
            for i in 0..self.lower.len() {
                if matches!(self.lower[i].exec, Exec::Gpu(_)) == pass {
                    self.run(i, false, image, learn)?;
                }
            }
        }
        if !self.upper.is_empty() {
            let mut inbox = Vec::with_capacity(self.geo.level_len(self.plan.cut - 1));
            for w in &self.lower {
                inbox.extend(w.outbox()?);
            }
            for i in 0..self.upper.len() {
                self.upper[i].set_inbox(&inbox)?;
                self.run(i, true, image, learn)?;
                if i + 1 < self.upper.len() {
                    inbox = self.upper[i].outbox()?;
                }
            }
        }
        Ok(())
    }

    /// Waits for every device.
    pub fn synchronize(&self) -> Result<()> {
        for w in self.lower.iter().chain(&self.upper) {
            if let Exec::Gpu(g) = &w.exec {
                g.synchronize()?;
            }
        }
        Ok(())
    }

    /// Every hypercolumn's winner of the last step, by network id.
    pub fn winners(&self) -> Result<Vec<i32>> {
        let mut out = vec![-1; self.geo.hypercolumns()];
        for w in self.lower.iter().chain(&self.upper) {
            let buf = match &w.exec {
                Exec::Cpu { winners, .. } => winners.clone(),
                Exec::Gpu(g) => g.winners(Variant::PerLevel)?,
            };
            for sp in w.part.spans() {
                let (o, n) = (sp.out as usize, sp.count as usize);
                let id = sp.id(&self.geo, 0);
                out[id..id + n].copy_from_slice(&buf[o..o + n]);
            }
        }
        Ok(out)
    }

    /// The whole state, gathered from every worker into `net` (with the step count).
    pub fn gather(&self, net: &mut Network) -> Result<()> {
        if net.geo != self.geo {
            bail!("gathering into a network of another shape");
        }
        for w in self.lower.iter().chain(&self.upper) {
            match &w.exec {
                Exec::Cpu { state, .. } => state.put(net, &w.part),
                Exec::Gpu(g) => {
                    let (wts, cnt, rf) = g.state()?;
                    let omega = vec![0; cnt.len()];
                    PartState { w: wts, omega, cnt, rf }.put(net, &w.part);
                }
            }
        }
        net.t = self.t;
        net.recompute_omega();
        Ok(())
    }
}

impl Learner for SplitNet<'_> {
    type Error = anyhow::Error;
    fn learn(&mut self, image: usize) -> Result<()> {
        self.step(image, true)?;
        self.t += 1;
        Ok(())
    }
}
