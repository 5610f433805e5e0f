//! The exact hash's filtered `f32` path (`neurobits_core::flyhash::wta_pack_filtered` on the GPU):
//! `fly_float_sample` keys the first rows of every input, `fly_float_interval` brackets each
//! input's threshold from them, `fly_float_hash` sums every row once from a shared-memory tile
//! and keeps only the keys inside the interval, `fly_float_resolve` picks the winning ones.
//! Inputs the counts cannot decide (a threshold outside its interval, more candidates than the
//! buffer holds: e.g. an input whose activations are nearly all equal) are gathered and hashed
//! again by the unfiltered kernels; their codes replace the filtered ones on the host.

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::kernels::{self as k, FLOAT_SAMPLE_ROWS, FLOAT_TILE_INPUTS};
use neurobits_core::flyhash::{sample_ranks, FlyParams};
use neurobits_core::Word;

use super::{FlyGpu, FlyWta};
use crate::launch::{launch, launch_shaped, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};
use neurobits_core::flyhash::KeyInterval;
use neurobits_core::kernel::{DevMut, DevPtr};

/// Device buffers of the filtered path for one batch size (`b` inputs, `bp` rounded up to whole
/// tiles).
struct FilterBuffers {
    b: u32,
    bp: u32,
    keys: CudaSlice<u32>,
    /// `KeyInterval`s as pairs of words.
    iv: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    cand: CudaSlice<u64>,
    codes: CudaSlice<u64>,
    fail: CudaSlice<u32>,
}

impl FilterBuffers {
    /// Whether these buffers serve a batch of `b` padded to `bp`.
    fn fits(this: &Option<Self>, b: u32, bp: u32) -> bool {
        this.as_ref().is_some_and(|f| f.b == b && f.bp == bp)
    }

    /// Buffers for `b` inputs padded to `bp`, `n` sample rows and `cap` candidates per input.
    fn new(g: &Gpu, p: &FlyParams, b: u32, bp: u32, n: u32, cap: u32) -> Result<Self, GpuError> {
        let cw = p.code_words();
        let (bu, bpu) = (b as u64, bp as u64);
        g.ensure_fits(bpu * (n as u64 * 4 + 8) + bu * (8 + cap as u64 * 8 + cw as u64 * 8 + 4) + 4)?;
        let (bu, bpu) = (b as usize, bp as usize);
        // SAFETY: every kernel writes what the next one reads: the sample keys (all bp columns),
        // the intervals (all bp), the counts and codes of the b inputs, the first
        // min(inside, cap) candidates of each; `fail[0]` is zeroed per batch.
        Ok(unsafe {
            FilterBuffers {
                b,
                bp,
                keys: g.stream.alloc::<u32>(bpu * n as usize)?,
                iv: g.stream.alloc::<u32>(2 * bpu)?,
                counts: g.stream.alloc::<u32>(2 * bu)?,
                cand: g.stream.alloc::<u64>(bu * cap as usize)?,
                codes: g.stream.alloc::<u64>(bu * cw)?,
                fail: g.stream.alloc_zeros::<u32>(bu + 1)?,
            }
        })
    }

    /// The sample keys, written by `fly_float_sample`.
    fn keys(&mut self, g: &Gpu) -> DevMut<u32> {
        wr(g, &mut self.keys)
    }

    /// Zeroes the undecided count (once per batch).
    fn clear_fail(&mut self, g: &Gpu) -> Result<(), GpuError> {
        Ok(g.stream.memset_zeros(&mut self.fail.slice_mut(0..1))?)
    }

    /// The intervals of the `b` inputs from their `n` sample keys (`fly_float_interval`).
    fn interval(&mut self, g: &Gpu, t: &mut KernelTimer, p: &FlyParams, n: u32) -> Result<(), GpuError> {
        let a = k::FloatInterval {
            m: p.m,
            k: p.k,
            n,
            bp: self.bp,
            keys: rd(g, &self.keys),
            iv: wr(g, &mut self.iv).cast(),
        };
        let shape = (self.b.div_ceil(32), k::FLOAT_INTERVAL_THREADS, k::FLOAT_INTERVAL_SHARED);
        // SAFETY: n·bp sample keys and bp intervals; blocks of 32 inputs below bp.
        unsafe { launch_shaped(g, Some(t), shape, a) }
    }

    /// What `fly_float_hash` reads and writes: (intervals, codes, counts, candidates).
    fn pass_args(&mut self, g: &Gpu) -> (DevPtr<KeyInterval>, DevMut<Word>, DevMut<u32>, DevMut<u64>) {
        (rd(g, &self.iv).cast(), wr(g, &mut self.codes), wr(g, &mut self.counts), wr(g, &mut self.cand))
    }

    /// The winning candidates of the `b` inputs (`fly_float_resolve`).
    fn resolve(&mut self, g: &Gpu, t: &mut KernelTimer, p: &FlyParams, cap: u32) -> Result<(), GpuError> {
        let a = k::FloatResolve {
            m: p.m,
            k: p.k,
            cap,
            iv: rd(g, &self.iv).cast(),
            counts: rd(g, &self.counts),
            cand: rd(g, &self.cand),
            codes: wr(g, &mut self.codes),
            fail: wr(g, &mut self.fail),
        };
        // SAFETY: b counts, candidate lists of `cap`, intervals and codes; `fail` holds 1 + b
        // words.
        unsafe { launch_shaped(g, Some(t), (self.b, k::FLOAT_RESOLVE_THREADS, 256 * 4), a) }
    }

    /// The batch's undecided inputs.
    fn failed(&self, g: &Gpu) -> Result<Vec<u32>, GpuError> {
        let n = g.stream.clone_dtoh(&self.fail.slice(0..1))?[0] as usize;
        Ok(if n == 0 { Vec::new() } else { g.stream.clone_dtoh(&self.fail.slice(1..1 + n))? })
    }
}

/// Replaces the codes of inputs `list` in `out` by `codes` (theirs, in list order).
fn patch_codes(out: &mut [Word], list: &[u32], codes: &[Word], cw: usize) {
    for (f, &i) in list.iter().enumerate() {
        out[i as usize * cw..][..cw].copy_from_slice(&codes[f * cw..][..cw]);
    }
}

/// The projection as `u16` indices for the float tile, and the buffers of the last batch.
#[derive(Default)]
pub(super) struct FloatBuffers {
    offs: Option<(u32, CudaSlice<u16>)>,
    batch: Option<FilterBuffers>,
    /// Candidates kept per input, when a test sets it (default: [`candidate_capacity`]).
    cap: Option<u32>,
    /// Whether the filtered paths are switched off (benchmarks of the unfiltered kernels).
    off: bool,
}

/// Sample rows for parameters `p`: [`FLOAT_SAMPLE_ROWS`], at most `m` (a multiple of 64, so of
/// the staged rows too).
fn sample_rows(p: &FlyParams) -> u32 {
    FLOAT_SAMPLE_ROWS.min(p.m)
}

/// Candidates kept per input: twice the share of the sample between its two ranks, in whole
/// warps of candidates, at most `m`. At Fashion-MNIST's and the batch configuration's `k/m` of
/// 5 % the interval holds about 4 % of the rows; twice that leaves room for its spread.
///
/// ```
/// use neurobits_core::flyhash::FlyParams;
/// let batch = FlyParams::new(1024, 131_072, 51, 6_554, 1).unwrap();
/// assert_eq!(neurobits_gpu_host::flyhash::candidate_capacity(&batch), 10_944); // 8.3 % of m
/// ```
pub fn candidate_capacity(p: &FlyParams) -> u32 {
    let n = sample_rows(p);
    let (r_hi, r_lo) = sample_ranks(p.m, p.k, n);
    let share = (r_lo.min(n) - r_hi.min(n)) as u64 + 1;
    ((2 * share * p.m as u64).div_ceil(n as u64).next_multiple_of(32) as u32).min(p.m)
}

impl FlyGpu<'_> {
    /// Whether these parameters allow the filtered path: whole code words, `u16` indices, and
    /// the tile of `d + 1` dimensions in one block's shared memory.
    fn float_params_ok(&self) -> bool {
        let p = &self.params;
        p.m.is_multiple_of(64)
            && p.d < u16::MAX as u32
            && k::float_tile_shared(p.d, p.s.next_multiple_of(4)) <= 200 << 10
    }

    /// Whether the exact hash of `f32` inputs takes the filtered path.
    pub(super) fn filtered(&self) -> bool {
        !self.float.borrow().off && self.float_params_ok()
    }

    /// Candidates kept per input.
    pub(super) fn capacity(&self) -> u32 {
        self.float.borrow().cap.unwrap_or_else(|| candidate_capacity(&self.params)).min(self.params.m)
    }

    /// Switches the filtered path off (`false`) or back on: the unfiltered kernels then hash
    /// every `f32` batch (benchmarks compare the two; the codes are the same).
    #[doc(hidden)]
    pub fn set_filtered(&self, on: bool) {
        self.float.borrow_mut().off = !on;
    }

    /// Caps the candidates kept per input (tests: a small cap sends inputs to the fallback).
    #[doc(hidden)]
    pub fn set_candidate_capacity(&self, cap: u32) {
        let mut f = self.float.borrow_mut();
        f.cap = Some(cap.max(1));
        f.batch = None;
    }

    /// The projection's rows as `u16` indices padded with `d` (the zero row) to a multiple of 4.
    fn float_offsets(&self) -> Result<(), GpuError> {
        let mut f = self.float.borrow_mut();
        if f.offs.is_some() {
            return Ok(());
        }
        let (s, d) = (self.params.s as usize, self.params.d as u16);
        let sp = s.next_multiple_of(4);
        let proj = self.projection()?;
        let mut offs = Vec::with_capacity(self.params.m as usize * sp);
        for row in proj.chunks(s) {
            offs.extend(row.iter().map(|&j| j as u16));
            offs.extend(std::iter::repeat_n(d, sp - s));
        }
        f.offs = Some((sp as u32, self.gpu.stream.clone_htod(&offs)?));
        Ok(())
    }

    /// Forgets the `u16` projection (after [`FlyGpu::set_projection`]).
    pub(super) fn reset_float_offsets(&self) {
        self.float.borrow_mut().offs = None;
    }

    /// Exact codes of `b` resident `f32` inputs (`xt`, transposed) into `out`; returns the
    /// kernels' milliseconds, those of the fallback included.
    pub(super) fn hash_filtered(&self, xt: &CudaSlice<f32>, b: u32, out: &mut Vec<Word>) -> Result<f64, GpuError> {
        self.float_offsets()?;
        let (g, p) = (self.gpu, self.params);
        let (n, cap) = (sample_rows(&p), self.capacity());
        let mut fb = self.float.borrow_mut();
        let fb = &mut *fb;
        let tiles = b.div_ceil(FLOAT_TILE_INPUTS);
        let bp = tiles * FLOAT_TILE_INPUTS;
        if !FilterBuffers::fits(&fb.batch, b, bp) {
            fb.batch = None;
            fb.batch = Some(FilterBuffers::new(g, &p, b, bp, n, cap)?);
        }
        let (sp, offs) = fb.offs.as_ref().expect("built above");
        let f = fb.batch.as_mut().expect("just set");
        let mut t = KernelTimer::default();
        let shared = k::float_tile_shared(p.d, *sp);
        let (xtp, offs) = (rd(g, xt), rd(g, offs));
        let a = k::FloatSample { d: p.d, b, sp: *sp, n, offs, xt: xtp, bp, keys: f.keys(g) };
        // SAFETY, here and below: the buffers are sized for this b (keys and intervals of bp
        // inputs, counts, codes and candidate lists of `cap` of b); `offs` holds
        // m·sp indices ≤ d, `xt` d·b floats; n ≤ m is a multiple of 16 (m is a multiple of 64).
        unsafe { launch_shaped(g, Some(&mut t), (tiles, k::FLOAT_HASH_THREADS, shared), a)? };
        f.interval(g, &mut t, &p, n)?;
        let (iv, codes, counts, cand) = f.pass_args(g);
        let a = k::FloatHash { m: p.m, d: p.d, b, sp: *sp, cap, offs, xt: xtp, iv, codes, counts, cand };
        unsafe { launch_shaped(g, Some(&mut t), (tiles, k::FLOAT_HASH_THREADS, shared), a)? };
        f.clear_fail(g)?;
        f.resolve(g, &mut t, &p, cap)?;
        g.download_into(&f.codes, out)?;
        let mut kernel_ms = t.total_ms()?;
        let list = f.failed(g)?;
        if !list.is_empty() {
            kernel_ms += self.hash_fallback(xt, b, &list, out)?;
        }
        Ok(kernel_ms)
    }

    /// The undecided inputs `list`, gathered and hashed by the unfiltered kernels; their codes
    /// replace theirs in `out`.
    fn hash_fallback(&self, xt: &CudaSlice<f32>, b: u32, list: &[u32], out: &mut [Word]) -> Result<f64, GpuError> {
        let (g, p) = (self.gpu, &self.params);
        let nf = list.len() as u32;
        let idx = g.stream.clone_htod(list)?;
        let mut sub = g.stream.alloc_zeros::<f32>(p.d as usize * nf as usize)?;
        let mut t = KernelTimer::default();
        let a = k::Gather { d: p.d, b, n: nf, list: rd(g, &idx), xt: rd(g, xt), out: wr(g, &mut sub) };
        // SAFETY: `idx` holds nf indices below b (written by `fly_float_resolve`); `sub` holds
        // d·nf floats.
        unsafe { launch(g, &mut t, p.d as u64 * nf as u64, a)? };
        let mut codes = Vec::new();
        let (ms, _) = self.hash_unfiltered(&sub, nf, FlyWta::Exact, &mut codes)?;
        patch_codes(out, list, &codes, p.code_words());
        Ok(t.total_ms()? + ms)
    }
}
