//! Every machine-readable output is a JSON document with a `meta` object: what wrote it and how
//! (version and commit, the command line, the host's threads, the OS, the devices it ran on, every
//! seed — given or default), so that a result file can be traced to its run and run again. A
//! document that is a list is `{"meta": …, "rows": [ … ]}`.

use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Mutex;

/// Seeds this run uses, by option name: recorded by whoever parsed them (the CLI records every
/// `*seed*` option, given or default), written into every `meta`.
static SEEDS: Mutex<Vec<(String, Value)>> = Mutex::new(Vec::new());

/// Records that this run uses seed `value` under `name` (a later record of one name replaces it).
pub fn record_seed(name: &str, value: Value) {
    let mut seeds = SEEDS.lock().unwrap_or_else(|e| e.into_inner());
    seeds.retain(|(n, _)| n != name);
    seeds.push((name.to_string(), value));
}

/// The CPU's model name (Linux's `/proc/cpuinfo`), or the architecture where it cannot be read.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The `meta` object of this process: `device` names the CPU and every GPU opened so far (so a
/// document written after the work names what did it).
///
/// ```
/// neurobits::io::json::record_seed("seed", serde_json::json!(7));
/// let m = neurobits::io::json::meta();
/// assert!(m["version"].as_str().unwrap().starts_with(env!("CARGO_PKG_VERSION")));
/// assert!(m["command_line"].is_array());
/// assert!(m["device"]["cpu"].is_string() && m["device"]["gpus"].is_array());
/// assert_eq!(m["seeds"]["seed"], 7);
/// ```
pub fn meta() -> Value {
    let gpus: Vec<Value> =
        neurobits_gpu_host::opened_gpus().into_iter().map(|(i, name)| json!({"ordinal": i, "name": name})).collect();
    let seeds: serde_json::Map<String, Value> =
        SEEDS.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect();
    json!({
        "version": concat!(env!("CARGO_PKG_VERSION"), " (", env!("NEUROBITS_COMMIT"), ")"),
        // `args_os`: `args` panics on an argument that is not UTF-8 (a path may be any bytes).
        "command_line": std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "host_threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "device": {"cpu": cpu_model(), "gpus": gpus},
        "seeds": seeds,
    })
}

/// `value` as a document: objects get a `meta` key, anything else becomes `rows` beside it.
///
/// ```
/// let d = neurobits::io::json::document(&[1, 2]).unwrap();
/// assert_eq!(d["rows"], serde_json::json!([1, 2]));
/// let d = neurobits::io::json::document(&serde_json::json!({"k": 3})).unwrap();
/// assert_eq!((d["k"].as_u64(), d["meta"].is_object()), (Some(3), true));
/// ```
pub fn document(value: &impl Serialize) -> Result<Value> {
    Ok(match serde_json::to_value(value)? {
        Value::Object(mut o) => {
            o.insert("meta".into(), meta());
            Value::Object(o)
        }
        other => json!({ "meta": meta(), "rows": other }),
    })
}

/// Writes `value` as a pretty-printed document (see [`document`]), atomically.
pub fn write(path: &Path, value: &impl Serialize) -> Result<()> {
    super::atomic::write_string(path, &(serde_json::to_string_pretty(&document(value)?)? + "\n"))
}
