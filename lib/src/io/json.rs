//! Every machine-readable output is a JSON document with a `meta` object: what wrote it and how
//! (version and commit, the command line, the host's threads, the OS), so that a result file can
//! be traced to its run. A document that is a list is `{"meta": …, "rows": [ … ]}`.

use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;

/// The `meta` object of this process.
///
/// ```
/// let m = neurobits::io::json::meta();
/// assert!(m["version"].as_str().unwrap().starts_with(env!("CARGO_PKG_VERSION")));
/// assert!(m["command_line"].is_array());
/// ```
pub fn meta() -> Value {
    json!({
        "version": concat!(env!("CARGO_PKG_VERSION"), " (", env!("NEUROBITS_COMMIT"), ")"),
        // `args_os`: `args` panics on an argument that is not UTF-8 (a path may be any bytes).
        "command_line": std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "host_threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
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
