//! The model verbs of the CLI (`flynn fit|predict`, `flyhash index build|add|search`, `ocnn
//! cluster`, `cortical fit|predict`): each parses its flags into the library's configuration,
//! reads its inputs with the library's one reader, calls one library verb and writes the result.
//! No model logic lives here.

pub mod cortical;
pub mod flynn;
pub mod index;
pub mod ocnn;

use neurobits::device::Target;
use neurobits::flyhash::data::Matrix;
use std::path::Path;

/// `--device`: `cpu`, `gpu`, `cuda`, `gpu:N`, `cuda:N` or `auto`.
pub fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

/// Reads vectors (any format the library reads; `-` is standard input).
pub fn read_matrix(path: &Path) -> anyhow::Result<Matrix> {
    neurobits::flyhash::data::read(path)
}

/// Reads one integer label per row.
pub fn read_labels(path: &Path) -> anyhow::Result<Vec<i64>> {
    let m = neurobits::flyhash::data::read(path)?;
    if m.cols != 1 && m.rows != 1 {
        anyhow::bail!("{}: labels must be one column, found {} columns", path.display(), m.cols);
    }
    m.data
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                Ok(v as i64)
            } else {
                Err(anyhow::anyhow!("{}: row {}: label {v} is not an integer", path.display(), i + 1))
            }
        })
        .collect()
}
