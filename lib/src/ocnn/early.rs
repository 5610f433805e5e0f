//! `ocnn experiment --early-stop-scan`: the evidence for the early stop's window. Each FCPS run
//! reads its clustering at every check point (every 64 observed iterations, the core's
//! `EarlyStop`) without stopping, then replays the core's rule over that sequence for each window:
//! where it would have stopped, and whether the clustering there is the full run's (labels and
//! threshold). A run the rule never stops is the full run.

use anyhow::Result;
use neurobits_core::ocnn::{EarlyStop, SyncMode};

use super::experiment::{ExperimentConfig, SETS};
use super::{clusters, cpu, points, scale, Config};

/// Windows scanned: 1 ..= this many checks.
pub const WINDOWS: u32 = 15;

/// One run of the scan.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScanRow {
    /// Data set.
    pub set: String,
    /// Seed.
    pub seed: u64,
    /// Observed iterations of the full run.
    pub iters: u32,
    /// The first check from which the clustering stays the full run's to the end (`None`: not
    /// before the end).
    pub settled_at: Option<u32>,
    /// Per window `1..=WINDOWS`: the iteration the rule stops at (`None`: it runs to the end).
    pub stop_at: Vec<Option<u32>>,
    /// Per window: whether the clustering at the stop is the full run's.
    pub equal: Vec<bool>,
}

/// The scan over `e`'s seeds and the FCPS sets, CPU, the defaults otherwise; JSON to
/// `e.out/early-stop.json`, one line per run on stdout, and the smallest window equal everywhere.
pub fn scan(e: &ExperimentConfig) -> Result<()> {
    let mut rows = Vec::new();
    for set in &SETS {
        let p = points::load(&e.data.join(set.file))?.skip(set.skip);
        let a = scale::scale(&p)?;
        let c = Config { iters: e.iters, select: e.select, ..Config::default() };
        let (n, grid, rule) = (p.n, clusters::grid(true), c.rule(p.n));
        let read = |h: &[u32], t: u32| clusters::cluster(n, h, t, &grid, rule).ok().map(|c| c.labels);
        for &seed in &e.seeds {
            let mut reads = Vec::new();
            let mut record = |o: u32, h: &[u32]| {
                reads.push((o, read(h, o)));
                false
            };
            let (tr, _) = cpu::run_points::<f32>(&p, a, (seed, 0, e.iters, SyncMode::Phase), Some(&mut record))?;
            let full = read(&tr.hits, tr.observed);
            let settled_at = reads
                .iter()
                .rposition(|(_, r)| *r != full)
                .map_or(reads.first().map(|r| r.0), |k| reads.get(k + 1).map(|r| r.0));
            let (mut stop_at, mut equal) = (Vec::new(), Vec::new());
            for w in 1..=WINDOWS {
                let mut rule = EarlyStop::new(w);
                let stop = (0..reads.len()).find(|&k| rule.observe(k > 0 && reads[k].1 == reads[k - 1].1));
                stop_at.push(stop.map(|k| reads[k].0));
                equal.push(stop.is_none_or(|k| reads[k].1 == full));
            }
            let row = ScanRow { set: set.name().into(), seed, iters: e.iters, settled_at, stop_at, equal };
            let first_equal = (1..=WINDOWS).find(|&w| row.equal[w as usize - 1..].iter().all(|&x| x));
            crate::outln!(
                "{:<12} seed {seed}: clustering final from iteration {}; every window from {} gives the full run's",
                row.set,
                row.settled_at.map_or("-".into(), |s| s.to_string()),
                first_equal.map_or("-".into(), |w| w.to_string())
            )?;
            rows.push(row);
        }
    }
    let safe = (1..=WINDOWS).find(|&w| rows.iter().all(|r| r.equal[w as usize - 1..].iter().all(|&x| x)));
    crate::outln!(
        "smallest window from which every larger one gives the full run's clustering on all {} runs: {}",
        rows.len(),
        safe.map_or("none up to 15".into(), |w| w.to_string())
    )?;
    crate::io::json::write(&e.out.join("early-stop.json"), &rows)
}
