//! FlyHash through the GPU backend (`gpu-host`).

use anyhow::Result;
use neurobits_core::flyhash::FlyParams;
use neurobits_core::Word;
use neurobits_gpu_host::flyhash::FlyWta;
use neurobits_gpu_host::Gpu;

use super::cpu::{Wta, BISECT_EPS};
use super::data::MatrixRef;

/// The GPU's WTA variant for a CLI choice.
pub fn wta(w: Wta) -> FlyWta {
    match w {
        Wta::Exact => FlyWta::Exact,
        Wta::Bisect64 => FlyWta::Bisect64 { eps: BISECT_EPS },
    }
}

/// Codes of every row of `x`, computed on `gpu` with the given projection.
pub fn hash(gpu: &Gpu, p: &FlyParams, proj: &[u32], x: MatrixRef<'_>, w: Wta) -> Result<Vec<Word>> {
    let mut f = gpu.fly(*p)?;
    f.set_projection(proj)?;
    let inputs = f.upload(x.data, x.rows)?;
    Ok(f.hash(&inputs, wta(w))?.codes)
}
