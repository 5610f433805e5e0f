//! The online profiler (spec §6, P-2): a sample network of the target's M on every device, timed
//! level by level over warm learning steps (median), and the cost of moving winners between
//! devices. A level's cost for another size is read off the sample: the bottom level scales
//! with its hypercolumns; an upper level of `n` hypercolumns is interpolated between the sample
//! levels around `n` (small levels cost a launch whatever their size: Fig. 9's reason for the
//! CPU at the top).

use anyhow::Result;
use neurobits_core::cortical::rng::{key, INIT};
use neurobits_core::cortical::{Geometry, Net, Part, StepCtx};
use neurobits_gpu_host::cortical::{StepArgs, Variant};
use neurobits_gpu_host::{Gpu, KernelTimer};
use serde::Serialize;
use std::time::Instant;

use super::plan::{Costs, Dev};
use crate::cortical::bench::random_inputs;
use crate::cortical::cpu::step_rayon;
use crate::cortical::Network;

/// Sample levels on a GPU (65 535 hypercolumns: 4 GiB at M = 128) and on the CPU.
pub const GPU_SAMPLE_LEVELS: u32 = 16;
/// Sample levels on the CPU (4 095 hypercolumns).
pub const CPU_SAMPLE_LEVELS: u32 = 12;
const WARM: usize = 3;
/// Steps issued back to back to time the host's share of a launch.
const ISSUE_STEPS: usize = 20;
const IMAGES: usize = 8;
const SEED: u64 = 1;

/// A sample level's median time.
#[derive(Clone, Debug, Serialize)]
pub struct LevelCost {
    /// Level of the sample network.
    pub level: usize,
    /// Its hypercolumns.
    pub hypercolumns: usize,
    /// Median seconds per step.
    pub seconds: f64,
    /// Seconds per hypercolumn.
    pub per_hypercolumn: f64,
}

/// What one device measured.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceCosts {
    /// The device.
    pub dev: Dev,
    /// Its name.
    pub name: String,
    /// Levels of its sample network.
    pub sample_levels: u32,
    /// Per level of the sample, bottom first.
    pub levels: Vec<LevelCost>,
    /// Seconds each timing event added to a level (subtracted from `levels`; GPUs only).
    pub event_gap: f64,
    /// Seconds to move a few winners to or from it (one copy, waited for).
    pub transfer: f64,
    /// Host seconds to issue one launch (GPUs; 0 on the CPU).
    pub issue: f64,
    /// Extra seconds of a level run after idling, over the same level run hot (the CPU; 0 on
    /// GPUs): its threads wake up.
    pub wake: f64,
}

/// Every device's measured costs: the partitioner's [`Costs`].
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// Per device.
    pub devices: Vec<DeviceCosts>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl DeviceCosts {
    fn cost(&self, l: usize, n: usize) -> f64 {
        let scale = |c: &LevelCost| c.seconds * n as f64 / c.hypercolumns as f64;
        if l == 0 || self.levels.len() == 1 {
            return scale(&self.levels[0]);
        }
        // Upper sample levels, largest first (sizes halve going up).
        let up = &self.levels[1..];
        if n >= up[0].hypercolumns {
            return scale(&up[0]);
        }
        for pair in up.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if n >= b.hypercolumns {
                let f = (n - b.hypercolumns) as f64 / (a.hypercolumns - b.hypercolumns) as f64;
                return b.seconds + f * (a.seconds - b.seconds);
            }
        }
        up[up.len() - 1].seconds
    }
}

impl Costs for Profile {
    fn level(&self, d: Dev, l: usize, n: usize) -> f64 {
        self.devices.iter().find(|c| c.dev == d).map_or(f64::INFINITY, |c| c.cost(l, n))
    }

    fn issue(&self, d: Dev) -> f64 {
        self.devices.iter().find(|c| c.dev == d).map_or(0.0, |c| c.issue)
    }

    fn wake(&self) -> f64 {
        self.devices.iter().find(|c| c.dev == Dev::Cpu).map_or(0.0, |c| c.wake)
    }

    fn transfer(&self, from: Dev, to: Dev, n: usize) -> f64 {
        if from == to {
            return 0.0;
        }
        let lat = |d: Dev| self.devices.iter().find(|c| c.dev == d).map_or(0.0, |c| c.transfer);
        // Through host memory at a PCIe-like 10 GB/s for the bytes; the latency dominates.
        lat(from) + lat(to) + n as f64 * 4.0 / 1e10
    }
}

fn level_costs(geo: &Geometry, per_level: Vec<Vec<f64>>) -> Vec<LevelCost> {
    per_level
        .into_iter()
        .enumerate()
        .map(|(l, v)| {
            let (n, s) = (geo.level_len(l), median(v));
            LevelCost { level: l, hypercolumns: n, seconds: s, per_hypercolumn: s / n as f64 }
        })
        .collect()
}

/// Times GPU `i`'s per-level launches on the untrained sample network over `steps` warm learning
/// steps (CUDA events around each launch, less the gap the events themselves add: measured
/// against as many untimed steps), and one small device-to-host copy. `max_blocks`
/// caps its launches (a slower device, on purpose).
pub fn profile_gpu(
    gpu: &Gpu,
    i: usize,
    geo: &Geometry,
    density: f64,
    steps: usize,
    max_blocks: Option<u32>,
) -> Result<DeviceCosts> {
    let sg = Geometry::new(geo.levels().min(GPU_SAMPLE_LEVELS as usize) as u32, geo.minicolumns())?;
    let x = random_inputs(&sg, IMAGES, density, SEED);
    let mut dev = gpu.cortical_untrained(sg, Part::whole(&sg), key(SEED, INIT), &x)?;
    dev.set_max_blocks(max_blocks);
    let fire_key = key(SEED, neurobits_core::cortical::rng::FIRE);
    let mut per_level = vec![vec![]; sg.levels()];
    for t in 0..WARM + steps {
        let a = StepArgs {
            learn: true,
            t: t as u64,
            fire_key,
            rule: neurobits_core::cortical::rules::Rule::spec(neurobits_core::cortical::rules::LTD),
        };
        let mut timer = KernelTimer::default();
        dev.step_timed(t % IMAGES, &a, Variant::PerLevel, Some(&mut timer))?;
        if t >= WARM {
            for (l, ms) in timer.each_ms()?.into_iter().enumerate() {
                per_level[l].push(ms * 1e-3);
            }
        }
    }
    // CUDA events between launches add their own gap to every level; the levels run back to back
    // without them. Take the difference to an untimed step, shared out over the levels.
    dev.synchronize()?;
    let start = Instant::now();
    for t in WARM + steps..WARM + 2 * steps {
        let a = StepArgs {
            learn: true,
            t: t as u64,
            fire_key,
            rule: neurobits_core::cortical::rules::Rule::spec(neurobits_core::cortical::rules::LTD),
        };
        dev.step(t % IMAGES, &a, Variant::PerLevel)?;
    }
    dev.synchronize()?;
    let untimed = start.elapsed().as_secs_f64() / steps as f64;
    // The host's share of a launch: issuing steps without waiting. At most 20 steps, so that the
    // driver's queue of pending launches (about a thousand) never fills and makes the host wait.
    let issued = steps.min(ISSUE_STEPS);
    let start = Instant::now();
    for t in WARM + 2 * steps..WARM + 2 * steps + issued {
        let a = StepArgs {
            learn: true,
            t: t as u64,
            fire_key,
            rule: neurobits_core::cortical::rules::Rule::spec(neurobits_core::cortical::rules::LTD),
        };
        dev.step(t % IMAGES, &a, Variant::PerLevel)?;
    }
    let issue = start.elapsed().as_secs_f64() / (issued * sg.levels()) as f64;
    dev.synchronize()?;
    let mut levels = level_costs(&sg, per_level);
    let timed: f64 = levels.iter().map(|l| l.seconds).sum();
    let gap = ((timed - untimed) / levels.len() as f64).max(0.0);
    for l in &mut levels {
        l.seconds = (l.seconds - gap).max(l.seconds * 0.1);
        l.per_hypercolumn = l.seconds / l.hypercolumns as f64;
    }
    let mut copies = vec![];
    for _ in 0..steps {
        let s = Instant::now();
        dev.outbox()?;
        copies.push(s.elapsed().as_secs_f64());
    }
    Ok(DeviceCosts {
        dev: Dev::Gpu(i),
        name: gpu.name(),
        sample_levels: sg.levels() as u32,
        levels,
        event_gap: gap,
        transfer: median(copies),
        issue,
        wake: 0.0,
    })
}

/// Times the CPU (rayon) level by level on the untrained sample network over `steps` warm
/// learning steps: level `l` runs as the part of levels `l … l` over the whole network's
/// buffers (its inbox is level `l − 1`'s winners, just before it).
pub fn profile_cpu(geo: &Geometry, density: f64, steps: usize) -> Result<DeviceCosts> {
    let sg = Geometry::new(geo.levels().min(CPU_SAMPLE_LEVELS as usize) as u32, geo.minicolumns())?;
    let x = random_inputs(&sg, IMAGES, density, SEED);
    let mut net = Network::new(sg, SEED)?;
    let mut winners = vec![-1i32; sg.hypercolumns()];
    let (m, wp, nw) = (sg.minicolumns(), sg.weights_per_column(), sg.bottom_words());
    let mut per_level = vec![vec![]; sg.levels()];
    for t in 0..WARM + steps {
        let ctx = StepCtx::new(&sg, t as u64, SEED, true);
        let img = &x[(t % IMAGES) * nw..(t % IMAGES + 1) * nw];
        for (l, times) in per_level.iter_mut().enumerate() {
            let (a, b) = (sg.offset(l), sg.offset(l) + sg.level_len(l));
            let part = Part::levels(&sg, l, l + 1)?;
            let mut view = Net::part(
                sg,
                part,
                &mut net.w[a * wp..b * wp],
                &mut net.omega[a * m..b * m],
                &mut net.cnt[a * m..b * m],
                &mut net.rf[a * m..b * m],
            )?;
            let from = if l == 0 { 0 } else { sg.offset(l - 1) };
            let s = Instant::now();
            step_rayon(&mut view, img, &mut winners[from..b], None, &ctx);
            if t >= WARM {
                times.push(s.elapsed().as_secs_f64());
            }
        }
    }
    // In a split step the CPU's top levels start after the CPU idled while the GPUs ran (about
    // a GPU step): the top level again, each time after such a pause.
    let top = sg.levels() - 1;
    let (a, b) = (sg.offset(top), sg.offset(top) + sg.level_len(top));
    let mut cold = vec![];
    for t in WARM + steps..WARM + 2 * steps {
        let ctx = StepCtx::new(&sg, t as u64, SEED, true);
        let img = &x[(t % IMAGES) * nw..(t % IMAGES + 1) * nw];
        let mut view = Net::part(
            sg,
            Part::levels(&sg, top, top + 1)?,
            &mut net.w[a * wp..b * wp],
            &mut net.omega[a * m..b * m],
            &mut net.cnt[a * m..b * m],
            &mut net.rf[a * m..b * m],
        )?;
        std::thread::sleep(std::time::Duration::from_micros(300));
        let s = Instant::now();
        let from = if top == 0 { 0 } else { sg.offset(top - 1) };
        step_rayon(&mut view, img, &mut winners[from..b], None, &ctx);
        cold.push(s.elapsed().as_secs_f64());
    }
    let levels = level_costs(&sg, per_level);
    let wake = (median(cold) - levels[top].seconds).max(0.0);
    Ok(DeviceCosts {
        dev: Dev::Cpu,
        name: crate::device::Cpu::new(None)?.name(),
        sample_levels: sg.levels() as u32,
        levels,
        event_gap: 0.0,
        transfer: 0.0,
        issue: 0.0,
        wake,
    })
}
