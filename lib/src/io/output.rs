//! Retrieval output: one line per probe, each cluster's active symbols joined by `|`.

use neurobits_core::{
    gbnn::{Geometry, Stats},
    Word,
};
use serde::ser::SerializeMap;
use serde::Serialize;
use std::io::Write;

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
    let mut out = Vec::new();
    write_csv(&mut out, rows).expect("writing to memory");
    String::from_utf8(out).expect("digits, '|' and ','")
}

/// [`csv()`], streamed to `w`: no copy of the whole text in memory.
pub fn write_csv(w: &mut dyn Write, rows: &[Active]) -> std::io::Result<()> {
    for row in rows {
        for (c, symbols) in row.iter().enumerate() {
            if c > 0 {
                w.write_all(b",")?;
            }
            for (i, x) in symbols.iter().enumerate() {
                write!(w, "{}{x}", if i > 0 { "|" } else { "" })?;
            }
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// One probe of the JSON output; fields in the order `serde_json` sorts an object's keys, so the
/// streamed text is what the document built as a `Value` was.
#[derive(Serialize)]
struct Probe<'a> {
    active: &'a Active,
    converged: bool,
    iterations: u32,
}

/// The JSON document, serialized as it is written: a retrieval of millions of probes once took
/// 9 GB as a `serde_json::Value` tree and a string; streamed, it takes the output buffer.
struct Doc<'a> {
    geom: &'a Geometry,
    rule: &'a str,
    rows: &'a [Active],
    stats: &'a [Stats],
}

impl Serialize for Doc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Probes<'a>(&'a [Active], &'a [Stats]);
        impl Serialize for Probes<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().zip(self.1).map(|(active, st)| Probe {
                    active,
                    converged: st.converged,
                    iterations: st.iterations,
                }))
            }
        }
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("clusters", &self.geom.clusters())?;
        m.serialize_entry("meta", &super::json::meta())?;
        m.serialize_entry("neurons", &self.geom.neurons_per_cluster())?;
        m.serialize_entry("probes", &Probes(self.rows, self.stats))?;
        m.serialize_entry("rule", self.rule)?;
        m.end()
    }
}

/// JSON text of a batch's active symbols with their statistics.
pub fn json(geom: &Geometry, rule: &str, rows: &[Active], stats: &[Stats]) -> String {
    let mut out = Vec::new();
    write_json(&mut out, geom, rule, rows, stats).expect("writing to memory");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// [`json()`], streamed to `w`.
pub fn write_json(
    w: &mut dyn Write,
    geom: &Geometry,
    rule: &str,
    rows: &[Active],
    stats: &[Stats],
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &Doc { geom, rule, rows, stats })?;
    w.write_all(b"\n")
}
