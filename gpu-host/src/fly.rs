//! FlyHash on the GPU: projection, activations, exact or bisection WTA, Hamming top-r.

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::FlyParams;
use neurobits_core::Word;
use std::time::Instant;

use crate::launch::{self, KernelTimer};
use crate::{Gpu, GpuError};

/// Winner-take-all variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlyWta {
    /// Exactly k winners (radix select; ties to the lower index).
    Exact,
    /// The paper's 64-step bisection with margin `eps`.
    Bisect64 { eps: f32 },
}

/// A FlyHash configuration with its projection resident on the device.
pub struct FlyGpu<'g> {
    gpu: &'g Gpu,
    params: FlyParams,
    proj: CudaSlice<u32>,
    /// Activation, code and WTA scratch buffers of the last batch size, reused.
    buffers: std::cell::RefCell<Option<Buffers>>,
}

/// Device buffers of one batch size: `(b, activations, codes, WTA scratch)`.
type Buffers = (u32, CudaSlice<f32>, CudaSlice<u64>, launch::FlyWtaScratch);

/// Inputs resident on the device, transposed (`d × b`).
pub struct FlyInputs {
    b: u32,
    xt: CudaSlice<f32>,
}

/// Codes of a batch and the time they took.
pub struct FlyBatch {
    /// `b · ⌈m/64⌉` words, input-major.
    pub codes: Vec<Word>,
    pub kernel_ms: f64,
    /// Kernels plus the download of the codes (inputs already resident).
    pub total_ms: f64,
}

impl Gpu {
    /// Draws the projection on the device (the core's `projection_row`, one thread per row).
    pub fn fly(&self, params: FlyParams) -> Result<FlyGpu<'_>, GpuError> {
        self.ensure_fits(params.m as u64 * params.s as u64 * 4)?;
        let mut proj = self.stream.alloc_zeros::<u32>(params.m as usize * params.s as usize)?;
        launch::fly_projection(self, &mut KernelTimer::default(), &params, &mut proj)?;
        Ok(FlyGpu { gpu: self, params, proj, buffers: std::cell::RefCell::new(None) })
    }
}

impl FlyGpu<'_> {
    /// The projection as drawn on the device (`m · s` indices).
    pub fn projection(&self) -> Result<Vec<u32>, GpuError> {
        Ok(self.gpu.stream.clone_dtoh(&self.proj)?)
    }

    /// Replaces the projection (e.g. one read from a file): `m · s` ascending indices below `d`.
    pub fn set_projection(&mut self, proj: &[u32]) -> Result<(), GpuError> {
        if proj.len() != self.params.m as usize * self.params.s as usize || proj.iter().any(|&i| i >= self.params.d) {
            return Err(GpuError::Input("projection does not match the parameters".into()));
        }
        self.proj = self.gpu.stream.clone_htod(proj)?;
        Ok(())
    }

    /// Uploads `b` inputs of `d` values (row-major), transposing them for coalesced reads.
    pub fn upload(&self, x: &[f32], b: usize) -> Result<FlyInputs, GpuError> {
        let d = self.params.d as usize;
        if x.len() != b * d {
            return Err(GpuError::Input(format!("{} values are not {b} inputs of {d}", x.len())));
        }
        self.gpu.ensure_fits(x.len() as u64 * 4)?;
        let mut xt = vec![0f32; x.len()];
        for i in 0..b {
            for j in 0..d {
                xt[j * b + i] = x[i * d + j];
            }
        }
        Ok(FlyInputs { b: b as u32, xt: self.gpu.stream.clone_htod(&xt)? })
    }

    /// Hashes resident inputs.
    pub fn hash(&self, x: &FlyInputs, wta: FlyWta) -> Result<FlyBatch, GpuError> {
        let mut codes = Vec::new();
        let (kernel_ms, total_ms) = self.hash_into(x, wta, &mut codes)?;
        Ok(FlyBatch { codes, kernel_ms, total_ms })
    }

    /// [`FlyGpu::hash`] into a reused vector; returns (kernel, total) milliseconds.
    pub fn hash_into(&self, x: &FlyInputs, wta: FlyWta, out: &mut Vec<Word>) -> Result<(f64, f64), GpuError> {
        let start = Instant::now();
        let (g, p) = (self.gpu, &self.params);
        let cw = p.code_words();
        let st = &g.stream;
        let mut bufs = self.buffers.borrow_mut();
        if bufs.as_ref().is_none_or(|(b, ..)| *b != x.b) {
            *bufs = None;
            let b = x.b as usize;
            let chunks = p.m.div_ceil(launch::FLY_CHUNK) as usize;
            self.gpu.ensure_fits(p.m as u64 * x.b as u64 * 4 + x.b as u64 * cw as u64 * 8 + (b * (5 + 256 + chunks) * 4) as u64)?;
            let scratch = launch::FlyWtaScratch {
                states: st.alloc_zeros::<u32>(b * 5)?,
                hist: st.alloc_zeros::<u32>(b * 256)?,
                counts: st.alloc_zeros::<u32>(b * chunks)?,
            };
            // SAFETY: the activation kernel writes every element before the WTA kernels read
            // it; the WTA kernels write every code word.
            *bufs = Some(unsafe { (x.b, st.alloc::<f32>(p.m as usize * b)?, st.alloc::<u64>(b * cw)?, scratch) });
        }
        let (_, act, codes, scratch) = bufs.as_mut().expect("just set");
        let mut t = KernelTimer::default();
        launch::fly_activation(g, &mut t, p.m, p.s, x.b, &self.proj, &x.xt, act)?;
        match wta {
            FlyWta::Exact => launch::fly_wta_exact(g, &mut t, p.m, p.k, x.b, act, scratch, codes)?,
            FlyWta::Bisect64 { eps } => launch::fly_wta_bisect64(g, &mut t, p.m, p.k, x.b, eps, act, codes)?,
        }
        g.download_into(codes, out)?;
        let kernel_ms = t.total_ms()?;
        Ok((kernel_ms, start.elapsed().as_secs_f64() * 1e3))
    }
}

impl Gpu {
    /// Top-r Hamming neighbours of each query in `db` (codes of `words` words), nearest first,
    /// ties by index: `(index, distance)`.
    pub fn hamming_top_r(&self, db: &[Word], q: &[Word], words: usize, r: usize) -> Result<Vec<Vec<(u32, u32)>>, GpuError> {
        let (n, nq) = (db.len() / words, q.len() / words);
        let r = r.min(n);
        self.ensure_fits((db.len() + q.len()) as u64 * 8 + (n * nq) as u64 * 4 + (nq * r) as u64 * 4)?;
        let st = &self.stream;
        let (d_db, d_q) = (st.clone_htod(db)?, st.clone_htod(q)?);
        let mut dist = unsafe { st.alloc::<u32>(n * nq) }?;
        let mut out = st.alloc_zeros::<u32>(nq * r)?;
        let mut t = KernelTimer::default();
        launch::fly_hamming(self, &mut t, words as u32, n as u32, nq as u32, &d_db, &d_q, &mut dist)?;
        launch::fly_top_r(self, &mut t, n as u32, nq as u32, r as u32, &dist, &mut out)?;
        let (idx, dist) = (st.clone_dtoh(&out)?, st.clone_dtoh(&dist)?);
        Ok(idx
            .chunks(r.max(1))
            .enumerate()
            .map(|(qi, ids)| {
                let mut v: Vec<(u32, u32)> = ids.iter().map(|&j| (j, dist[qi * n + j as usize])).collect();
                v.sort_by_key(|&(j, d)| (d, j));
                v
            })
            .collect())
    }
}
