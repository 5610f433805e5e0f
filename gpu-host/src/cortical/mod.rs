//! The cortical network resident on a GPU: weights, `Ω`, counters, flags and the training
//! images' bottom inputs are uploaded once; each step launches one of the paper's variants
//! ([`Variant`]); the state comes back only when asked for. A handle holds a whole network or
//! one worker's [`Part`] of a multi-device split (per-level launches, one per span): its inbox
//! is filled from the level below ([`CorticalGpu::set_inbox`]) and its top span's winners are
//! what it hands on ([`CorticalGpu::outbox`]).

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstream, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaSlice};
use neurobits_core::cortical::kernels::{Columns, Init, Queue, ALL_LEVELS};
use neurobits_core::cortical::{Geometry, Part};

use crate::launch::{block, launch_blocks, launch_blocks_on, rd, resident_blocks, wr, KernelTimer};
use crate::{Gpu, GpuError};
use neurobits_core::kernel::{DevMut, DevPtr, Kernel};

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
    /// (d) The per-level launches captured once into a CUDA graph and replayed: one launch per
    /// step, the step's `t` and image read on the device from a two-word clock the host writes
    /// first (synchronous schedule; whole networks and parts).
    Graph,
}

/// A downloaded state: weights `[hc][i][m]`, own-win counters, random-firing flags.
pub type State = (Vec<u16>, Vec<u32>, Vec<u8>);

/// A network and its training images on a GPU.
pub struct CorticalGpu<'g> {
    gpu: &'g Gpu,
    geo: Geometry,
    part: Part,
    max_blocks: Option<u32>,
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
    /// `[t, offset]` of the step a graph replay runs.
    clock: CudaSlice<u64>,
    /// The captured per-level step and the arguments it was captured with (learn, β, key).
    graph: Option<(CudaGraph, (bool, u32, u64))>,
}

/// What a step does: learning on or off, at learning step `t`, with the seed's firing key and learning rule.
#[derive(Clone, Copy, Debug)]
pub struct StepArgs {
    /// Learning and random firing on.
    pub learn: bool,
    /// Learning step.
    pub t: u64,
    /// `rng::key(seed, FIRE)`.
    pub fire_key: u64,
    /// The learning rule (`Rule`'s bits: the spec's with its β, or the competitive one).
    pub rule: neurobits_core::cortical::rules::Rule,
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
        self.cortical_part(geo, Part::whole(&geo), (w, omega, cnt, rf), images)
    }

    /// Uploads the state of `part` of a network of `geo`'s shape (hypercolumns in slot order)
    /// and the bottom inputs of the images (whole images: `geo.bottom_words()` each).
    pub fn cortical_part(
        &self,
        geo: Geometry,
        part: Part,
        (w, omega, cnt, rf): (&[u16], &[u32], &[u32], &[u8]),
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let per_m = part.columns() * geo.minicolumns();
        if w.len() != part.columns() * geo.weights_per_column()
            || omega.len() != per_m
            || cnt.len() != per_m
            || rf.len() != per_m
        {
            return Err(GpuError::Input("cortical state sizes do not match the part".into()));
        }
        self.ensure_fits(w.len() as u64 * 2 + per_m as u64 * 9)?;
        let st = &self.stream;
        let (w, omega, cnt, rf) = (st.clone_htod(w)?, st.clone_htod(omega)?, st.clone_htod(cnt)?, st.clone_htod(rf)?);
        self.cortical_with(geo, part, (w, omega, cnt, rf), images)
    }

    /// The untrained `part` of the network of `init_key` (`rng::key(seed, INIT)`), made on the
    /// device (no host copy of the weights: 2^20 − 1 hypercolumns of 128 minicolumns are 64 GiB).
    pub fn cortical_untrained(
        &self,
        geo: Geometry,
        part: Part,
        init_key: u64,
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let per_m = part.columns() * geo.minicolumns();
        let wp = geo.weights_per_column();
        self.ensure_fits((part.columns() * wp) as u64 * 2 + per_m as u64 * 9)?;
        let st = &self.stream;
        let mut w = st.alloc_zeros::<u16>(part.columns() * wp)?;
        for sp in part.spans() {
            let n = sp.count as u64 * wp as u64;
            let blocks = u32::try_from(n.div_ceil(block() as u64))
                .map_err(|_| GpuError::Input("too many weights for one launch".into()))?;
            let base = wr(self, &mut w);
            // SAFETY: within the allocation: the span's slots are part of it.
            let at = DevMut(unsafe { base.0.add(sp.slot as usize * wp) });
            let args = Init { m: geo.minicolumns() as u32, init_key, first: sp.id(&geo, 0) as u64, n, w: at };
            // SAFETY: `w` holds the span's `n` weights from slot `sp.slot`; one thread per weight.
            unsafe { launch_blocks(self, None, blocks, args) }?;
        }
        // Ω = 0 and counters 0 (weights below 0.2), random firing on.
        let state = (w, st.alloc_zeros(per_m)?, st.alloc_zeros(per_m)?, st.clone_htod(&vec![1u8; per_m])?);
        self.cortical_with(geo, part, state, images)
    }

    /// A handle around a state already on the device, with the images and the step buffers.
    fn cortical_with(
        &self,
        geo: Geometry,
        part: Part,
        (w, omega, cnt, rf): (CudaSlice<u16>, CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u8>),
        images: &[u64],
    ) -> Result<CorticalGpu<'_>, GpuError> {
        let n_hc = geo.hypercolumns();
        if n_hc >= u32::MAX as usize / 2 || images.is_empty() || !images.len().is_multiple_of(geo.bottom_words()) {
            return Err(GpuError::Input("cortical network or images of an unsupported size".into()));
        }
        let n_out = part.outputs();
        self.ensure_fits(images.len() as u64 * 8 + n_out as u64 * 12)?;
        let st = &self.stream;
        Ok(CorticalGpu {
            gpu: self,
            geo,
            part,
            max_blocks: None,
            w,
            omega,
            cnt,
            rf,
            images: st.clone_htod(images)?,
            cur: st.clone_htod(&vec![-1i32; n_out])?,
            prev: st.clone_htod(&vec![-1i32; n_out])?,
            flags: st.alloc_zeros(part.columns())?,
            head: st.alloc_zeros(1)?,
            epoch: 0,
            queue_blocks: resident_blocks::<Queue>(self)?,
            clock: st.alloc_zeros(2)?,
            graph: None,
        })
    }
}

impl CorticalGpu<'_> {
    /// One step on training image `image` (asynchronous; errors of the launch come back here,
    /// of the kernel at the next download).
    pub fn step(&mut self, image: usize, a: &StepArgs, variant: Variant) -> Result<(), GpuError> {
        self.step_timed(image, a, variant, None)
    }

    /// [`CorticalGpu::step`] with CUDA events around every launch (per level: the profiler's
    /// per-level costs; a graph's step is timed as one).
    pub fn step_timed(
        &mut self,
        image: usize,
        a: &StepArgs,
        variant: Variant,
        mut timer: Option<&mut KernelTimer>,
    ) -> Result<(), GpuError> {
        let geo = self.geo;
        let nw = geo.bottom_words();
        if (image + 1) * nw > self.images.len() {
            return Err(GpuError::Input(format!("image {image} was not uploaded")));
        }
        let gpu = self.gpu;
        // Every launch goes to the one stream, after the upload: the event guard can end here.
        let base = rd(gpu, &self.images);
        let x = DevPtr::from_addr(base.0 as u64 + (image * nw * 8) as u64);
        let whole = self.part == Part::whole(&geo);
        if !matches!(variant, Variant::PerLevel | Variant::Graph) && !whole {
            return Err(GpuError::Input(format!("{variant:?} runs whole networks only; parts run per level")));
        }
        let warps_per_block = block() as usize / 32;
        match variant {
            Variant::PerLevel => self.spans(gpu.stream.cu_stream(), (x, DevPtr::from_addr(0)), a, timer)?,
            Variant::Graph => {
                let key = (a.learn, a.rule.0, a.fire_key);
                if self.graph.as_ref().is_none_or(|g| g.1 != key) {
                    self.graph = None;
                    self.graph = Some((self.capture(base, a)?, key));
                }
                self.set_clock([a.t, (image * nw) as u64])?;
                let exec = self.graph.as_ref().map(|g| g.0.cu_graph_exec()).expect("captured above");
                // SAFETY: the graph's kernels address this handle's buffers, which live as long as
                // the graph (a field of the handle); it runs on the stream after the clock's copy.
                let launch = || Ok(unsafe { cudarc::driver::result::graph::launch(exec, gpu.stream.cu_stream()) }?);
                match timer.as_deref_mut() {
                    Some(t) => t.time(gpu, Kernel::CorticalColumns, launch)?,
                    None => launch()?,
                }
            }
            Variant::Pipelined => {
                // Reads `prev` (step t − 1), writes `cur`, then the two swap: `prev` is the latest.
                let args = Columns {
                    level: ALL_LEVELS,
                    count: geo.hypercolumns() as u32,
                    ..self.columns_args(a, x, rd(gpu, &self.prev), DevPtr::from_addr(0))
                };
                let blocks = (geo.hypercolumns().div_ceil(warps_per_block) as u32).min(self.block_cap());
                // SAFETY: the buffers hold the whole network; the warps stride over it.
                unsafe { launch_blocks(gpu, timer, blocks, args) }?;
                std::mem::swap(&mut self.cur, &mut self.prev);
                // A captured graph addresses `cur`, which has just moved.
                self.graph = None;
            }
            Variant::Queue => {
                self.epoch += 1;
                gpu.stream.memset_zeros(&mut self.head)?;
                let args = Queue {
                    levels: geo.levels() as u32,
                    m: geo.minicolumns() as u32,
                    learn: a.learn as u32,
                    rule: a.rule.0,
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

    /// The kernel arguments of a step over every level from `0` (`level` and `count` to set),
    /// reading winners from `src`.
    fn columns_args(&mut self, a: &StepArgs, x: DevPtr<u64>, src: DevPtr<i32>, clock: DevPtr<u64>) -> Columns {
        let (gpu, geo) = (self.gpu, self.geo);
        Columns {
            levels: geo.levels() as u32,
            m: geo.minicolumns() as u32,
            level: 0,
            first: 0,
            count: 0,
            slot: 0,
            out: 0,
            child: 0,
            learn: a.learn as u32,
            rule: a.rule.0,
            t: a.t,
            fire_key: a.fire_key,
            x,
            src,
            w: wr(gpu, &mut self.w),
            omega: wr(gpu, &mut self.omega),
            cnt: wr(gpu, &mut self.cnt),
            rf: wr(gpu, &mut self.rf),
            dst: wr(gpu, &mut self.cur),
            clock,
        }
    }

    /// Writes the clock a graph replay reads, in stream order. Two stream memory operations
    /// (`cuStreamWriteValue64_v2`): a copy from pageable host memory would first wait for the
    /// stream, so the host could not queue the next step while one runs; a device without
    /// stream memory operations gets that copy.
    fn set_clock(&mut self, clock: [u64; 2]) -> Result<(), GpuError> {
        let gpu = self.gpu;
        gpu.ctx.bind_to_thread()?;
        let at = wr(gpu, &mut self.clock).0 as u64;
        let written = clock.iter().enumerate().try_for_each(|(k, &v)| {
            // SAFETY: `at` is the clock's two u64 on this context; the write is queued on the
            // stream before the graph that reads it.
            unsafe { cudarc::driver::sys::cuStreamWriteValue64_v2(gpu.stream.cu_stream(), at + 8 * k as u64, v, 0) }
                .result()
        });
        if written.is_err() {
            gpu.stream.memcpy_htod(&clock, &mut self.clock)?;
        }
        Ok(())
    }

    /// Blocks a launch may use ([`CorticalGpu::set_max_blocks`]).
    fn block_cap(&self) -> u32 {
        self.max_blocks.unwrap_or(u32::MAX)
    }

    /// One launch per span of the part onto `stream`, bottom first (the synchronous schedule:
    /// each level reads the winners the one below wrote into `cur`); `x` or, with a clock, the
    /// images' base and the clock (see [`Columns::clock`]).
    fn spans(
        &mut self,
        stream: CUstream,
        (x, clock): (DevPtr<u64>, DevPtr<u64>),
        a: &StepArgs,
        mut timer: Option<&mut KernelTimer>,
    ) -> Result<(), GpuError> {
        let (gpu, geo, part) = (self.gpu, self.geo, self.part);
        let warps_per_block = block() as usize / 32;
        for sp in part.spans() {
            let args = Columns {
                level: sp.level,
                first: sp.id(&geo, 0) as u32,
                count: sp.count,
                slot: sp.slot,
                out: sp.out,
                child: sp.child,
                ..self.columns_args(a, x, rd(gpu, &self.cur), clock)
            };
            let blocks = ((sp.count as usize).div_ceil(warps_per_block) as u32).min(self.block_cap());
            // SAFETY: the buffers hold the part of `geo` the span addresses; the warps stride
            // over the span's hypercolumns; `stream` is the GPU's or one capturing for it.
            unsafe {
                match timer.as_deref_mut() {
                    Some(t) => launch_blocks(gpu, Some(t), blocks, args),
                    None => launch_blocks_on(gpu, stream, blocks, args),
                }
            }?;
        }
        Ok(())
    }

    /// The part's per-level step captured into a CUDA graph on a stream of its own (the GPU's
    /// default stream cannot be captured), reading `t` and the image from the clock.
    fn capture(&mut self, images: DevPtr<u64>, a: &StepArgs) -> Result<CudaGraph, GpuError> {
        let side = self.gpu.ctx.new_stream()?;
        side.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let clock = rd(self.gpu, &self.clock);
        let launched = self.spans(side.cu_stream(), (images, clock), a, None);
        // The capture ends whatever happened, so the stream is usable again.
        let graph = side.end_capture(CUgraphInstantiate_flags(0));
        launched?;
        graph?.ok_or_else(|| GpuError::Input("an empty cortical step graph".into()))
    }

    /// The winners of the last step (`-1` silent), per hypercolumn.
    pub fn winners(&self, variant: Variant) -> Result<Vec<i32>, GpuError> {
        let src = if variant == Variant::Pipelined { &self.prev } else { &self.cur };
        Ok(self.gpu.stream.clone_dtoh(src)?)
    }

    /// Waits for every launched step.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.gpu.synchronize()
    }

    /// Weights `[hc][i][m]`, own-win counters and random-firing flags.
    pub fn state(&self) -> Result<State, GpuError> {
        let st = &self.gpu.stream;
        Ok((st.clone_dtoh(&self.w)?, st.clone_dtoh(&self.cnt)?, st.clone_dtoh(&self.rf)?))
    }

    /// The part this handle holds.
    pub fn part(&self) -> &Part {
        &self.part
    }

    /// Caps every per-level launch at `blocks` blocks (the warps stride): a slower device made
    /// on purpose, without touching its settings, to test the profiler's proportional split.
    pub fn set_max_blocks(&mut self, blocks: Option<u32>) {
        self.max_blocks = blocks.map(|b| b.max(1));
        // A captured graph holds the old launch sizes.
        self.graph = None;
    }

    /// Copies the winners of the level below the part's first into its inbox (queued on the
    /// stream after the steps already launched).
    pub fn set_inbox(&mut self, winners: &[i32]) -> Result<(), GpuError> {
        if winners.len() != self.part.inbox() {
            return Err(GpuError::Input(format!("inbox of {} winners, got {}", self.part.inbox(), winners.len())));
        }
        if !winners.is_empty() {
            let mut dst = self.cur.slice_mut(0..winners.len());
            self.gpu.stream.memcpy_htod(winners, &mut dst)?;
        }
        Ok(())
    }

    /// The winners of the part's top span after the last step (waits for it).
    pub fn outbox(&self) -> Result<Vec<i32>, GpuError> {
        let top = self.part.top();
        let (o, n) = (top.out as usize, top.count as usize);
        Ok(self.gpu.stream.clone_dtoh(&self.cur.slice(o..o + n))?)
    }

    /// Persistent-grid blocks of the work queue on this device.
    pub fn queue_blocks(&self) -> u32 {
        self.queue_blocks
    }
}
