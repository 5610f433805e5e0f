//! Retrieval output: one line per probe, each cluster's active symbols joined by `|`.

use neurobits_core::{
    gbnn::{Geometry, Stats},
    Word,
};
use serde_json::json;

/// The active symbols of every cluster of one probe.
pub type Active = Vec<Vec<usize>>;

/// Active symbols of each cluster of state `v`.
pub fn active_symbols(geom: &Geometry, v: &[Word]) -> Active {
    let wpc = geom.words_per_cluster();
    (0..geom.clusters())
        .map(|c| {
            let mut s = Vec::new();
            for wi in 0..wpc {
                let mut x = v[c * wpc + wi];
                while x != 0 {
                    s.push(wi * 64 + x.trailing_zeros() as usize);
                    x &= x - 1;
                }
            }
            s
        })
        .collect()
}

/// CSV text of a batch's active symbols.
pub fn csv(rows: &[Active]) -> String {
    let mut out = String::new();
    for row in rows {
        let fields: Vec<String> =
            row.iter().map(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("|")).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// JSON text of a batch's active symbols with their statistics.
pub fn json(geom: &Geometry, rule: &str, rows: &[Active], stats: &[Stats]) -> String {
    let probes: Vec<_> = rows
        .iter()
        .zip(stats)
        .map(|(a, s)| json!({"active": a, "iterations": s.iterations, "converged": s.converged}))
        .collect();
    let doc =
        json!({"rule": rule, "clusters": geom.clusters(), "neurons": geom.neurons_per_cluster(), "probes": probes});
    let doc = super::json::document(&doc).expect("JSON of plain values");
    serde_json::to_string_pretty(&doc).expect("JSON of plain values") + "\n"
}
