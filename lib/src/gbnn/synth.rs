//! The RTL's synthesis results (`make fpga-synth` → `results/fpga/synth.json`), embedded at build
//! time so that the binary shows the figures of the RTL it was built with, wherever it runs: a
//! new synthesis run takes effect at the next build. `neurobits fpga` and `hwcost` print them
//! beside the formula counts and take their clock from the place-and-route timing where it exists.

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

const SYNTH_JSON: &str = include_str!("../../../results/fpga/synth.json");

/// The synthesis table: every size, family and place-and-route run.
#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct SynthResults {
    /// The command that produced the file.
    pub command: String,
    /// The machine it ran on.
    pub machine: String,
    /// How loaded that machine was.
    #[serde(default)]
    pub load: Option<String>,
    /// Per size.
    pub sizes: Vec<SizeResult>,
}

/// One size's runs of one build.
#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct SizeResult {
    /// Clusters C.
    pub clusters: usize,
    /// Neurons per cluster L.
    pub neurons: usize,
    /// The build: `full` (every rule; also when absent), `som` (`SUM_OF_SUM = 0`, the
    /// sum-of-max-only circuit) or `uart` (the board top `gbnn_uart` on the HX8K breakout board).
    #[serde(default)]
    pub variant: Option<String>,
    /// Which RTL revision the runs are of, where it is not the current one.
    #[serde(default)]
    pub rtl: Option<String>,
    /// How Yosys ran: `flat` (the design flattened first, as a vendor flow would; also when
    /// absent) or `hierarchical` (each module mapped once without flattening and the totals
    /// multiplied by the instance counts: no optimisation across module boundaries).
    #[serde(default)]
    pub mode: Option<String>,
    /// One Yosys run per family (ice40, ecp5, xilinx).
    pub synth: Vec<SynthRun>,
    /// nextpnr-ice40 runs (iCE40 HX8K, UP5K), where the design fits.
    pub pnr: Vec<PnrRun>,
}

/// One Yosys run: cell counts by kind, or why there are none.
#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct SynthRun {
    /// ice40, ecp5 or xilinx.
    pub family: String,
    /// `post-synthesis estimate` (older runs: `post-synthesis` on iCE40, whose place-and-route
    /// followed); placed-and-routed figures are the [`PnrRun`]s.
    pub kind: String,
    /// The Yosys pass.
    pub tool: String,
    /// Wall time of the run.
    pub seconds: f64,
    /// CPU time of the run (recorded since the UART and sum-of-max-only runs).
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// Peak resident memory of the run in MB (recorded since the hierarchical runs).
    #[serde(default)]
    pub mem_mb: Option<u64>,
    /// LUTs (LUT4 on iCE40/ECP5, LUT1–6 on Xilinx 7).
    pub lut: Option<u64>,
    /// Flip-flops.
    pub ff: Option<u64>,
    /// Carry cells (SB_CARRY, CCU2C, CARRY4).
    pub carry: Option<u64>,
    /// Block RAMs.
    pub bram: Option<u64>,
    /// Why the run has no counts (time limit, tool error).
    pub error: Option<String>,
}

/// One place-and-route run.
#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct PnrRun {
    /// ice40-hx8k or ice40-up5k.
    pub device: String,
    /// Fmax from nextpnr's timing analysis after routing.
    pub fmax_mhz: Option<f64>,
    /// Logic cells used.
    pub logic_cells: Option<u64>,
    /// Logic cells of the device.
    pub logic_cells_total: Option<u64>,
    /// Why there is no result (does not fit, time limit).
    pub error: Option<String>,
}

/// The embedded results.
pub fn results() -> Result<&'static SynthResults> {
    static PARSED: OnceLock<Result<SynthResults, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| serde_json::from_str(SYNTH_JSON).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| anyhow!("the embedded results/fpga/synth.json: {e}"))
}

impl SizeResult {
    /// The build's name in tables and reports.
    pub fn build(&self) -> &'static str {
        match self.variant.as_deref() {
            Some("som") => "sum-of-max only",
            Some("uart") => "UART board top",
            _ => "full",
        }
    }

    /// How Yosys ran: `flat` or `hierarchical`.
    pub fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("flat")
    }

    pub(crate) fn is_full(&self) -> bool {
        matches!(self.variant.as_deref(), None | Some("full"))
    }
}

/// The runs of the full circuit of `clusters × neurons` (the current RTL's before older ones, flat
/// before hierarchical), empty if that size was not synthesised.
pub fn for_size(clusters: usize, neurons: usize) -> Result<Vec<&'static SizeResult>> {
    let mut v: Vec<&SizeResult> =
        results()?.sizes.iter().filter(|s| (s.clusters, s.neurons) == (clusters, neurons) && s.is_full()).collect();
    v.sort_by_key(|s| (s.rtl.is_some(), s.mode() != "flat"));
    Ok(v)
}

/// The clock for latencies: the one given, else the measured Fmax on the iCE40 HX8K, else an
/// assumed 100 MHz; with a label saying which.
pub fn clock(clusters: usize, neurons: usize, given: Option<f64>) -> Result<(f64, String)> {
    if let Some(f) = given {
        return Ok((f, format!("{f} MHz (given)")));
    }
    // The current RTL's place-and-route first (for_size's order), else an older RTL's, labelled.
    let fmax = for_size(clusters, neurons)?.into_iter().find_map(|s| {
        let p = s.pnr.iter().find(|p| p.device == "ice40-hx8k" && p.fmax_mhz.is_some())?;
        Some((p.fmax_mhz?, s.rtl.as_ref().map_or(String::new(), |r| format!(", older RTL {r}"))))
    });
    Ok(match fmax {
        Some((f, rtl)) => (f, format!("{f} MHz (measured Fmax, iCE40 HX8K, nextpnr-ice40{rtl})")),
        None => (100.0, "100 MHz (assumed; no place-and-route result for this size)".into()),
    })
}

pub(crate) fn count(x: Option<u64>) -> String {
    x.map_or("—".into(), |v| v.to_string())
}

/// The measured lines of a report, every build of the size (the full circuit first).
pub fn lines(clusters: usize, neurons: usize) -> Result<Vec<String>> {
    let builds: Vec<&SizeResult> =
        results()?.sizes.iter().filter(|s| (s.clusters, s.neurons) == (clusters, neurons)).collect();
    if builds.is_empty() {
        return Ok(vec![format!("no synthesis result for {clusters}x{neurons} (make fpga-synth covers other sizes)")]);
    }
    let mut out = Vec::new();
    for s in builds {
        // The full circuit's flat runs lead without a prefix; every other build and mode says which.
        let mut pre = if s.is_full() && s.mode() == "flat" {
            String::new()
        } else {
            format!("{} build, {}: ", s.build(), s.mode())
        };
        if let Some(rtl) = &s.rtl {
            pre = format!("[older RTL {rtl}] {pre}");
        }
        lines_of(s, &pre, &mut out);
    }
    Ok(out)
}

fn lines_of(s: &SizeResult, pre: &str, out: &mut Vec<String>) {
    for r in &s.synth {
        out.push(match &r.error {
            Some(e) => format!("{pre}{} {} ({}): none, {e}", r.family, r.tool, r.kind),
            None => format!(
                "{pre}{} {} ({}): LUT {}, FF {}, carry {}, BRAM {}",
                r.family,
                r.tool,
                r.kind,
                count(r.lut),
                count(r.ff),
                count(r.carry),
                count(r.bram)
            ),
        });
    }
    for p in &s.pnr {
        out.push(match (&p.error, p.fmax_mhz) {
            (Some(e), _) => format!("{pre}{} place and route: none, {e}", p.device),
            (None, f) => format!(
                "{pre}{} placed and routed (nextpnr-ice40, measured): {}/{} logic cells, Fmax {} MHz",
                p.device,
                count(p.logic_cells),
                count(p.logic_cells_total),
                f.map_or("—".into(), |f| f.to_string())
            ),
        });
    }
}

/// One line for a report cell (`hwcost`): the full circuit's counts per family from its current
/// RTL's flat run where that has every family, else its hierarchical run, then the
/// place-and-route clocks; each figure says what it is.
pub fn summary(clusters: usize, neurons: usize) -> Result<String> {
    let runs = for_size(clusters, neurons)?;
    let complete = |s: &&&SizeResult| s.synth.len() == 3 && s.synth.iter().all(|x| x.error.is_none());
    let Some(best) = runs.iter().find(complete).or(runs.first()) else {
        return Ok(format!("none for {clusters}x{neurons}"));
    };
    let rtl = best.rtl.as_ref().map_or(String::new(), |r| format!(", older RTL {r}"));
    let mut parts: Vec<String> = best
        .synth
        .iter()
        .map(|x| match &x.error {
            Some(e) => format!("{} none ({e})", x.family),
            None => format!("{} {} LUT / {} FF", x.family, count(x.lut), count(x.ff)),
        })
        .collect();
    parts = vec![format!("{} ({}, post-synthesis estimate{rtl})", parts.join(", "), best.mode())];
    for s in &runs {
        for p in s.pnr.iter().filter(|p| p.fmax_mhz.is_some()) {
            let rtl = s.rtl.as_ref().map_or(String::new(), |r| format!(", older RTL {r}"));
            parts.push(format!("{} Fmax {} MHz (placed and routed{rtl})", p.device, p.fmax_mhz.unwrap_or_default()));
        }
    }
    Ok(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::SizeResult;

    fn find(c: usize, l: usize, variant: &str, mode: &str) -> &'static SizeResult {
        super::results()
            .unwrap()
            .sizes
            .iter()
            .find(|z| {
                (z.clusters, z.neurons) == (c, l)
                    && z.variant.as_deref().unwrap_or("full") == variant
                    && z.mode() == mode
                    && z.rtl.is_none()
            })
            .unwrap_or_else(|| panic!("{c}x{l} {variant} {mode} missing"))
    }

    #[test]
    fn the_embedded_results_parse_and_cover_the_replayed_sizes() {
        let r = super::results().unwrap();
        // Every replayed size has counts from every flow for both builds (hierarchical runs).
        for (c, l) in [(3, 3), (4, 16), (8, 50)] {
            for v in ["full", "som"] {
                let z = find(c, l, v, "hierarchical");
                assert_eq!(z.synth.len(), 3, "{c}x{l} {v}: ice40, ecp5, xilinx");
                assert!(z.synth.iter().all(|x| x.error.is_none() && x.lut.unwrap_or(0) > 0), "{c}x{l} {v}");
            }
            assert!(!super::for_size(c, l).unwrap().is_empty());
        }
        // The weight flip-flops alone are a floor no flow can go under.
        let f = neurobits_fpga::resources(8, 50, 1);
        assert!(find(8, 50, "full", "hierarchical").synth.iter().all(|x| x.ff.unwrap() >= f.weight_ffs));
        assert!(r.command.contains("fpga-synth"));
        // 3×3 places on an HX8K, so its clock is measured.
        let (f, label) = super::clock(3, 3, None).unwrap();
        assert!(f > 1.0 && label.contains("measured"), "{label}");
        assert_eq!(super::clock(3, 3, Some(50.0)).unwrap().0, 50.0);
    }

    #[test]
    fn the_builds_and_modes_are_told_apart() {
        // Leaving out the adders and WTA leaves less logic in every flow.
        for mode in ["flat", "hierarchical"] {
            for (full, som) in find(4, 8, "full", mode).synth.iter().zip(&find(4, 8, "som", mode).synth) {
                assert_eq!(full.family, som.family);
                assert!(som.lut < full.lut, "{mode} {}: {:?} vs {:?}", som.family, som.lut, full.lut);
            }
        }
        // The full circuit's flat figures are the ones a size's report leads with.
        assert_eq!(super::for_size(4, 8).unwrap()[0].mode(), "flat");
        let lines = super::lines(3, 3).unwrap();
        // The current RTL's full flat lines lead, unprefixed.
        assert!(lines[0].starts_with("ice40 ") || lines[0].starts_with("ecp5 "), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("full build, hierarchical: ecp5")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("UART board top build, flat: ice40-hx8k")), "{lines:?}");
        let sum = super::summary(8, 50).unwrap();
        assert!(sum.contains("LUT / 75049 FF") && sum.contains("hierarchical, post-synthesis"), "{sum}");
        let md = super::super::synth_report::markdown().unwrap();
        assert!(md.contains("| 4x8 | sum-of-max only | flat | ecp5 |"), "{md}");
        assert!(md.contains("| 8x50 | full | hierarchical | ecp5 |"), "{md}");
    }
}
