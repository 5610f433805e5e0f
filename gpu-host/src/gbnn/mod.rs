//! The GBNN on the GPU: a network resident on the device ([`DeviceNetwork`]; [`GbnnGpu`] when
//! it owns its device) answering batches of probes, the same network over several GPUs — W
//! sharded by clusters ([`ShardedNetwork`], states exchanged over NCCL) or replicated
//! ([`ReplicatedNetwork`], probes split) — and the dense cuBLAS baseline ([`DenseGpu`]).

mod chunk;
mod dense;
mod kept;
mod pipeline;
mod replicated;
mod retrieve;
mod scan;
mod sharded;
mod slots;
mod warp;

use cudarc::driver::CudaSlice;
use neurobits_core::gbnn::kernels::{self as k, Shape};
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Geometry, Network, Rule};
use std::sync::{Arc, Mutex};

pub use dense::DenseGpu;
pub use replicated::ReplicatedNetwork;
pub use retrieve::{GpuBatch, GpuDecoded, GpuRun};
pub use sharded::{nccl_available, nccl_id, ShardedNetwork};

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// The device a network lives on: borrowed from the caller, or owned ([`GbnnGpu`]).
enum Held<'g> {
    Borrowed(&'g Gpu),
    Owned(Arc<Gpu>),
}

/// A network whose weight matrix (or a [`Shard`] of it) is resident on a GPU: W is uploaded
/// once and answers any number of batches ([`DeviceNetwork::retrieve_decoded`],
/// [`DeviceNetwork::retrieve`]).
pub struct DeviceNetwork<'g> {
    gpu: Held<'g>,
    geom: Geometry,
    stored: u64,
    shard: Shard,
    pub(crate) w: CudaSlice<u64>,
    chunk: Option<usize>,
    /// The last batch's chunk buffers and their rule, reused by the next batch.
    kept: Mutex<Option<(Rule, chunk::Chunk)>>,
    /// The other buffers kept between batches: page-locked statistics, the decoded results'
    /// device buffer, the last chunk size chosen ([`kept`]).
    more: Mutex<kept::Kept>,
    /// Lanes per probe of the one-launch path for compact joint results of a small network
    /// (`gbnn_joint_warp`; see [`DeviceNetwork::set_joint_warp`]).
    joint_warp: Option<u32>,
    /// Whether long batches of compact results move their data beside the kernels
    /// ([`DeviceNetwork::set_pipelined`]).
    pipelined: bool,
}

/// A [`DeviceNetwork`] that owns its GPU: the handle a long-lived process keeps, so that the
/// GPU start-up (context, PTX JIT, W upload) is paid once.
///
/// ```no_run
/// use neurobits_core::gbnn::{Network, Params, Rule, ERASED};
/// use neurobits_gpu_host::gbnn::GbnnGpu;
/// let mut net = Network::new(4, 256).unwrap();
/// net.store(&[1, 2, 3, 4]).unwrap();
/// let handle = GbnnGpu::open(0, &net)?; // W uploaded once
/// for batch in [[ERASED, 2, 3, 4], [1, ERASED, ERASED, 4]] {
///     let out = handle.retrieve_decoded(&batch, Rule::Joint, &Params::default())?;
///     assert_eq!(out.decoded.iter().map(|d| d.unique()).collect::<Vec<_>>(), [Some(1), Some(2), Some(3), Some(4)]);
/// }
/// # Ok::<(), neurobits_gpu_host::GpuError>(())
/// ```
pub type GbnnGpu = DeviceNetwork<'static>;

impl GbnnGpu {
    /// Opens GPU `ordinal` and uploads `net`'s W to it.
    pub fn open(ordinal: usize, net: &Network) -> Result<GbnnGpu, GpuError> {
        Self::upload_to(Arc::new(Gpu::open(ordinal)?), net)
    }

    /// Uploads `net`'s W to a GPU already open, keeping a share of it (the handle a model
    /// caches between calls).
    pub fn upload_to(gpu: Arc<Gpu>, net: &Network) -> Result<GbnnGpu, GpuError> {
        gpu.ensure_fits(net.weights().len() as u64 * 8)?;
        let w = gpu.stream.clone_htod(net.weights())?;
        let geom = *net.geometry();
        Ok(DeviceNetwork::new(Held::Owned(gpu), geom, net.stored(), Shard::all(&geom), w))
    }
}

impl Gpu {
    /// Copies `net`'s weight matrix to the device.
    pub fn upload(&self, net: &Network) -> Result<DeviceNetwork<'_>, GpuError> {
        self.ensure_fits(net.weights().len() as u64 * 8)?;
        let w = self.stream.clone_htod(net.weights())?;
        Ok(self.resident(*net.geometry(), net.stored(), Shard::all(net.geometry()), w))
    }

    /// Copies `shard`'s columns of `net`'s W to the device (see [`neurobits_core::gbnn::shard`]).
    pub fn upload_shard(&self, net: &Network, shard: Shard) -> Result<DeviceNetwork<'_>, GpuError> {
        let g = net.geometry();
        check_shard(g, shard)?;
        self.ensure_fits(shard.words(g) as u64 * 8)?;
        let mut part = vec![0; shard.words(g)];
        shard.columns_of(g, net.weights(), &mut part);
        let w = self.stream.clone_htod(&part)?;
        Ok(self.resident(*g, net.stored(), shard, w))
    }

    /// Stores `msgs` (`M·C` symbols) into a new network on the device.
    pub fn store(&self, geom: Geometry, msgs: &[u16]) -> Result<DeviceNetwork<'_>, GpuError> {
        self.store_shard(geom, Shard::all(&geom), msgs)
    }

    /// Stores `msgs` into `shard` of a new network on the device: every message, only the
    /// shard's columns.
    pub fn store_shard(&self, geom: Geometry, shard: Shard, msgs: &[u16]) -> Result<DeviceNetwork<'_>, GpuError> {
        check_shard(&geom, shard)?;
        let c = geom.clusters();
        if !msgs.len().is_multiple_of(c) {
            return Err(GpuError::Input(format!(
                "{} symbols is not a whole number of {c}-symbol messages",
                msgs.len()
            )));
        }
        for m in msgs.chunks(c) {
            geom.check_symbols(m, false).map_err(|e| GpuError::Input(e.to_string()))?;
        }
        let m = u32::try_from(msgs.len() / c).map_err(|_| GpuError::Input("more than 2^32 messages".into()))?;
        self.ensure_fits(shard.words(&geom) as u64 * 8 + msgs.len() as u64 * 2)?;
        let mut w = self.stream.alloc_zeros::<u64>(shard.words(&geom))?;
        let d_msgs = self.stream.clone_htod(msgs)?;
        let args = k::Store { shape: Shape::of(&geom), shard, m, msgs: rd(self, &d_msgs), w: wr(self, &mut w) };
        // SAFETY: `w` holds the shard and `d_msgs` the M·C checked symbols the M·C threads read.
        unsafe { launch(self, &mut KernelTimer::default(), m as u64 * c as u64, args)? };
        Ok(self.resident(geom, m as u64, shard, w))
    }

    fn resident(&self, geom: Geometry, stored: u64, shard: Shard, w: CudaSlice<u64>) -> DeviceNetwork<'_> {
        DeviceNetwork::new(Held::Borrowed(self), geom, stored, shard, w)
    }
}

fn check_shard(g: &Geometry, s: Shard) -> Result<(), GpuError> {
    if s.c0 >= s.c1 || s.c1 as usize > g.clusters() {
        return Err(GpuError::Input(format!("shard {}..{} of a {}-cluster network", s.c0, s.c1, g.clusters())));
    }
    Ok(())
}

impl<'g> DeviceNetwork<'g> {
    /// A resident W with the defaults every constructor shares: no chunk cap, no kept buffers,
    /// the one-launch joint path on with its own pick of lanes.
    fn new(gpu: Held<'g>, geom: Geometry, stored: u64, shard: Shard, w: CudaSlice<u64>) -> Self {
        DeviceNetwork {
            gpu,
            geom,
            stored,
            shard,
            w,
            chunk: None,
            kept: Mutex::new(None),
            more: Mutex::default(),
            joint_warp: Some(0),
            pipelined: true,
        }
    }
}

impl DeviceNetwork<'_> {
    pub(crate) fn gpu(&self) -> &Gpu {
        match &self.gpu {
            Held::Borrowed(g) => g,
            Held::Owned(g) => g,
        }
    }

    /// The network's shape.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The clusters whose columns this device holds (all of them unless sharded).
    pub fn shard(&self) -> Shard {
        self.shard
    }

    /// Caps the probes per chunk (default: what fits in half the free memory, at most 8 GiB of
    /// chunk buffers): batches stream through the device in chunks of this size.
    pub fn set_chunk_probes(&mut self, probes: usize) {
        self.chunk = Some(probes.max(1));
    }

    /// Whether a long batch of compact results (`retrieve_decoded`, at least twice 2^17 probes
    /// or more than one chunk) runs in chunks whose uploads and downloads go on a second stream
    /// beside the kernels (the default) or with the transfers before and after them. Both give
    /// the same results bit for bit; choosing is for comparing them.
    pub fn set_pipelined(&mut self, on: bool) {
        self.pipelined = on;
    }

    /// How compact joint results (`retrieve_decoded`) of a network small enough for it
    /// (`neurobits_core::gbnn::kernels::JointWarp::fits`) run: `Some(lanes)`, one launch with a
    /// group of `lanes` lanes per probe (8, 16 or 32; 0, the default, picks by
    /// `JointWarp::lanes`), or `None`, the per-update launches that every other case takes. All
    /// give the same results bit for bit; choosing is for comparing them.
    pub fn set_joint_warp(&mut self, lanes: Option<u32>) {
        self.joint_warp = lanes;
    }

    /// Copies the weight matrix back into a host [`Network`] (an unsharded one).
    pub fn download(&self) -> Result<Network, GpuError> {
        if self.shard != Shard::all(&self.geom) {
            return Err(GpuError::Input("a shard is not a whole network".into()));
        }
        let w = self.gpu().stream.clone_dtoh(&self.w)?;
        Network::from_parts(self.geom, self.stored, w).map_err(|e| GpuError::Input(e.to_string()))
    }

    /// Copies this device's words of W back (for tests of sharded storage).
    pub fn download_words(&self) -> Result<Vec<u64>, GpuError> {
        Ok(self.gpu().stream.clone_dtoh(&self.w)?)
    }
}
