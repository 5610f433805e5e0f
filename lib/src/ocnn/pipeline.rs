//! One clustering run, from points to labels: the scale, the coupling, the dynamics and
//! synchronization (CPU or GPU), the clusters and the digests, each stage timed.

use anyhow::Result;
use neurobits_core::ocnn::{EarlyStop, SyncMode};
use neurobits_gpu_host::ocnn::GpuReal;
use neurobits_gpu_host::Gpu;
use std::time::Instant;

use super::{
    clusters, coupling, cpu, digest, points::Points, scale, uncoupled, weights, Candidate, Config, Links, Report,
    Select, SyncArg, Variant,
};

/// The clustering a check reads: the labels, or `None` where no clustering forms yet.
type Read = Option<Vec<u32>>;

/// The early stop's watcher: the core's rule and the clustering read at the previous check.
struct Watch<F> {
    stop: EarlyStop,
    last: Option<Read>,
    read: F,
}

impl<F: FnMut(&[u32], u32) -> Read> Watch<F> {
    fn new(window: u32, read: F) -> Self {
        Watch { stop: EarlyStop::new(window), last: None, read }
    }

    /// One check on the hits of `observed` iterations: whether to stop.
    fn check(&mut self, observed: u32, hits: &[u32]) -> bool {
        let now = (self.read)(hits, observed);
        let same = self.last.as_ref() == Some(&now);
        self.last = Some(now);
        self.stop.observe(same)
    }
}

/// Clusters `p` with working type `T`, the dynamics and synchronization on `gpu` when given,
/// else on the CPU (the current rayon pool); every other stage is the same host code. With
/// `c.early_stop`, CPU and GPU read the clustering at the same check points and stop at the same
/// iteration (the report's `observed_iters`).
///
/// The consensus selection (the default) runs the whole dynamics once per scale factor of
/// `c.scales` (at `a·factor`; above 3-D, unless `a` is given, at the scale whose median coupling
/// perplexity is `scale::PERPLEXITY·factor`) and restart (`c.restarts` initial states), selects
/// each run's most stable clusters at each smallest cluster of [`Config::rules`], keeps per
/// smallest cluster the run whose clustering agrees best with the others'
/// (`neurobits_core::ocnn::most_agreeing`) and of those the smallest cluster whose runs agree
/// best (`neurobits_core::ocnn::pick_min_cluster`); the same code for CPU and GPU, so both keep
/// the same run. The report is the kept run's, its times the sums over the runs.
pub fn cluster_on<T: GpuReal + Send + Sync>(
    p: &Points,
    a: Option<f64>,
    c: &Config,
    gpu: Option<&Gpu>,
) -> Result<Report> {
    c.validate()?;
    if let Some(a) = a.filter(|a| !(a.is_finite() && *a > 0.0)) {
        anyhow::bail!("--scale {a}: must be a positive number");
    }
    // Points too far from every other for the scale (`C_i = 0`) are left out of the dynamics as
    // singletons and the rest clustered as if they were not there (the scale found again
    // without them, unless given); the error stands where they are half the points or more, or
    // the coupling is sparse (`--cutoff` sets the reach).
    let mut sub: Option<(Points, Vec<u32>)> = None;
    loop {
        let q = sub.as_ref().map_or(p, |(s, _)| s);
        let t0 = Instant::now();
        let scales = scales_of(q, a, c)?;
        let scale_seconds = t0.elapsed().as_secs_f64();
        let scale_of = |f: f64| scales.iter().find(|&&(g, _)| g == f).map_or(scales[0].1 * f, |&(_, at)| at);
        let e = match consensus::<T>(q, &scale_of, c, gpu) {
            Ok(mut report) => {
                report.seconds.insert("scale".into(), scale_seconds);
                return Ok(match sub {
                    Some((_, keep)) => uncoupled::expand(report, &keep, p.n),
                    None => report,
                });
            }
            Err(e) => e,
        };
        let Some(u) = e.downcast_ref::<weights::Uncoupled>().filter(|_| c.cutoff.is_none()) else {
            return Err(e);
        };
        let mut left: Vec<u32> = match &sub {
            Some((_, keep)) => (0..p.n as u32).filter(|i| keep.binary_search(i).is_err()).collect(),
            None => Vec::new(),
        };
        left.extend(u.points.iter().map(|&i| sub.as_ref().map_or(i, |(_, keep)| keep[i as usize])));
        left.sort_unstable();
        if 2 * left.len() >= p.n {
            // Named in the caller's numbering, all of them.
            return Err(weights::Uncoupled { points: left }.into());
        }
        sub = Some(uncoupled::without(p, &left));
    }
}

/// Each scale factor of `c`'s runs with its scale, the first always that of factor 1 (the base,
/// computed even where 1 is not among `c.scales`): `a·factor` with `a` given or from [`scale::scale`]; above 3-D, unless `a` is given,
/// the factor multiplies the coupling's perplexity instead (where `a` is defined by it: the same
/// growth of the coupled neighbourhood, where a multiple of `a` would couple nearly every pair).
fn scales_of(p: &Points, a: Option<f64>, c: &Config) -> Result<Vec<(f64, f64)>> {
    let base = match a {
        Some(a) => a,
        None => scale::scale(p)?,
    };
    let by_perplexity = a.is_none() && p.dim > scale::DELAUNAY_MAX_DIM;
    let mut scales: Vec<(f64, f64)> = vec![(1.0, base)];
    for (f, _) in c.candidates() {
        if !scales.iter().any(|&(g, _)| g == f) {
            let at = if by_perplexity { scale::perplexity_scale(p, scale::PERPLEXITY * f)? } else { base * f };
            scales.push((f, at));
        }
    }
    Ok(scales)
}

/// The consensus at one smallest cluster: the run it keeps (`None`: no run found two clusters),
/// every run's score, the runs' mean agreement and which runs could win.
struct PerSize {
    best: Option<usize>,
    score: Vec<f64>,
    agree: f64,
    eligible: Vec<bool>,
}

/// [`cluster_on`] after the scales: the runs at `scale_of(factor)` and the consensus's choice.
fn consensus<T: GpuReal + Send + Sync>(
    p: &Points,
    scale_of: &dyn Fn(f64) -> f64,
    c: &Config,
    gpu: Option<&Gpu>,
) -> Result<Report> {
    let candidates = c.candidates();
    // The pairs the consensus may link: computed once from the points, the same for every run
    // (dense coupling only, so after the check that the dense network fits: the neighbours are
    // a brute-force pass over all pairs).
    let t0 = Instant::now();
    let links = match (c.select, c.threshold, c.cutoff, c.links) {
        (Select::Consensus, None, None, Links::Mutual) => {
            dense_budget::<T>(p.n)?;
            Some(super::links::mutual(p)?)
        }
        _ => None,
    };
    let links_seconds = t0.elapsed().as_secs_f64();
    let rules = c.rules(p.n, candidates.len());
    let mut runs = Vec::with_capacity(candidates.len());
    for &(f, seed) in &candidates {
        let cr = Config { seed, ..c.clone() };
        let (report, each) = run_once::<T>(p, scale_of(f), &cr, links.as_deref(), gpu, &rules)?;
        runs.push((report, each));
        crate::cancel::check()?;
    }
    let t0 = Instant::now();
    // Per smallest cluster: the consensus's pick among the runs and the runs' mean agreement.
    let singles: Vec<u32> = (0..p.n as u32).collect();
    let scale: Vec<u32> =
        candidates.iter().map(|&(f, _)| c.scales.iter().position(|&s| s == f).unwrap_or(0) as u32).collect();
    let per_rule: Vec<PerSize> = (0..rules.len())
        .map(|m| {
            let each = || runs.iter().map(|(_, each)| &each[m]);
            if candidates.len() == 1 {
                return PerSize { best: Some(0), score: vec![1.0], agree: 1.0, eligible: vec![true] };
            }
            // A run in which no cluster forms counts as all singletons in the others' means and
            // cannot win.
            let parts: Vec<&[u32]> = each().map(|r| r.as_ref().map_or(&singles[..], |r| &r.labels[..])).collect();
            let eligible: Vec<bool> = each().map(|r| r.as_ref().is_ok_and(|r| r.k_non_singleton >= 2)).collect();
            let (best, score) = neurobits_core::ocnn::most_agreeing(&parts, &scale, &eligible);
            let agree = if rules.len() > 1 {
                let ok: Vec<Option<&[u32]>> = each().map(|r| r.as_ref().ok().map(|r| &r.labels[..])).collect();
                neurobits_core::ocnn::mean_agreement(&ok)
            } else {
                1.0
            };
            PerSize { best, score, agree, eligible }
        })
        .collect();
    let usable: Vec<Option<f64>> = per_rule.iter().map(|r| r.best.map(|_| r.agree)).collect();
    // No size gave two clusters: the first size at which some run clustered at all.
    let m = neurobits_core::ocnn::pick_min_cluster(&usable)
        .or_else(|| (0..rules.len()).find(|&m| runs.iter().any(|(_, each)| each[m].is_ok())))
        .unwrap_or(0);
    let PerSize { best, score: mean, eligible, .. } = &per_rule[m];
    let best = *best;
    // No scale gave two clusters: keep the first run that clustered at all (its error otherwise,
    // as a lone run's).
    let pick = best.or_else(|| runs.iter().position(|(_, each)| each[m].is_ok())).unwrap_or(0);
    let consensus_seconds = t0.elapsed().as_secs_f64();
    let mut seconds = std::collections::BTreeMap::new();
    for (r, _) in &runs {
        for (k, v) in &r.seconds {
            *seconds.entry(k.clone()).or_insert(0.0) += v;
        }
    }
    let agreement = if candidates.len() > 1 {
        let each = candidates.iter().zip(mean).zip(eligible);
        each.map(|((&(factor, seed), &m), &e)| Candidate { factor, seed, agreement: e.then_some(m) }).collect()
    } else {
        Vec::new()
    };
    let (report, mut each) = runs.swap_remove(pick);
    let mut report = report.with(each.swap_remove(m)?);
    report.min_cluster = match rules[m] {
        clusters::Rule::Stable { min_cluster, .. } => Some(min_cluster),
        _ => None,
    };
    if links.is_some() {
        seconds.insert("links".into(), links_seconds);
    }
    if candidates.len() > 1 {
        seconds.insert("consensus".into(), consensus_seconds);
    }
    report.seconds = seconds;
    (report.scale_factor, report.run_seed) = candidates[pick];
    report.agreement = agreement;
    Ok(report)
}

/// Refuses a dense network of `n` points in `T` that cannot fit, before any of it exists: the
/// peak is the lane rows (n² weights, a column index each), then per pair its hits, bucket and
/// edge.
fn dense_budget<T>(n: usize) -> Result<()> {
    let (nn, t) = (n as u128, std::mem::size_of::<T>() as u128);
    crate::budget::check(
        format_args!("the dense OCNN of {nn} points (coupling, lane rows, pair hits; --cutoff makes it sparse)"),
        nn * nn * (2 * t + 4) + nn * nn.saturating_sub(1) / 2 * 13,
    )?;
    Ok(())
}

/// One run of the dynamics at scale `a`, clustered by `c.rule` over the pairs `links` when given
/// (dense coupling only), else over every coupled pair (the report's `seconds` lacks the scale's
/// and the links' stages, measured once by the caller).
fn run_once<T: GpuReal + Send + Sync>(
    p: &Points,
    a: f64,
    c: &Config,
    links: Option<&[(u32, u32)]>,
    gpu: Option<&Gpu>,
    rules: &[clusters::Rule],
) -> Result<(Report, Vec<Result<clusters::Clustering>>)> {
    let mut seconds = std::collections::BTreeMap::new();
    let mode = match c.sync {
        SyncArg::Phase => SyncMode::Phase,
        SyncArg::Fragmentary if c.eps.is_finite() && c.eps > 0.0 => SyncMode::Fragmentary(T::from_f64(c.eps)),
        SyncArg::Fragmentary => anyhow::bail!("--eps {}: must be a positive number", c.eps),
    };
    // The early stop watches the clustering under the first rule.
    let (grid, fixed, rule) = (clusters::grid(c.sync == SyncArg::Phase), c.threshold, rules[0]);
    let n = p.n;
    let run = (c.seed, c.transient, c.iters, mode);
    let (tr, cl, hits_sha256, coupled_pairs) = if let Some(r) = c.cutoff {
        let t0 = Instant::now();
        let w = weights::sparse::<T>(p, a, r)?;
        // Per coupled pair: its hit count (4 bytes), its bucket (1) and, linked, its edge (8).
        let pairs = w.hit_ptr[p.n] as u128;
        crate::budget::check(
            format_args!("the OCNN's {pairs} coupled pairs of {} points (--cutoff {r})", p.n),
            pairs * 13,
        )?;
        seconds.insert("weights", t0.elapsed().as_secs_f64());
        let mut watch = c.early_stop.map(|win| {
            Watch::new(win, |h: &[u32], t| {
                clusters::cluster_pairs(n, h, w.pairs(), t, &grid, rule).ok().map(|c| c.labels)
            })
        });
        let mut check = watch.as_mut().map(|w| move |o: u32, h: &[u32]| w.check(o, h));
        let check = check.as_mut().map(|c| c as &mut dyn FnMut(u32, &[u32]) -> bool);
        let t0 = Instant::now();
        let tr = match gpu {
            None => cpu::run_until(&w, c.seed, c.transient, c.iters, mode, check),
            Some(g) => {
                let u64s = |v: &[usize]| v.iter().map(|&x| x as u64).collect::<Vec<u64>>();
                let (ptr, upper, hit_ptr) = (u64s(&w.ptr), u64s(&w.upper), u64s(&w.hit_ptr));
                let rows = neurobits_gpu_host::ocnn::SparseRows {
                    ptr: &ptr,
                    cols: &w.cols,
                    vals: &w.vals,
                    norm: &w.norm,
                    upper: &upper,
                    hit_ptr: &hit_ptr,
                };
                let out = g.ocnn_sparse(&rows)?.run_until(c.seed, c.transient, c.iters, mode, check)?;
                seconds.insert("gpu kernels", out.kernel_ms / 1e3);
                cpu::Trajectory { state: out.state, hits: out.hits, observed: out.observed }
            }
        };
        crate::cancel::check()?;
        seconds.insert("dynamics and sync", t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        // The hits' digest (one thread hashing 12 bytes per coupled pair) alongside the clusters.
        let (cl, digest) = rayon::join(
            || clusters::cluster_pairs_each(n, &tr.hits, w.pairs(), tr.observed, &grid, rules),
            || digest::sparse_hits(w.pairs(), &tr.hits),
        );
        seconds.insert("clusters", t0.elapsed().as_secs_f64());
        (tr, cl, digest, w.hit_ptr[n])
    } else {
        dense_budget::<T>(n)?;
        // The clusters of the upper triangle's hits, over the link pairs when given.
        let cluster_upper = |h: &[u32], t: u32, rules: &[clusters::Rule]| match links {
            Some(l) => clusters::cluster_linked_each(n, h, l, t, &grid, rules),
            None => clusters::cluster_each(n, h, t, &grid, rules),
        };
        let mut watch = c.early_stop.map(|win| {
            Watch::new(win, |h: &[u32], t| cluster_upper(h, t, &[rule]).swap_remove(0).ok().map(|c| c.labels))
        });
        let mut check_upper = watch.as_mut().map(|w| move |o: u32, h: &[u32]| w.check(o, h));
        let t0 = Instant::now();
        // On the GPU the clusters come from the hit graph's maximum spanning forest, built there
        // (the same k(p) curve and labels as all pairs); the hits still come back for the digest.
        // The CPU updates from the lane rows: the dense rows' bits from their nonzero weights,
        // built from the points (no n × n matrix); so does the GPU's default decomposition.
        let (tr, forest) = match gpu {
            None => {
                let check = check_upper.as_mut().map(|c| c as &mut dyn FnMut(u32, &[u32]) -> bool);
                let (tr, built) = cpu::run_points(p, a, run, check)?;
                seconds.insert("weights", built);
                (tr, None)
            }
            Some(g) => {
                // The GPU's check gets the full n × n matrix, the CPU's the upper triangle.
                let mut check_full =
                    |o: u32, full: &[u32]| check_upper.as_mut().is_some_and(|ch| ch(o, &cpu::upper_triangle(n, full)));
                let dev = if c.variant == Variant::LaneRows {
                    // Built on the device from the points: the host's lane rows, bit for bit.
                    let dev = coupling::lane_rows_gpu::<T>(g, p, a)?;
                    g.synchronize()?;
                    seconds.insert("weights", t0.elapsed().as_secs_f64());
                    dev
                } else {
                    let w = weights::dense::<T>(p, a)?;
                    seconds.insert("weights", t0.elapsed().as_secs_f64());
                    let t = Instant::now();
                    let dev = g.ocnn(n, &w.j, &w.norm)?;
                    g.synchronize()?;
                    seconds.insert("upload", t.elapsed().as_secs_f64());
                    dev
                };
                let check = c.early_stop.is_some().then_some(&mut check_full as &mut dyn FnMut(u32, &[u32]) -> bool);
                let lowest = fixed.map_or(grid[0], |f| f.min(grid[0]));
                let d = c.variant.into();
                let t = Instant::now();
                let out = match dev.run_forest_until(c.seed, c.transient, (c.iters, lowest), mode, d, check)? {
                    Some(out) => {
                        seconds.insert("gpu kernels", out.kernel_ms / 1e3);
                        let mut full = out.hits(g)?;
                        if let SyncMode::Fragmentary(_) = mode {
                            (0..n).for_each(|i| full[i * n + i] = out.observed);
                        }
                        let hits = cpu::upper_triangle(n, &full);
                        (cpu::Trajectory { state: out.state, hits, observed: out.observed }, Some(out.pairs))
                    }
                    None => {
                        let check =
                            c.early_stop.is_some().then_some(&mut check_full as &mut dyn FnMut(u32, &[u32]) -> bool);
                        let out = dev.run_until(c.seed, c.transient, c.iters, mode, d, check)?;
                        seconds.insert("gpu kernels", out.kernel_ms / 1e3);
                        let hits = cpu::upper_triangle(n, &out.hits);
                        (cpu::Trajectory { state: out.state, hits, observed: out.observed }, None)
                    }
                };
                seconds.insert("gpu run", t.elapsed().as_secs_f64());
                out
            }
        };
        crate::cancel::check()?;
        // Stages add up: the rows' building and their upload are their own.
        let before: f64 = ["weights", "upload"].iter().filter_map(|k| seconds.get(k)).sum();
        seconds.insert("dynamics and sync", t0.elapsed().as_secs_f64() - before);
        let t0 = Instant::now();
        // The GPU's forest spans every pair: with link pairs, the downloaded hits are clustered.
        let cl = match forest.filter(|_| links.is_none()) {
            Some(f) => {
                let hits: Vec<u32> = f.iter().map(|&(h, ..)| h).collect();
                clusters::cluster_pairs_each(n, &hits, f.iter().map(|&(_, i, j)| (i, j)), tr.observed, &grid, rules)
            }
            None => cluster_upper(&tr.hits, tr.observed, rules),
        };
        seconds.insert("clusters", t0.elapsed().as_secs_f64());
        let digest = digest::hits(n, &tr.hits, tr.observed);
        (tr, cl, digest, n * (n - 1) / 2)
    };
    // The clustering's fields are filled in by the caller, from the rule it keeps.
    let report = Report {
        n,
        dim: p.dim,
        a,
        threshold_percent: 0,
        k: 0,
        k_non_singleton: 0,
        curve: Vec::new(),
        hits_sha256,
        coupled_pairs,
        state_sha256: digest::state(&tr.state),
        seconds: seconds.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        scale_factor: 1.0,
        run_seed: c.seed,
        agreement: Vec::new(),
        observed_iters: tr.observed,
        labels: Vec::new(),
        min_cluster: None,
        uncoupled: 0,
    };
    Ok((report, cl))
}
