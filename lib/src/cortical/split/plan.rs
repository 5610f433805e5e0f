//! The profiler's decision (spec §6, P-1 and P-3): which device holds which subtrees of the lower
//! levels and where the upper levels run, chosen to minimise the predicted time per step from
//! per-level costs (measured by [`super::profile`], or injected by tests).

use neurobits_core::cortical::Geometry;
use serde::Serialize;

/// A worker: the host CPU (rayon) or GPU `i` of the run's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dev {
    /// The host's cores.
    Cpu,
    /// GPU number `i`.
    Gpu(usize),
}

impl std::fmt::Display for Dev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dev::Cpu => write!(f, "cpu"),
            Dev::Gpu(i) => write!(f, "gpu{i}"),
        }
    }
}

/// Where every hypercolumn runs: the lower levels `0 … cut − 1` dealt by subtrees, then runs of
/// whole upper levels on one device each, bottom up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// First level not split by subtrees (`L` = no upper levels).
    pub cut: usize,
    /// `(device, first subtree, end)` in subtree order; the ranges tile `0 … 2^(L−cut)`.
    pub lower: Vec<(Dev, usize, usize)>,
    /// `(device, first level, end)`, bottom up, tiling `cut … L`.
    pub upper: Vec<(Dev, usize, usize)>,
}

impl Plan {
    /// The whole network on one device.
    pub fn single(geo: &Geometry, d: Dev) -> Plan {
        Plan { cut: geo.levels(), lower: vec![(d, 0, 1)], upper: vec![] }
    }

    /// `counts[i]` subtrees of a cut at `cut` to `devs[i]` (zero counts are left out); upper
    /// levels `cut … L − h` on `middle`, the top `h` on the CPU.
    pub fn dealt(geo: &Geometry, cut: usize, devs: &[Dev], counts: &[usize], middle: Dev, h: usize) -> Plan {
        let mut lower = vec![];
        let mut s = 0;
        for (&d, &n) in devs.iter().zip(counts) {
            if n > 0 {
                lower.push((d, s, s + n));
                s += n;
            }
        }
        let l = geo.levels();
        let mut upper = vec![];
        if cut < l - h {
            upper.push((middle, cut, l - h));
        }
        if h > 0 {
            upper.push((Dev::Cpu, l - h, l));
        }
        Plan { cut, lower, upper }
    }

    /// Levels on the CPU at the top.
    pub fn cpu_levels(&self) -> usize {
        self.upper.iter().filter(|u| u.0 == Dev::Cpu).map(|u| u.2 - u.1).sum()
    }

    /// Subtrees per device, in the order of `devs`.
    pub fn counts(&self, devs: &[Dev]) -> Vec<usize> {
        devs.iter().map(|d| self.lower.iter().filter(|l| l.0 == *d).map(|l| l.2 - l.1).sum()).collect()
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cut {}:", self.cut)?;
        for (d, s, e) in &self.lower {
            write!(f, " {d} {} subtrees", e - s)?;
        }
        for (d, lo, hi) in &self.upper {
            write!(f, "; {d} levels {lo}-{}", hi - 1)?;
        }
        Ok(())
    }
}

/// Per-level costs, in seconds: what the profiler measured, or a test's model.
pub trait Costs {
    /// One step of `n` hypercolumns of level `l` on `d`.
    fn level(&self, d: Dev, l: usize, n: usize) -> f64;
    /// Moving `n` winners from `from` to `to` (0 on one device).
    fn transfer(&self, from: Dev, to: Dev, n: usize) -> f64;
    /// Host seconds to issue one launch on GPU `d`: one host thread issues every launch of a
    /// step, so a GPU starts after the launches issued before its own, and a level takes at
    /// least this long (0 unless measured).
    fn issue(&self, _d: Dev) -> f64 {
        0.0
    }
    /// Extra seconds of the first CPU level of a step, the CPU having idled while the GPUs ran
    /// (its threads wake up; 0 unless measured).
    fn wake(&self) -> f64 {
        0.0
    }
}

/// A device the partitioner may use and the bytes of network state it can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The device.
    pub dev: Dev,
    /// Free memory for the network, bytes.
    pub capacity: u64,
}

/// The chosen plan and its predicted seconds per step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    /// Where everything runs.
    pub plan: Plan,
    /// Predicted seconds per step.
    pub predicted: f64,
}

/// Bytes of one hypercolumn's state on a device (u16 weights, `Ω` and counters u32, a flag).
pub fn column_bytes(geo: &Geometry) -> u64 {
    geo.weights_per_column() as u64 * 2 + geo.minicolumns() as u64 * 9
}

/// Seconds for `n` subtrees of a cut at `cut` on `d` (levels one after another).
fn lower_time(c: &impl Costs, d: Dev, cut: usize, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (0..cut).map(|l| c.level(d, l, n << (cut - 1 - l))).sum()
}

/// Largest-remainder rounding of `total · w_i / Σw` (ties to the earlier device).
pub fn largest_remainder(total: usize, weights: &[f64]) -> Vec<usize> {
    let sum: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| total as f64 * w / sum).collect();
    let mut n: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut order: Vec<usize> = (0..n.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    let short = total - n.iter().sum::<usize>();
    for &i in order.iter().take(short) {
        n[i] += 1;
    }
    n
}

/// Deals `total` subtrees over devices of throughput `rate` (subtrees per second) holding at most
/// `cap` each: proportional shares first, then what overflows a full device goes to the fastest
/// devices with room ("performance first, DRAM second"). `None` if they cannot hold them all.
pub fn deal(total: usize, rate: &[f64], cap: &[usize]) -> Option<Vec<usize>> {
    if cap.iter().sum::<usize>() < total {
        return None;
    }
    let mut n = largest_remainder(total, rate);
    let mut spill = 0;
    for (k, c) in n.iter_mut().zip(cap) {
        if *k > *c {
            spill += *k - *c;
            *k = *c;
        }
    }
    let mut by_speed: Vec<usize> = (0..rate.len()).collect();
    by_speed.sort_by(|&a, &b| rate[b].total_cmp(&rate[a]).then(a.cmp(&b)));
    for i in by_speed {
        let take = spill.min(cap[i] - n[i]);
        n[i] += take;
        spill -= take;
    }
    Some(n)
}

/// The predicted seconds per step of dealing `counts` subtrees of `cut` to `gpus`, the upper
/// levels on `middle` up to `L − h`, the top `h` on the CPU.
pub fn predict(
    geo: &Geometry,
    c: &impl Costs,
    cut: usize,
    gpus: &[Dev],
    counts: &[usize],
    middle: Dev,
    h: usize,
) -> f64 {
    let l_max = geo.levels();
    let upper_dev = |l: usize| if l >= l_max - h { Dev::Cpu } else { middle };
    // The host issues each GPU's lower launches in turn: GPU k starts after those before it —
    // unless it is still busy anyway: with no CPU levels the host does not wait at the end of a
    // step, and issues the next one while the middle GPU runs the upper levels.
    let upper_on_middle: f64 = if h == 0 {
        (cut..l_max).map(|l| c.level(middle, l, geo.level_len(l)).max(c.issue(middle))).sum()
    } else {
        0.0
    };
    let mut issued = 0.0;
    let mut lower = 0.0f64;
    for (&d, &n) in gpus.iter().zip(counts) {
        if n > 0 {
            let own = cut as f64 * c.issue(d);
            let hidden = if d == middle { upper_on_middle } else { 0.0 };
            lower = lower.max((issued - hidden).max(0.0) + lower_time(c, d, cut, n).max(own));
            issued += own;
        }
    }
    let mut t = lower;
    let mut at: Option<Dev> = None;
    if cut < l_max {
        let first = upper_dev(cut);
        // The subtrees' roots go to the first upper device, one copy per device that holds some.
        t += gpus.iter().zip(counts).filter(|p| *p.1 > 0).map(|(&d, &n)| c.transfer(d, first, n)).sum::<f64>();
        at = Some(first);
    }
    for l in cut..l_max {
        let d = upper_dev(l);
        if let Some(a) = at.filter(|&a| a != d) {
            t += c.transfer(a, d, geo.level_len(l - 1));
        }
        if d == Dev::Cpu && (l == cut || upper_dev(l - 1) != Dev::Cpu) {
            t += c.wake();
        }
        at = Some(d);
        t += c.level(d, l, geo.level_len(l)).max(c.issue(d));
    }
    t
}

/// P-1 for one cut and `h` CPU top levels: deals the `2^(L−cut)` subtrees over the GPUs of
/// `slots` by measured throughput within their capacity; the upper levels run on the fastest GPU
/// that can hold them besides its subtrees. `None` when the GPUs cannot hold the network.
pub fn plan_for(geo: &Geometry, slots: &[Slot], c: &impl Costs, cut: usize, h: usize) -> Option<Choice> {
    let l_max = geo.levels();
    let gpus: Vec<Slot> = slots.iter().copied().filter(|s| s.dev != Dev::Cpu).collect();
    if gpus.is_empty() || cut == 0 || cut > l_max || h > l_max - cut {
        return None;
    }
    let bytes = column_bytes(geo);
    let devs: Vec<Dev> = gpus.iter().map(|s| s.dev).collect();
    let total = geo.level_len(cut - 1);
    let subtree_bytes = bytes * ((1u64 << cut) - 1);
    let rate: Vec<f64> = devs.iter().map(|&d| total as f64 / lower_time(c, d, cut, total)).collect();
    let mut by_speed: Vec<usize> = (0..devs.len()).collect();
    by_speed.sort_by(|&a, &b| rate[b].total_cmp(&rate[a]).then(a.cmp(&b)));
    let upper_bytes = (geo.offset(l_max - h) - geo.offset(cut.min(l_max))) as u64 * bytes;
    let &middle = by_speed.iter().find(|&&i| gpus[i].capacity >= upper_bytes)?;
    let cap: Vec<usize> = gpus
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let room = if i == middle { s.capacity - upper_bytes } else { s.capacity };
            (room / subtree_bytes).min(total as u64) as usize
        })
        .collect();
    let counts = deal(total, &rate, &cap)?;
    let predicted = predict(geo, c, cut, &devs, &counts, devs[middle], h);
    Some(Choice { plan: Plan::dealt(geo, cut, &devs, &counts, devs[middle], h), predicted })
}

/// P-1 and P-3: tries every cut (with at least `2^⌈log2 #GPUs⌉` subtrees) and every number of
/// CPU top levels ([`plan_for`]) and keeps the smallest predicted time. Without a GPU, or when
/// nothing else is predicted faster, the whole network runs on one device.
pub fn partition(geo: &Geometry, slots: &[Slot], c: &impl Costs) -> Option<Choice> {
    candidates(geo, slots, c, 1).into_iter().next()
}

/// Plans for `cortical profile` to time for a few steps before choosing, fastest predicted
/// first: the best predicted plan for each number of CPU top levels (the model's largest error
/// is the host's cost of those levels, so the trials span it rather than `n` near-copies of one
/// guess), at most `n` of them. The first is [`partition`]'s choice.
pub fn candidates(geo: &Geometry, slots: &[Slot], c: &impl Costs, n: usize) -> Vec<Choice> {
    let l_max = geo.levels();
    let n_gpus = slots.iter().filter(|s| s.dev != Dev::Cpu).count();
    let cpu = slots.iter().any(|s| s.dev == Dev::Cpu);
    let bytes = column_bytes(geo);
    let mut all: Vec<Choice> = Vec::new();
    // The whole network on one device that can hold it.
    for s in slots {
        if s.capacity >= bytes * geo.hypercolumns() as u64 {
            let predicted = predict(geo, c, l_max, &[s.dev], &[1], s.dev, 0);
            all.push(Choice { plan: Plan::single(geo, s.dev), predicted });
        }
    }
    if n_gpus > 0 {
        for cut in 1..=l_max {
            if geo.level_len(cut - 1) < n_gpus.next_power_of_two() {
                continue;
            }
            for h in 0..=(if cpu { l_max - cut } else { 0 }) {
                if let Some(ch) = plan_for(geo, slots, c, cut, h) {
                    all.push(ch);
                }
            }
        }
    }
    // Stable: equal predictions keep the order tried.
    all.sort_by(|a, b| a.predicted.total_cmp(&b.predicted));
    let mut out: Vec<Choice> = Vec::new();
    for ch in all {
        if out.len() == n {
            break;
        }
        if !out.iter().any(|o| o.plan.cpu_levels() == ch.plan.cpu_levels()) {
            out.push(ch);
        }
    }
    out
}
