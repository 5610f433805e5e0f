//! `neurobits cortical profile`: profile every device, let the partitioner choose, then run and
//! time one GPU, the even split, the profiled split (and with `--brute-force` every cut and every
//! number of CPU top levels) side by side, checking that each gives one GPU's bits.

use anyhow::{bail, Result};
use neurobits_core::cortical::Geometry;
use neurobits_gpu_host::Gpu;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

use super::plan::{candidates, column_bytes, plan_for, Choice, Costs, Dev, Plan, Slot};
use super::profile::{profile_cpu, profile_gpu, Profile};
use super::run::SplitNet;
use crate::cortical::bench::random_inputs;
use crate::cortical::cpu::Threads;
use crate::cortical::Network;

/// What to profile and run.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ProfileConfig {
    /// Levels of the target network (2^L - 1 hypercolumns).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 16))]
    pub levels: u32,
    /// Minicolumns per hypercolumn.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 128))]
    pub minicolumns: usize,
    /// GPUs to use (default: every one here).
    #[cfg_attr(feature = "cli", arg(long))]
    pub gpus: Option<usize>,
    /// Leave the host CPU out of the split.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_cpu: bool,
    /// Fraction of active bottom inputs.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0.25))]
    pub density: f64,
    /// Timed steps per configuration (after 3 warm ones), and profiled steps per level.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 20))]
    pub steps: usize,
    /// Make GPU `I` slower on purpose by capping its launches at `BLOCKS` blocks: `I:BLOCKS`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub slow: Option<String>,
    /// Also run every cut level and every number of CPU top levels.
    #[cfg_attr(feature = "cli", arg(long))]
    pub brute_force: bool,
    /// Plans to try for a few steps before choosing: the best predicted for each number of CPU
    /// top levels, at most this many. Default 1, the model's choice alone: on 2 H200s at
    /// 2^14 - 1 hypercolumns, 8 such trials did not find the faster GPU-only plans (docs/manual/src/cortical.md).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1, value_parser = crate::validate::positive))]
    pub trials: usize,
    /// Timed steps per trial (after 3 warm ones).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 20, value_parser = crate::validate::positive))]
    pub trial_steps: usize,
    /// Write the profile, the choice and every run as JSON to this file (`-`: standard output).
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: Option<PathBuf>,
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// Which: "one gpu", "even", "profiled", "brute force".
    pub kind: String,
    /// The split.
    pub plan: Plan,
    /// Predicted seconds per step.
    pub predicted: f64,
    /// Measured seconds per step.
    pub seconds: f64,
    /// Busy seconds per step of each lower worker's subtrees, predicted (device, seconds).
    pub lower_busy: Vec<(Dev, f64)>,
    /// Same last-step winners (and, up to 2^16 hypercolumns, the same weights) as one GPU.
    pub equal: Option<bool>,
}

/// A plan timed for a few steps before the choice.
#[derive(Clone, Debug, Serialize)]
pub struct Trial {
    /// The split.
    pub plan: Plan,
    /// Predicted seconds per step.
    pub predicted: f64,
    /// Measured seconds per step.
    pub seconds: f64,
}

/// The JSON of a profile run.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Target levels.
    pub levels: u32,
    /// Minicolumns.
    pub minicolumns: usize,
    /// Hypercolumns.
    pub hypercolumns: usize,
    /// Bottom input density.
    pub density: f64,
    /// `I:BLOCKS` slowdown, if any.
    pub slow: Option<String>,
    /// What every device measured (P-2).
    pub profile: Profile,
    /// The partitioner's choice (the fastest trial).
    pub choice: Choice,
    /// The plans tried before choosing: prediction and measured seconds per step.
    pub trials: Vec<Trial>,
    /// The timed runs.
    pub runs: Vec<Run>,
    /// With `--brute-force`: the profiled split and the brute force's fastest plans timed again,
    /// side by side, in interleaved rounds.
    pub retimed: Vec<Retimed>,
}

/// A plan timed again in every one of the interleaved rounds after the brute force.
#[derive(Clone, Debug, Serialize)]
pub struct Retimed {
    /// Which: "profiled" or "brute force".
    pub kind: String,
    /// The split.
    pub plan: Plan,
    /// Seconds per step, one per round.
    pub seconds: Vec<f64>,
    /// Their median.
    pub median: f64,
}

/// Plans of the brute force timed again next to the profiled split, and the rounds.
const RETIME_PLANS: usize = 3;
const RETIME_ROUNDS: usize = 5;

const WARM: usize = 3;
const IMAGES: usize = 8;
const SEED: u64 = 1;
/// Largest network whose weights are gathered and compared after each run.
const CHECK_WEIGHTS_LEVELS: u32 = 16;

fn parse_slow(s: &str) -> Result<(usize, u32)> {
    let (i, b) = s.split_once(':').ok_or_else(|| anyhow::anyhow!("--slow wants GPU:BLOCKS, e.g. 1:32"))?;
    match (i.parse(), b.parse()) {
        (Ok(i), Ok(b)) if b > 0 => Ok((i, b)),
        _ => bail!("--slow wants GPU:BLOCKS with BLOCKS > 0, e.g. 1:32"),
    }
}

fn lower_busy(costs: &impl Costs, plan: &Plan) -> Vec<(Dev, f64)> {
    plan.lower
        .iter()
        .map(|&(d, s, e)| (d, (0..plan.cut).map(|l| costs.level(d, l, (e - s) << (plan.cut - 1 - l))).sum()))
        .collect()
}

/// Seconds per step of `plan` over `steps` timed steps (after [`WARM`]), its last winners, and
/// (with `weights`) the SHA-256 of its gathered weights.
fn time_plan(
    geo: &Geometry,
    plan: &Plan,
    gpus: &[Gpu],
    x: &[u64],
    slow: Option<(usize, u32)>,
    steps: usize,
    weights: bool,
) -> Result<(f64, Vec<i32>, Option<String>)> {
    let mut s = SplitNet::untrained(geo, SEED, plan, gpus, x, Threads::Rayon)?;
    if let Some((i, b)) = slow {
        s.slow_down(i, b);
    }
    for t in 0..WARM {
        s.step(t % IMAGES, true)?;
        s.t += 1;
    }
    s.synchronize()?;
    let start = Instant::now();
    for _ in 0..steps {
        let t = s.t as usize;
        s.step(t % IMAGES, true)?;
        s.t += 1;
    }
    s.synchronize()?;
    let seconds = start.elapsed().as_secs_f64() / steps as f64;
    let winners = s.winners()?;
    let digest = if weights {
        let mut net = Network::zeroed(*geo)?;
        s.gather(&mut net)?;
        Some(net.weights_sha256())
    } else {
        None
    };
    Ok((seconds, winners, digest))
}

/// Runs `neurobits cortical profile`.
pub fn run(c: &ProfileConfig) -> Result<()> {
    if !(0.0..=1.0).contains(&c.density) {
        bail!("--density must be in [0, 1]");
    }
    if c.steps == 0 {
        bail!("--steps must be at least 1");
    }
    if let Some(p) = &c.out {
        crate::io::atomic::check_writable(p)?;
    }
    let slow = c.slow.as_deref().map(parse_slow).transpose()?;
    let geo = Geometry::new(c.levels, c.minicolumns).map_err(|e| anyhow::anyhow!("{e}"))?;
    let n = c.gpus.unwrap_or_else(Gpu::count);
    if n == 0 {
        bail!("cortical profile needs a CUDA GPU (none found)");
    }
    let gpus = (0..n).map(Gpu::open).collect::<Result<Vec<_>, _>>()?;
    if let Some((i, _)) = slow {
        if i >= n {
            bail!("--slow names gpu{i}, but {n} GPUs are in use");
        }
    }
    let x = random_inputs(&geo, IMAGES, c.density, SEED);
    outln!(
        "cortical profile: {} levels x {} minicolumns ({} hypercolumns), bottom density {:.2}, {} GPU(s): {}{}",
        c.levels,
        c.minicolumns,
        geo.hypercolumns(),
        c.density,
        n,
        gpus.iter().map(|g| g.name()).collect::<Vec<_>>().join(", "),
        if c.no_cpu {
            String::new()
        } else {
            format!(" + CPU ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
    )?;
    // P-2: profile every device.
    let pb = crate::progress::stages((n + usize::from(!c.no_cpu)) as u64);
    let mut devices = vec![];
    for (i, g) in gpus.iter().enumerate() {
        pb.set_message(format!("profiling gpu{i}"));
        devices.push(profile_gpu(g, i, &geo, c.density, c.steps, slow.filter(|s| s.0 == i).map(|s| s.1))?);
        pb.inc(1);
    }
    if !c.no_cpu {
        pb.set_message("profiling the CPU");
        devices.push(profile_cpu(&geo, c.density, c.steps)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let profile = Profile { devices };
    outln!(
        "measured time per level (us; sample networks of {} levels, median of {} steps):",
        profile.devices.iter().map(|d| d.sample_levels.to_string()).collect::<Vec<_>>().join("/"),
        c.steps
    )?;
    outln!(
        "{:>5} {:>8} {}",
        "level",
        "HCs",
        profile.devices.iter().map(|d| format!("{:>10}", d.dev.to_string())).collect::<String>()
    )?;
    for l in 0..geo.levels() {
        let cells: String = profile
            .devices
            .iter()
            .map(|d| format!("{:>10.1}", profile.level(d.dev, l, geo.level_len(l)) * 1e6))
            .collect();
        outln!("{:>5} {:>8} {}", l, geo.level_len(l), cells)?;
    }
    outln!(
        "transfer latency (us): {}; launch issue (us): {}; CPU wake-up (us): {:.1}",
        profile.devices.iter().map(|d| format!("{} {:.1}", d.dev, d.transfer * 1e6)).collect::<Vec<_>>().join(", "),
        profile.devices.iter().map(|d| format!("{} {:.1}", d.dev, d.issue * 1e6)).collect::<Vec<_>>().join(", "),
        profile.wake() * 1e6
    )?;
    // P-1, P-3: choose.
    let mut slots = vec![];
    for (i, g) in gpus.iter().enumerate() {
        // Leave room for the images and the step buffers.
        let free = g.memory()?.0.saturating_sub(x.len() as u64 * 8 + (1 << 28));
        slots.push(Slot { dev: Dev::Gpu(i), capacity: free });
    }
    if !c.no_cpu {
        slots.push(Slot { dev: Dev::Cpu, capacity: crate::budget::bytes() / 2 });
    }
    let tried = candidates(&geo, &slots, &profile, c.trials);
    if tried.is_empty() {
        bail!(
            "the network ({} GiB) does not fit the devices together",
            (column_bytes(&geo) * geo.hypercolumns() as u64) >> 30
        );
    }
    // The model ranks; a few timed steps of its best plans choose (its error, mostly the host's
    // share of CPU top levels, can reorder plans predicted within a few per cent).
    let mut trials = vec![];
    let pb = crate::progress::stages(tried.len() as u64);
    for ch in &tried {
        pb.set_message(format!("trial: {}", ch.plan));
        let (seconds, _, _) = time_plan(&geo, &ch.plan, &gpus, &x, slow, c.trial_steps, false)?;
        outln!("trial {:>9.3} ms/step (predicted {:>8.3})  {}", seconds * 1e3, ch.predicted * 1e3, ch.plan)?;
        trials.push(Trial { plan: ch.plan.clone(), predicted: ch.predicted, seconds });
        pb.inc(1);
    }
    pb.finish_and_clear();
    let best = trials.iter().enumerate().min_by(|a, b| a.1.seconds.total_cmp(&b.1.seconds)).map_or(0, |(i, _)| i);
    let choice = tried[best].clone();
    outln!(
        "profiled split (fastest of {} trials): {} (predicted {:.3} ms/step)",
        trials.len(),
        choice.plan,
        choice.predicted * 1e3
    )?;
    // The runs.
    let mut todo: Vec<(String, Plan, f64)> = vec![];
    if slots[0].capacity >= column_bytes(&geo) * geo.hypercolumns() as u64 {
        todo.push((
            "one gpu".into(),
            Plan::single(&geo, Dev::Gpu(0)),
            super::plan::predict(&geo, &profile, geo.levels(), &[Dev::Gpu(0)], &[1], Dev::Gpu(0), 0),
        ));
    }
    if n > 1 {
        // The even split at the profiled cut (or the lowest cut with a subtree per GPU).
        let cut = if choice.plan.lower.len() > 1 {
            choice.plan.cut
        } else {
            (1..=geo.levels()).rev().find(|&k| geo.level_len(k - 1) >= n.next_power_of_two()).unwrap_or(1)
        };
        let total = geo.level_len(cut - 1);
        let devs: Vec<Dev> = (0..n).map(Dev::Gpu).collect();
        let counts: Vec<usize> = (0..n).map(|i| total / n + usize::from(i < total % n)).collect();
        let h = choice.plan.cpu_levels().min(geo.levels() - cut);
        let p = super::plan::predict(&geo, &profile, cut, &devs, &counts, Dev::Gpu(0), h);
        todo.push(("even".into(), Plan::dealt(&geo, cut, &devs, &counts, Dev::Gpu(0), h), p));
    }
    todo.push(("profiled".into(), choice.plan.clone(), choice.predicted));
    if c.brute_force {
        for cut in 1..geo.levels() {
            for h in 0..=(if c.no_cpu { 0 } else { geo.levels() - cut }) {
                if let Some(ch) = plan_for(&geo, &slots, &profile, cut, h) {
                    if !todo.iter().any(|t| t.1 == ch.plan) {
                        todo.push(("brute force".into(), ch.plan, ch.predicted));
                    }
                }
            }
        }
    }
    let pb = crate::progress::stages(todo.len() as u64);
    let mut reference: Option<(Vec<i32>, Option<String>)> = None;
    let mut runs = vec![];
    for (kind, plan, predicted) in todo {
        pb.set_message(format!("{kind}: {plan}"));
        // Weights are gathered and hashed for the named runs; the brute force's many plans
        // compare their winners only (gathering a gigabyte per plan would triple its time).
        let weights = c.levels <= CHECK_WEIGHTS_LEVELS && kind != "brute force";
        let (seconds, winners, digest) = time_plan(&geo, &plan, &gpus, &x, slow, c.steps, weights)?;
        let equal = match &reference {
            None => {
                reference = Some((winners, digest));
                None
            }
            Some((w, d)) => Some(*w == winners && (digest.is_none() || *d == digest)),
        };
        let busy = lower_busy(&profile, &plan);
        outln!(
            "{:<12} {:>9.3} ms/step (predicted {:>8.3}){}  {}",
            kind,
            seconds * 1e3,
            predicted * 1e3,
            match equal {
                Some(true) => "  = first run",
                Some(false) => "  != first run!",
                None => "",
            },
            plan
        )?;
        runs.push(Run { kind, plan, predicted, seconds, lower_busy: busy, equal });
        pb.inc(1);
    }
    pb.finish_and_clear();
    let time = |k: &str| runs.iter().find(|r| r.kind == k).map(|r| r.seconds);
    if let (Some(one), Some(prof)) = (time("one gpu"), time("profiled")) {
        outln!(
            "profiled split: {:.2}x one GPU{}",
            one / prof,
            time("even").map(|e| format!(", even split {:.2}x", one / e)).unwrap_or_default()
        )?;
    }
    let mut retimed = vec![];
    if c.brute_force {
        let best = runs.iter().map(|r| r.seconds).fold(f64::INFINITY, f64::min);
        if let Some(prof) = time("profiled") {
            outln!(
                "brute force: best measured {:.3} ms/step; the profiled split is within {:.1} % (one timing each)",
                best * 1e3,
                (prof / best - 1.0) * 100.0
            )?;
            // The fastest of a hundred single timings is biased low (its own noise helped it win):
            // the profiled split and the brute force's fastest few are timed again, side by side,
            // round after round, and compared by their medians.
            let mut order: Vec<&Run> = runs.iter().filter(|r| r.kind != "one gpu" && r.kind != "even").collect();
            order.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
            let mut plans: Vec<(String, Plan)> =
                runs.iter().filter(|r| r.kind == "profiled").map(|r| (r.kind.clone(), r.plan.clone())).collect();
            for r in order.iter().filter(|r| r.kind != "profiled").take(RETIME_PLANS) {
                plans.push((r.kind.clone(), r.plan.clone()));
            }
            let mut seconds = vec![vec![]; plans.len()];
            let pb = crate::progress::stages((RETIME_ROUNDS * plans.len()) as u64);
            for _ in 0..RETIME_ROUNDS {
                for (k, (_, plan)) in plans.iter().enumerate() {
                    pb.set_message(format!("again: {plan}"));
                    seconds[k].push(time_plan(&geo, plan, &gpus, &x, slow, c.steps, false)?.0);
                    pb.inc(1);
                }
            }
            pb.finish_and_clear();
            for ((kind, plan), s) in plans.into_iter().zip(seconds) {
                let mut sorted = s.clone();
                sorted.sort_by(f64::total_cmp);
                let median = sorted[sorted.len() / 2];
                outln!("again {:<12} median {:>9.3} ms/step of {} rounds  {}", kind, median * 1e3, s.len(), plan)?;
                retimed.push(Retimed { kind, plan, seconds: s, median });
            }
            let best = retimed.iter().map(|r| r.median).fold(f64::INFINITY, f64::min);
            if let Some(p) = retimed.iter().find(|r| r.kind == "profiled") {
                outln!(
                    "side by side ({RETIME_ROUNDS} interleaved rounds): the profiled split is within {:.1} % of the \
                     fastest ({:.3} ms/step)",
                    (p.median / best - 1.0) * 100.0,
                    best * 1e3
                )?;
            }
        }
    }
    if runs.iter().any(|r| r.equal == Some(false)) {
        bail!("a split gave other bits than the first run");
    }
    if let Some(path) = &c.out {
        let r = Report {
            levels: c.levels,
            minicolumns: c.minicolumns,
            hypercolumns: geo.hypercolumns(),
            density: c.density,
            slow: c.slow.clone(),
            profile,
            choice,
            trials,
            runs,
            retimed,
        };
        crate::io::json::write(path, &r)?;
    }
    Ok(())
}
