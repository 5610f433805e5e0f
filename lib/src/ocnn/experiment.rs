//! `ocnn experiment`: the FCPS sets with known classes, over seeds, scored by the adjusted Rand
//! index against those classes.

use anyhow::{bail, Result};
use std::path::PathBuf;

use super::{cluster_on, points, Config, Select};
use crate::device::{Device, DeviceChoice};
use crate::io::atomic::write_set;

/// A data set with known classes.
pub struct Set {
    /// File name in `data/fcps/`.
    pub file: &'static str,
    /// Leading rows that are not points (Lsun's header debris).
    pub skip: usize,
}

/// Where the class files of [`SETS`] are in the source tree (`--labels`' default, from the
/// repository's root, is `lib/data/fcps`).
pub const LABELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/fcps");

impl Set {
    /// The set's name (`Lsun`).
    pub fn name(&self) -> &'static str {
        self.file.trim_end_matches(".data")
    }

    /// The class of each of the set's `points` points, from its class file `<name>.cls` in
    /// `dir` ([`classes`](super::classes)).
    pub fn truth(&self, dir: &std::path::Path, points: usize) -> crate::Result<Vec<u32>> {
        super::classes::read(&dir.join(format!("{}.cls", self.name())), points)
    }
}

/// The FCPS sets of the experiment. Their classes are FCPS's `labels0` (Ultsch 2005), in the
/// class files `lib/data/fcps/<name>.cls`, point for point in the order of pyclustering's
/// `.data` files.
pub const SETS: [Set; 8] = [
    Set { file: "Lsun.data", skip: 3 },
    Set { file: "Target.data", skip: 0 },
    Set { file: "TwoDiamonds.data", skip: 0 },
    Set { file: "Hepta.data", skip: 0 },
    Set { file: "Tetra.data", skip: 0 },
    Set { file: "Atom.data", skip: 0 },
    Set { file: "Chainlink.data", skip: 0 },
    Set { file: "WingNut.data", skip: 0 },
];

/// The adjusted Rand index of two labelings (Hubert & Arabie 1985).
///
/// ```
/// use neurobits::ocnn::experiment::ari;
/// assert_eq!(ari(&[0, 0, 1, 1], &[5, 5, 2, 2]), 1.0);
/// assert!(ari(&[0, 0, 1, 1], &[0, 1, 0, 1]) < 0.0);
/// ```
pub fn ari(a: &[u32], b: &[u32]) -> f64 {
    use std::collections::HashMap;
    let c2 = |x: u64| (x * x.saturating_sub(1) / 2) as f64;
    let mut cells: HashMap<(u32, u32), u64> = HashMap::new();
    let (mut ra, mut rb): (HashMap<u32, u64>, HashMap<u32, u64>) = (HashMap::new(), HashMap::new());
    for (&x, &y) in a.iter().zip(b) {
        *cells.entry((x, y)).or_default() += 1;
        *ra.entry(x).or_default() += 1;
        *rb.entry(y).or_default() += 1;
    }
    let index: f64 = cells.values().map(|&v| c2(v)).sum();
    let (sa, sb): (f64, f64) = (ra.values().map(|&v| c2(v)).sum(), rb.values().map(|&v| c2(v)).sum());
    let expected = sa * sb / c2(a.len() as u64);
    let max = (sa + sb) / 2.0;
    if max == expected {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

/// `ocnn experiment`: every set of [`SETS`] over seeds.
#[derive(Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ExperimentConfig {
    /// Folder of the FCPS `.data` files (`make setup` fetches them).
    #[cfg_attr(feature = "cli", arg(short = 'i', long = "input", alias = "data", default_value = "data/fcps"))]
    pub data: PathBuf,
    /// Folder of the class files, `<set>.cls` (FCPS's format: `key class` per point).
    #[cfg_attr(feature = "cli", arg(long, default_value = "lib/data/fcps"))]
    pub labels: PathBuf,
    /// Seeds of the initial state, comma-separated.
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_value = "1,2,3"))]
    pub seeds: Vec<u64>,
    /// Observed iterations T.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000)))]
    pub iters: u32,
    /// The automatic rule: the consensus of the most stable clusters over three coupling
    /// scales, the most stable clusters at the scale a alone, or the first rule's plateau.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Select::Consensus))]
    pub select: Select,
    /// Where to compute.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = DeviceChoice::Cpu))]
    pub device: DeviceChoice,
    /// A folder for results.csv and results.json.
    #[cfg_attr(feature = "cli", arg(short = 'o', long))]
    pub out: PathBuf,
    /// Instead: read the clustering at every early-stop check (CPU) and write, per window, where
    /// the early stop would end each run and whether it gives the full run's clustering
    /// (`early-stop.json` in `--out`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub early_stop_scan: bool,
}

/// One row of the experiment.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// Data set.
    pub set: String,
    /// Points.
    pub n: usize,
    /// Dimension.
    pub dim: usize,
    /// Known classes.
    pub classes: u32,
    /// Seed.
    pub seed: u64,
    /// Scale constant.
    pub a: f64,
    /// Threshold chosen, percent.
    pub threshold_percent: u32,
    /// Clusters found (of more than one point).
    pub k_non_singleton: u32,
    /// Clusters found, singletons included.
    pub k: u32,
    /// Adjusted Rand index against the classes.
    pub ari: f64,
    /// Wall seconds of the whole run.
    pub seconds: f64,
}

/// Runs the experiment: a table on stdout, CSV and JSON in `--out`.
pub fn run(e: &ExperimentConfig) -> Result<()> {
    if e.seeds.is_empty() {
        bail!("--seeds: give at least one seed");
    }
    // Every input and the output folder before the table starts: an error is then the one line
    // on standard error, not a line after a half-printed table.
    crate::io::atomic::check_folder(&e.out)?;
    if e.early_stop_scan {
        std::fs::create_dir_all(&e.out)?;
        return super::early::scan(e);
    }
    let sets = SETS
        .iter()
        .map(|set| {
            let p = points::load(&e.data.join(set.file))?.skip(set.skip);
            let truth = set.truth(&e.labels, p.n)?;
            Ok((set, p, truth))
        })
        .collect::<Result<Vec<_>>>()?;
    let device = Device::open(e.device)?;
    let mut rows = Vec::new();
    crate::outln!(
        "{:<12} {:>5} {:>3} {:>7} {:>4} {:>10} {:>5} {:>4} {:>4} {:>7} {:>8}",
        "set",
        "N",
        "dim",
        "classes",
        "seed",
        "a",
        "θ*%",
        "k>1",
        "k",
        "ARI",
        "seconds"
    )?;
    for (set, p, truth) in sets {
        let classes = truth.iter().collect::<std::collections::BTreeSet<_>>().len() as u32;
        let a = super::scale::scale(&p)?;
        for &seed in &e.seeds {
            let c = Config { seed, iters: e.iters, scale: Some(a), select: e.select, ..Config::default() };
            let t = std::time::Instant::now();
            let r = device.run(
                |g| cluster_on::<f32>(&p, Some(a), &c, Some(g)),
                |cpu| cpu.install(|| cluster_on::<f32>(&p, Some(a), &c, None)),
            )?;
            let row = Row {
                set: set.name().into(),
                n: p.n,
                dim: p.dim,
                classes,
                seed,
                a,
                threshold_percent: r.threshold_percent,
                k_non_singleton: r.k_non_singleton,
                k: r.k,
                ari: ari(&truth, &r.labels),
                seconds: t.elapsed().as_secs_f64(),
            };
            crate::outln!(
                "{:<12} {:>5} {:>3} {:>7} {:>4} {:>10.6} {:>5} {:>4} {:>4} {:>7.4} {:>8.3}",
                row.set,
                row.n,
                row.dim,
                row.classes,
                row.seed,
                row.a,
                row.threshold_percent,
                row.k_non_singleton,
                row.k,
                row.ari,
                row.seconds
            )?;
            rows.push(row);
        }
    }
    let mut csv = String::from("set,n,dim,classes,seed,a,threshold_percent,k_non_singleton,k,ari,seconds\n");
    for r in &rows {
        csv += &format!(
            "{},{},{},{},{},{:.17},{},{},{},{:.6},{:.4}\n",
            r.set, r.n, r.dim, r.classes, r.seed, r.a, r.threshold_percent, r.k_non_singleton, r.k, r.ari, r.seconds
        );
    }
    write_set(&e.out, &["results.csv", "results.json"], |dir| {
        crate::io::atomic::write_string(&dir.join("results.csv"), &csv)?;
        crate::io::json::write(&dir.join("results.json"), &rows)
    })
}
