//! FlyHash on the GPU: projection, activations, exact or bisection WTA, Hamming top-r.

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::kernels as k;
use neurobits_core::flyhash::{sort_hits, FlyParams, RadixSelect};
use neurobits_core::Word;
use std::time::Instant;

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

pub mod ann;
mod floats;
mod flynn;
mod pixels;
mod search;
pub use floats::candidate_capacity;
use floats::FloatBuffers;
pub use flynn::FlynnGpu;
use pixels::PixelBuffers;
pub use search::{DeviceCodes, HammingHits, HammingIndex, KeyKernel, HAMMING_MAX_WORDS};

/// Outputs per thread in the parallel exact WTA (a multiple of 64: one writer per code word).
pub const FLY_CHUNK: u32 = 256;

/// Scratch of the parallel exact WTA: per input one [`RadixSelect`] (held as bytes, sized from
/// the type), a 256-bin histogram, and per (chunk, input) a tie count.
struct WtaScratch {
    states: CudaSlice<u8>,
    hist: CudaSlice<u32>,
    counts: CudaSlice<u32>,
}

/// Bytes of `b` radix selections.
const fn select_bytes(b: usize) -> usize {
    b * core::mem::size_of::<RadixSelect>()
}

/// Winner-take-all variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlyWta {
    /// Exactly k winners (radix select; ties to the lower index).
    Exact,
    /// The paper's 64-step bisection with margin `eps`.
    Bisect64 {
        /// Margin around the minimum and maximum.
        eps: f32,
    },
}

/// A FlyHash configuration with its projection resident on the device.
pub struct FlyGpu<'g> {
    gpu: &'g Gpu,
    params: FlyParams,
    proj: CudaSlice<u32>,
    /// Activation, code and WTA scratch buffers of the last batch size, reused.
    buffers: std::cell::RefCell<Option<Buffers>>,
    /// The pixel path's row offsets (built from the projection on first use) and buffers.
    pixel: std::cell::RefCell<PixelBuffers>,
    /// The filtered `f32` path's `u16` projection and buffers.
    float: std::cell::RefCell<FloatBuffers>,
}

/// Device buffers of one batch size: `(b, activations, codes, WTA scratch)`.
type Buffers = (u32, CudaSlice<f32>, CudaSlice<u64>, WtaScratch);

/// Inputs resident on the device: when every value is an 8-bit pixel, packed four inputs per word
/// for the exact hash's integer path ([`FlyInputs::pixels`]), otherwise as floats, transposed
/// (`d × b`). Pixel inputs get their float copy on the device, from the packed pixels, the first
/// time a path needs it (bisect64): a quarter of the upload and of the resident memory.
pub struct FlyInputs {
    b: u32,
    xt: std::cell::OnceCell<CudaSlice<f32>>,
    pix: Option<CudaSlice<u32>>,
}

impl FlyInputs {
    /// Whether the exact hash of these inputs takes the pixel path (integer sums of four inputs
    /// per word; the same codes, see `neurobits_core::flyhash::Pixels4`).
    pub fn pixels(&self) -> bool {
        self.pix.is_some()
    }
}

/// Codes of a batch and the time they took.
pub struct FlyBatch {
    /// `b · ⌈m/64⌉` words, input-major.
    pub codes: Vec<Word>,
    /// GPU time inside the kernels.
    pub kernel_ms: f64,
    /// Kernels plus the download of the codes (inputs already resident).
    pub total_ms: f64,
}

impl Gpu {
    /// Draws the projection on the device (the core's `projection_row`, one thread per row).
    pub fn fly(&self, params: FlyParams) -> Result<FlyGpu<'_>, GpuError> {
        self.ensure_fits(params.m as u64 * params.s as u64 * 4)?;
        let mut proj = self.stream.alloc_zeros::<u32>(params.m as usize * params.s as usize)?;
        let a = k::Projection { params, proj: wr(self, &mut proj) };
        // SAFETY: `proj` holds m·s indices, one row per thread.
        unsafe { launch(self, &mut KernelTimer::default(), params.m as u64, a)? };
        Ok(FlyGpu {
            gpu: self,
            params,
            proj,
            buffers: Default::default(),
            pixel: Default::default(),
            float: Default::default(),
        })
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
        self.pixel.borrow_mut().offs = None;
        self.reset_float_offsets();
        Ok(())
    }

    /// Uploads `b` inputs of `d` values (row-major): packed for the pixel path when they are all
    /// 8-bit pixels and the parameters allow it, else as [`FlyGpu::upload_float`] does.
    pub fn upload(&self, x: &[f32], b: usize) -> Result<FlyInputs, GpuError> {
        let d = self.params.d as usize;
        if x.len() != b * d {
            return Err(GpuError::Input(format!("{} values are not {b} inputs of {d}", x.len())));
        }
        match self.pack_pixels(x, b)? {
            Some(pix) => Ok(FlyInputs { b: b as u32, xt: Default::default(), pix: Some(pix) }),
            None => self.upload_float(x, b),
        }
    }

    /// [`FlyGpu::upload`] without the pixel packing: the exact hash takes the `f32` path.
    pub fn upload_float(&self, x: &[f32], b: usize) -> Result<FlyInputs, GpuError> {
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
        Ok(FlyInputs { b: b as u32, xt: self.gpu.stream.clone_htod(&xt)?.into(), pix: None })
    }

    /// The inputs as transposed floats: pixel inputs are unpacked on the device the first time.
    fn floats<'x>(&self, x: &'x FlyInputs) -> Result<&'x CudaSlice<f32>, GpuError> {
        if let (None, Some(pix)) = (x.xt.get(), &x.pix) {
            let (g, d) = (self.gpu, self.params.d);
            g.ensure_fits(d as u64 * x.b as u64 * 4)?;
            let mut xt = g.stream.alloc_zeros::<f32>(d as usize * x.b as usize)?;
            let a = k::UnpackPixels { d, b: x.b, groups: x.b.div_ceil(4), pix: rd(g, pix), xt: wr(g, &mut xt) };
            // SAFETY: `pix` holds d·⌈b/4⌉ words, `xt` d·b floats, one thread each.
            unsafe { launch(g, &mut KernelTimer::default(), d as u64 * x.b as u64, a)? };
            let _ = x.xt.set(xt);
        }
        Ok(x.xt.get().expect("set at upload or above"))
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
        if let (FlyWta::Exact, Some(pix)) = (wta, &x.pix) {
            let kernel_ms = self.hash_pixels(x.b, pix, out)?;
            return Ok((kernel_ms, start.elapsed().as_secs_f64() * 1e3));
        }
        let xt = self.floats(x)?;
        if wta == FlyWta::Exact && self.filtered() {
            let kernel_ms = self.hash_filtered(xt, x.b, out)?;
            return Ok((kernel_ms, start.elapsed().as_secs_f64() * 1e3));
        }
        self.hash_unfiltered(xt, x.b, wta, out)
    }

    /// The unfiltered kernels (every activation written, then the WTA kernels over them) on `b`
    /// transposed inputs; returns (kernel, total) milliseconds.
    fn hash_unfiltered(
        &self,
        xt: &CudaSlice<f32>,
        b: u32,
        wta: FlyWta,
        out: &mut Vec<Word>,
    ) -> Result<(f64, f64), GpuError> {
        let start = Instant::now();
        let (g, p) = (self.gpu, &self.params);
        let cw = p.code_words();
        let st = &g.stream;
        let mut bufs = self.buffers.borrow_mut();
        if bufs.as_ref().is_none_or(|(n, ..)| *n != b) {
            *bufs = None;
            let b = b as usize;
            let chunks = p.m.div_ceil(FLY_CHUNK) as usize;
            let scratch_bytes = select_bytes(b) + b * (256 + chunks) * 4;
            self.gpu.ensure_fits(p.m as u64 * b as u64 * 4 + b as u64 * cw as u64 * 8 + scratch_bytes as u64)?;
            let scratch = WtaScratch {
                states: st.alloc_zeros::<u8>(select_bytes(b))?,
                hist: st.alloc_zeros::<u32>(b * 256)?,
                counts: st.alloc_zeros::<u32>(b * chunks)?,
            };
            // SAFETY: the activation kernel writes every element before the WTA kernels read
            // it; the WTA kernels write every code word.
            *bufs = Some(unsafe { (b as u32, st.alloc::<f32>(p.m as usize * b)?, st.alloc::<u64>(b * cw)?, scratch) });
        }
        let (_, act, codes, scratch) = bufs.as_mut().expect("just set");
        let mut t = KernelTimer::default();
        let a = k::Activation { m: p.m, s: p.s, b, proj: rd(g, &self.proj), xt: rd(g, xt), act: wr(g, act) };
        // SAFETY, here and below: the buffers hold m·b activations, b codes of ⌈m/64⌉ words and
        // the scratch sized above for this b.
        unsafe { launch(g, &mut t, (b as u64).div_ceil(32) * 32 * p.m as u64, a)? };
        let act = rd(g, act);
        match wta {
            FlyWta::Exact => {
                let (chunks, chunk) = (p.m.div_ceil(FLY_CHUNK) as u64 * b as u64, FLY_CHUNK);
                let (m, states) = (p.m, wr(g, &mut scratch.states).cast());
                let hist = wr(g, &mut scratch.hist);
                unsafe { launch(g, &mut t, b as u64, k::RadixInit { b, k: p.k, states })? };
                for _ in 0..4 {
                    let a = k::RadixHist { m, b, chunk, act, states: states.read(), hist };
                    unsafe { launch(g, &mut t, chunks, a)? };
                    unsafe { launch(g, &mut t, b as u64, k::RadixPick { b, states, hist })? };
                }
                let counts = wr(g, &mut scratch.counts);
                let a = k::TieCount { m, b, chunk, act, states: states.read(), counts };
                unsafe { launch(g, &mut t, chunks, a)? };
                let a =
                    k::Select { m, b, chunk, act, states: states.read(), counts: counts.read(), codes: wr(g, codes) };
                unsafe { launch(g, &mut t, chunks, a)? };
            }
            FlyWta::Bisect64 { eps } => {
                let a = k::Bisect64 { m: p.m, k: p.k, b, eps, act, codes: wr(g, codes) };
                unsafe { launch(g, &mut t, b as u64, a)? };
            }
        }
        g.download_into(codes, out)?;
        let kernel_ms = t.total_ms()?;
        Ok((kernel_ms, start.elapsed().as_secs_f64() * 1e3))
    }
}

impl Gpu {
    /// Top-r Hamming neighbours of each query in `db` (codes of `words` words), nearest first,
    /// ties by index: `(index, distance)`.
    pub fn hamming_top_r(
        &self,
        db: &[Word],
        q: &[Word],
        words: usize,
        r: usize,
    ) -> Result<Vec<Vec<(u32, u32)>>, GpuError> {
        if (1..=HAMMING_MAX_WORDS).contains(&words) && !db.is_empty() && db.len().is_multiple_of(words) {
            return Ok(self.hamming_index(db, words)?.top_r(q, r)?.hits);
        }
        let (n, nq) = (db.len() / words, q.len() / words);
        let r = r.min(n);
        self.ensure_fits((db.len() + q.len()) as u64 * 8 + (n * nq) as u64 * 4 + (nq * r) as u64 * 4)?;
        let st = &self.stream;
        let (d_db, d_q) = (st.clone_htod(db)?, st.clone_htod(q)?);
        let mut dist = unsafe { st.alloc::<u32>(n * nq) }?;
        let mut out = st.alloc_zeros::<u32>(nq * r)?;
        let mut t = KernelTimer::default();
        let (n32, nq32) = (n as u32, nq as u32);
        let a = k::Hamming {
            words: words as u32,
            n: n32,
            nq: nq32,
            db: rd(self, &d_db),
            q: rd(self, &d_q),
            dist: wr(self, &mut dist),
        };
        // SAFETY: n and nq codes of `words` words; nq·n distances; nq·r winners.
        unsafe { launch(self, &mut t, n as u64 * nq as u64, a)? };
        let a = k::TopR { n: n32, nq: nq32, r: r as u32, dist: rd(self, &dist), out: wr(self, &mut out) };
        unsafe { launch(self, &mut t, nq as u64, a)? };
        let (idx, dist) = (st.clone_dtoh(&out)?, st.clone_dtoh(&dist)?);
        Ok(idx
            .chunks(r.max(1))
            .enumerate()
            .map(|(qi, ids)| {
                let mut v: Vec<(u32, u32)> = ids.iter().map(|&j| (j, dist[qi * n + j as usize])).collect();
                sort_hits(&mut v);
                v
            })
            .collect())
    }
}
