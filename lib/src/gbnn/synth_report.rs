//! The synthesis report: the table of every run beside the formula counts, the check of the
//! hierarchical counts against flat ones, and the charts (`neurobits fpga --synth-report DIR`).

#[cfg(feature = "plots")]
use super::synth::SynthRun;
use super::synth::{count, results, SynthResults};
use anyhow::Result;

/// The synthesis table as Markdown: per size and family, measured counts beside the formula's.
pub fn markdown() -> Result<String> {
    let r = results()?;
    let mut s = format!(
        "Command: `{}`; machine: {}. Every LUT/FF/carry/BRAM count is a Yosys post-synthesis \
         estimate (`synth_ice40`, `synth_ecp5`, `synth_xilinx -family xc7`); \"synthesis\" says whether \
         the design was flattened first (flat) or each module mapped once and the counts multiplied by \
         the instance counts (hierarchical: no optimisation across module boundaries). Fmax is \
         placed and routed: nextpnr-ice40 on flat iCE40 netlists that fit the device. Formula: \
         `neurobits_fpga::resources` with γ = 1.\n\n",
        r.command, r.machine
    );
    if let Some(load) = &r.load {
        s += &format!("Load: {load}.\n\n");
    }
    s += "| size | build | synthesis | family | LUT | FF | carry | BRAM | Fmax (MHz) | formula FFs (W + state + scores; sum-of-max only: W + state) | formula full adders + AND2 (sum-of-max only: AND2) | note |\n";
    s += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for z in &r.sizes {
        let f = neurobits_fpga::resources(z.clusters, z.neurons, 1);
        // The sum-of-max-only build has no score registers or adders: its formula is W, state, AND2.
        let (ffs, gates) = if z.variant.as_deref() == Some("som") {
            (f.weight_ffs + f.state_ffs, f.som_and2)
        } else {
            (f.weight_ffs + f.state_ffs + f.score_ffs, f.sos_full_adders + f.som_and2)
        };
        let rtl = z.rtl.as_ref().map_or(String::new(), |r| format!("; RTL {r}"));
        for x in &z.synth {
            let fmax: Vec<String> = if x.family == "ice40" {
                z.pnr
                    .iter()
                    .filter_map(|p| p.fmax_mhz.map(|m| format!("{m} ({})", p.device.trim_start_matches("ice40-"))))
                    .collect()
            } else {
                vec![]
            };
            s += &format!(
                "| {}x{} | {} | {} | {} | {} | {} | {} | {} | {} | {ffs} | {gates} | {} |\n",
                z.clusters,
                z.neurons,
                z.build(),
                z.mode(),
                x.family,
                count(x.lut),
                count(x.ff),
                count(x.carry),
                count(x.bram),
                if fmax.is_empty() { "—".into() } else { fmax.join(", ") },
                x.error.clone().unwrap_or_else(|| match (x.cpu_seconds, x.mem_mb) {
                    (Some(cpu), Some(mb)) => format!("{} s ({cpu} s CPU, {mb} MB)", x.seconds),
                    (Some(cpu), None) => format!("{} s ({cpu} s CPU)", x.seconds),
                    _ => format!("{} s", x.seconds),
                }) + &rtl
            );
        }
    }
    s += &hier_vs_flat(r);
    Ok(s)
}

/// The check of the hierarchical counts: per size, build and family run both ways on the current
/// RTL, flat and hierarchical side by side and the difference in percent of the flat count.
fn hier_vs_flat(r: &SynthResults) -> String {
    let pct = |flat: Option<u64>, hier: Option<u64>| match (flat, hier) {
        (Some(f), Some(h)) if f > 0 => format!("{:+.1} %", (h as f64 - f as f64) * 100.0 / f as f64),
        (Some(0), Some(0)) => "±0 %".into(),
        _ => "—".into(),
    };
    let mut s = "\nHierarchical against flat (same RTL, same Yosys; difference in % of the flat count):\n\n\
                 | size | build | family | LUT flat | LUT hier. | Δ LUT | FF flat | FF hier. | Δ FF | carry flat | carry hier. | Δ carry |\n\
                 |---|---|---|---|---|---|---|---|---|---|---|---|\n"
        .to_string();
    let mut rows = 0;
    for flat in r.sizes.iter().filter(|z| z.mode() == "flat" && z.rtl.is_none()) {
        let Some(hier) = r.sizes.iter().find(|z| {
            (z.clusters, z.neurons, z.variant.as_deref(), z.rtl.is_none(), z.mode())
                == (flat.clusters, flat.neurons, flat.variant.as_deref(), true, "hierarchical")
        }) else {
            continue;
        };
        for f in flat.synth.iter().filter(|x| x.error.is_none()) {
            let Some(h) = hier.synth.iter().find(|x| x.family == f.family && x.error.is_none()) else { continue };
            rows += 1;
            s += &format!(
                "| {}x{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                flat.clusters,
                flat.neurons,
                flat.build(),
                f.family,
                count(f.lut),
                count(h.lut),
                pct(f.lut, h.lut),
                count(f.ff),
                count(h.ff),
                pct(f.ff, h.ff),
                count(f.carry),
                count(h.carry),
                pct(f.carry, h.carry)
            );
        }
    }
    if rows == 0 {
        return String::new();
    }
    s
}

/// Writes `fpga-synth.md` (the table) and two charts against network size, measured and formula:
/// `fpga-synth-ff.svg` (flip-flops) and `fpga-synth-lut.svg` (LUTs beside the formula's gates).
#[cfg(feature = "plots")]
pub fn write_report(dir: &std::path::Path) -> Result<()> {
    use super::synth::SizeResult;
    use crate::plot::{line_chart, Labels, Series};
    let r = results()?;
    std::fs::create_dir_all(dir)?;
    crate::io::atomic::write_string(&dir.join("fpga-synth.md"), &markdown()?)?;
    let n = |z: &SizeResult| (z.clusters * z.neurons) as f64;
    // Formula points at every size that has a full-build row of either mode (once per size).
    // One size per neuron count, so that each curve is a function of C·L: at 400 neurons the
    // paper's 8×50 (16×25 and 4×100, also 400 neurons, are in the table only).
    let charted = |z: &&SizeResult| z.clusters * z.neurons < 400 || (z.clusters, z.neurons) == (8, 50);
    let mut full: Vec<&SizeResult> = r.sizes.iter().filter(|z| z.is_full()).filter(charted).collect();
    full.sort_by_key(|z| z.clusters * z.neurons);
    full.dedup_by_key(|z| (z.clusters, z.neurons));
    let formula = |f: fn(&neurobits_fpga::Resources) -> u64| -> Vec<(f64, f64)> {
        full.iter().map(|z| (n(z), f(&neurobits_fpga::resources(z.clusters, z.neurons, 1)) as f64)).collect()
    };
    // The current RTL's runs of one build and mode (rows of older RTL revisions are in the table only).
    let measured_of = |variant: &str, mode: &str, family: &str, f: fn(&SynthRun) -> Option<u64>| -> Vec<(f64, f64)> {
        let mut pts: Vec<(f64, f64)> = r
            .sizes
            .iter()
            .filter(charted)
            .filter(|z| z.variant.as_deref().unwrap_or("full") == variant && z.mode() == mode && z.rtl.is_none())
            .filter_map(|z| z.synth.iter().find(|x| x.family == family).and_then(f).map(|v| (n(z), v as f64)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    };
    let measured = |family: &str, f: fn(&SynthRun) -> Option<u64>| measured_of("full", "hierarchical", family, f);
    let families = ["ice40", "ecp5", "xilinx"];
    let mut ff =
        vec![Series::new("formula: W + state + score FFs", formula(|f| f.weight_ffs + f.state_ffs + f.score_ffs))];
    ff.extend(
        families.iter().map(|fam| Series::new(format!("FF, {fam} (Yosys, hierarchical)"), measured(fam, |x| x.ff))),
    );
    ff.push(Series::new(
        "sum-of-max build FF, ecp5 (hierarchical)",
        measured_of("som", "hierarchical", "ecp5", |x| x.ff),
    ));
    let labels = Labels { title: "GBNN circuit: flip-flops vs size", x: "neurons C·L", y: "flip-flops" };
    line_chart(&dir.join("fpga-synth-ff.svg"), &labels, &ff, true)?;
    let mut lut = vec![Series::new("formula: full adders + AND2 gates", formula(|f| f.sos_full_adders + f.som_and2))];
    lut.extend(
        families.iter().map(|fam| Series::new(format!("LUT, {fam} (Yosys, hierarchical)"), measured(fam, |x| x.lut))),
    );
    lut.push(Series::new("LUT, ecp5 (Yosys, flat)", measured_of("full", "flat", "ecp5", |x| x.lut)));
    let som_formula = full.iter().map(|z| (n(z), neurobits_fpga::resources(z.clusters, z.neurons, 1).som_and2 as f64));
    lut.push(Series::new("formula: AND2 (sum-of-max)", som_formula.collect()));
    lut.extend(families.iter().map(|fam| {
        Series::new(
            format!("sum-of-max build, {fam} (hierarchical)"),
            measured_of("som", "hierarchical", fam, |x| x.lut),
        )
    }));
    let labels =
        Labels { title: "GBNN circuit: logic vs size", x: "neurons C·L", y: "LUTs (measured) / gates (formula)" };
    line_chart(&dir.join("fpga-synth-lut.svg"), &labels, &lut, true)
}
