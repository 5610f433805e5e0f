//! The cortical network resident on a GPU: weights, `Ω`, counters, flags and the training
//! images' bottom inputs are uploaded once; each step launches one of the paper's variants
//! ([`Variant`]); the state comes back only when asked for.

use cudarc::driver::CudaSlice;
use neurobits_core::cortical::kernels::{Columns, Init, Queue};
use neurobits_core::cortical::Geometry;

use crate::launch::{block, launch_blocks, rd, resident_blocks, wr};
use crate::{Gpu, GpuError};

/// How a step is mapped onto the GPU. All give the CPU's bits for the same schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// (a) One launch per level, bottom first (synchronous schedule; the paper's baseline).
    PerLevel,
    /// (b) One launch for every level, reading the double buffer of the step before (the
    /// pipelined schedule).
    Pipelined,
    /// (c) One launch of a persistent grid popping a work queue, ready flags between levels
    /// (synchronous schedule; the paper's Algorithm 1).
    Queue,
}

/// A downloaded state: weights `[hc][i][m]`, own-win counters, random-firing flags.
pub type State = (Vec<u16>, Vec<u32>, Vec<u8>);

/// A network and its training images on a GPU.
pub struct CorticalGpu<'g> {
    gpu: &'g Gpu,
    geo: Geometry,
    w: CudaSlice<u16>,
    omega: CudaSlice<u32>,
    cnt: CudaSlice<u32>,
    rf: CudaSlice<u8>,
    images: CudaSlice<u64>,
    cur: CudaSlice<i32>,
    prev: CudaSlice<i32>,
    flags: CudaSlice<u32>,
    head: CudaSlice<u32>,
    epoch: u32,
    queue_blocks: u32,
}

/// What a step does: learning on or off, at learning step `t`, with the seed's firing key and β.
#[derive(Clone, Copy, Debug)]
pub struct StepArgs {
    /// Learning and random firing on.
    pub learn: bool,
    /// Learning step.
    pub t: u64,
    /// `rng::key(seed, FIRE)`.
    pub fire_key: u64,
    /// LTD step β, Q0.16.
    pub ltd: u16,
}

impl Gpu {
    /// Uploads a network's state (`w` `[hc][i][m]`, `omega`/`cnt`/`rf` `[hc][m]`) and the bottom
    /// inputs of its images (`geo.bottom_words()` each).
    pub fn cortical(
        &self,
        geo: Geometry,
        w: &[u16],
        omega: &[u32],
        cnt: &[u32],
        rf: &[u8],
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let per_m = geo.hypercolumns() * geo.minicolumns();
        if w.len() != geo.weights() || omega.len() != per_m || cnt.len() != per_m || rf.len() != per_m {
            return Err(GpuError::Input("cortical state sizes do not match the geometry".into()));
        }
        self.ensure_fits(geo.weights() as u64 * 2 + per_m as u64 * 9)?;
        let st = &self.stream;
        let (w, omega, cnt, rf) = (st.clone_htod(w)?, st.clone_htod(omega)?, st.clone_htod(cnt)?, st.clone_htod(rf)?);
        self.cortical_with(geo, (w, omega, cnt, rf), images)
    }

    /// The untrained network of `init_key` (`rng::key(seed, INIT)`) made on the device (no host
    /// copy of the weights: 2^20 − 1 hypercolumns of 128 minicolumns are 64 GiB).
    pub fn cortical_untrained(
        &self,
        geo: Geometry,
        init_key: u64,
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let per_m = geo.hypercolumns() * geo.minicolumns();
        self.ensure_fits(geo.weights() as u64 * 2 + per_m as u64 * 9)?;
        let st = &self.stream;
        let mut w = st.alloc_zeros(geo.weights())?;
        let n = geo.weights() as u64;
        let blocks = u32::try_from(n.div_ceil(block() as u64))
            .map_err(|_| GpuError::Input("too many weights for one launch".into()))?;
        let args = Init { m: geo.minicolumns() as u32, init_key, n, w: wr(self, &mut w) };
        // SAFETY: `w` holds `n` weights; one thread per weight.
        unsafe { launch_blocks(self, None, blocks, args) }?;
        // Ω = 0 and counters 0 (weights below 0.2), random firing on.
        let state = (w, st.alloc_zeros(per_m)?, st.alloc_zeros(per_m)?, st.clone_htod(&vec![1u8; per_m])?);
        self.cortical_with(geo, state, images)
    }

    /// A handle around a state already on the device, with the images and the step buffers.
    fn cortical_with(
        &self,
        geo: Geometry,
        (w, omega, cnt, rf): (CudaSlice<u16>, CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u8>),
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let n_hc = geo.hypercolumns();
        if n_hc >= u32::MAX as usize / 2 || images.is_empty() || !images.len().is_multiple_of(geo.bottom_words()) {
            return Err(GpuError::Input("cortical network or images of an unsupported size".into()));
        }
        self.ensure_fits(images.len() as u64 * 8 + n_hc as u64 * 12)?;
        let st = &self.stream;
        Ok(CorticalGpu {
            gpu: self,
            geo,
            w,
            omega,
            cnt,
            rf,
            images: st.clone_htod(images)?,
            cur: st.clone_htod(&vec![-1i32; n_hc])?,
            prev: st.clone_htod(&vec![-1i32; n_hc])?,
            flags: st.alloc_zeros(n_hc)?,
            head: st.alloc_zeros(1)?,
            epoch: 0,
            queue_blocks: resident_blocks::<Queue>(self)?,
        })
    }
}

impl CorticalGpu<'_> {
    /// One step on training image `image` (asynchronous; errors of the launch come back here,
    /// of the kernel at the next download).
    pub fn step(&mut self, image: usize, a: &StepArgs, variant: Variant) -> Result<(), GpuError> {
        let geo = self.geo;
        let nw = geo.bottom_words();
        if (image + 1) * nw > self.images.len() {
            return Err(GpuError::Input(format!("image {image} was not uploaded")));
        }
        let gpu = self.gpu;
        // Every launch goes to the one stream, after the upload: the event guard can end here.
        let x = rd(gpu, &self.images);
        let x = neurobits_core::kernel::DevPtr::from_addr(x.0 as u64 + (image * nw * 8) as u64);
        let warps_per_block = block() as usize / 32;
        let columns = |first: usize, count: usize, src: neurobits_core::kernel::DevPtr<i32>, g: &mut Self| {
            let dst = wr(gpu, &mut g.cur);
            let args = Columns {
                levels: geo.levels() as u32,
                m: geo.minicolumns() as u32,
                first: first as u32,
                count: count as u32,
                learn: a.learn as u32,
                ltd: a.ltd as u32,
                t: a.t,
                fire_key: a.fire_key,
                x,
                src,
                w: wr(gpu, &mut g.w),
                omega: wr(gpu, &mut g.omega),
                cnt: wr(gpu, &mut g.cnt),
                rf: wr(gpu, &mut g.rf),
                dst,
            };
            // SAFETY: the buffers hold the network of `geo`; one warp per hypercolumn of the range.
            unsafe { launch_blocks(gpu, None, count.div_ceil(warps_per_block) as u32, args) }
        };
        match variant {
            Variant::PerLevel => {
                for l in 0..geo.levels() {
                    let src = rd(gpu, &self.cur);
                    columns(geo.offset(l), geo.level_len(l), src, self)?;
                }
            }
            Variant::Pipelined => {
                // Reads `prev` (step t − 1), writes `cur`, then the two swap: `prev` is the latest.
                let src = rd(gpu, &self.prev);
                columns(0, geo.hypercolumns(), src, self)?;
                std::mem::swap(&mut self.cur, &mut self.prev);
            }
            Variant::Queue => {
                self.epoch += 1;
                gpu.stream.memset_zeros(&mut self.head)?;
                let args = Queue {
                    levels: geo.levels() as u32,
                    m: geo.minicolumns() as u32,
                    learn: a.learn as u32,
                    ltd: a.ltd as u32,
                    t: a.t,
                    fire_key: a.fire_key,
                    epoch: self.epoch,
                    x,
                    w: wr(gpu, &mut self.w),
                    omega: wr(gpu, &mut self.omega),
                    cnt: wr(gpu, &mut self.cnt),
                    rf: wr(gpu, &mut self.rf),
                    winners: wr(gpu, &mut self.cur),
                    flags: wr(gpu, &mut self.flags),
                    head: wr(gpu, &mut self.head),
                };
                let blocks = self.queue_blocks.min(geo.hypercolumns().div_ceil(warps_per_block) as u32);
                // SAFETY: as above; a warp only waits on hypercolumns popped before its own,
                // which warps already running hold, so the spin-wait always ends.
                unsafe { launch_blocks(gpu, None, blocks, args) }?;
            }
        }
        Ok(())
    }

    /// The winners of the last step (`-1` silent), per hypercolumn.
    pub fn winners(&self, variant: Variant) -> Result<Vec<i32>, GpuError> {
        let src = if variant == Variant::Pipelined { &self.prev } else { &self.cur };
        Ok(self.gpu.stream.clone_dtoh(src)?)
    }

    /// Waits for every launched step.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        Ok(self.gpu.stream.synchronize()?)
    }

    /// Weights `[hc][i][m]`, own-win counters and random-firing flags.
    pub fn state(&self) -> Result<State, GpuError> {
        let st = &self.gpu.stream;
        Ok((st.clone_dtoh(&self.w)?, st.clone_dtoh(&self.cnt)?, st.clone_dtoh(&self.rf)?))
    }

    /// Persistent-grid blocks of the work queue on this device.
    pub fn queue_blocks(&self) -> u32 {
        self.queue_blocks
    }
}
