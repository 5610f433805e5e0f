//! Argument structs of the GBNN kernels (see [`crate::kernel`]). Buffers, all row-major: `w`:
//! `n · rw` words of W; `probes`: `K · C` symbols; `cur`/`next`: two state buffers of `K · rw`
//! words (step `t` reads buffer `t % 2`, writes the other); `list`: the probes still iterating;
//! `changed`, `iters`, `converged`: one `u32` per probe.

use crate::kernel::{kernel_args, DevMut, DevPtr};
use crate::Word;

/// A network's shape as the kernels take it (rebuilt into a [`super::Geometry`] on the device).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Clusters `C`.
    pub c: u32,
    /// Neurons per cluster `L`.
    pub l: u32,
}

impl Shape {
    /// The shape of `g`.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::Shape};
    /// assert_eq!(Shape::of(&Geometry::new(8, 128).unwrap()), Shape { c: 8, l: 128 });
    /// ```
    pub const fn of(g: &super::Geometry) -> Shape {
        Shape { c: g.clusters() as u32, l: g.neurons_per_cluster() as u32 }
    }
}

/// `gbnn_store`: one thread per (message, cluster).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Store {
    /// Network shape.
    pub shape: Shape,
    /// Messages.
    pub m: u32,
    /// `M · C` symbols.
    pub msgs: DevPtr<u16>,
    /// W, ORed into.
    pub w: DevMut<Word>,
}

/// `gbnn_init`: one thread per (probe, word).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Init {
    /// Network shape.
    pub shape: Shape,
    /// Probes.
    pub k: u32,
    /// The rule, as `Rule as u32` (its initial state).
    pub rule: u32,
    /// `K · C` symbols.
    pub probes: DevPtr<u16>,
    /// First state buffer.
    pub buf0: DevMut<Word>,
    /// Second state buffer.
    pub buf1: DevMut<Word>,
    /// Active list, set to the identity.
    pub list: DevMut<u32>,
    /// Per-probe change flags, cleared.
    pub changed: DevMut<u32>,
    /// Per-probe iteration counts, cleared.
    pub iters: DevMut<u32>,
    /// Per-probe convergence flags, cleared.
    pub converged: DevMut<u32>,
}

/// `gbnn_step_word`: one [`super::Update::per_word`] update, one thread per (active probe, word).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StepWord {
    /// Network shape.
    pub shape: Shape,
    /// The update, as `Update as u32`.
    pub update: u32,
    /// Active probes.
    pub n_active: u32,
    /// W.
    pub w: DevPtr<Word>,
    /// Probe symbols.
    pub probes: DevPtr<u16>,
    /// Current states.
    pub cur: DevPtr<Word>,
    /// Next states.
    pub next: DevMut<Word>,
    /// Active probes' indices.
    pub list: DevPtr<u32>,
    /// Per-probe change flags.
    pub changed: DevMut<u32>,
}

/// `gbnn_probe_index`: the joint rule's per-probe index, one thread per probe.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ProbeIndex {
    /// Network shape.
    pub shape: Shape,
    /// Probes.
    pub k: u32,
    /// Probe symbols.
    pub probes: DevPtr<u16>,
    /// `K · C`: rows of the known neurons ([`super::rules::known_rows`]).
    pub rows: DevMut<u32>,
    /// `K`: known clusters.
    pub known: DevMut<u32>,
    /// `K · C`: erased clusters in order.
    pub erased_list: DevMut<u8>,
    /// `K`: erased-cluster masks.
    pub erased_mask: DevMut<u64>,
}

/// The joint index as the later kernels read it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct JointIndex {
    /// `K · C` known rows.
    pub rows: DevPtr<u32>,
    /// `K` known-cluster counts.
    pub known: DevPtr<u32>,
    /// `K · C` erased clusters.
    pub erased_list: DevPtr<u8>,
    /// `K` erased masks.
    pub erased_mask: DevPtr<u64>,
}

/// `gbnn_joint_first`: one thread per (probe, erased slot `j < e_max`, word).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct JointFirst {
    /// Network shape.
    pub shape: Shape,
    /// Most erased clusters of any probe.
    pub e_max: u32,
    /// Probes.
    pub k: u32,
    /// W.
    pub w: DevPtr<Word>,
    /// The probes' index.
    pub ix: JointIndex,
    /// Current states.
    pub cur: DevPtr<Word>,
    /// Next states.
    pub next: DevMut<Word>,
    /// Per-probe change flags.
    pub changed: DevMut<u32>,
}

/// `gbnn_occupancy`: one thread per (active probe, erased slot).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Occupancy {
    /// Network shape.
    pub shape: Shape,
    /// Most erased clusters of any probe.
    pub e_max: u32,
    /// Active probes.
    pub n_active: u32,
    /// The probes' index.
    pub ix: JointIndex,
    /// Current states.
    pub cur: DevPtr<Word>,
    /// Active probes' indices.
    pub list: DevPtr<u32>,
    /// `K · C` occupancy words, written.
    pub occ: DevMut<u64>,
}

/// `gbnn_step_joint`: a later joint update, one thread per (active probe, erased slot).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StepJoint {
    /// Network shape.
    pub shape: Shape,
    /// Most erased clusters of any probe.
    pub e_max: u32,
    /// Active probes.
    pub n_active: u32,
    /// W.
    pub w: DevPtr<Word>,
    /// The probes' index.
    pub ix: JointIndex,
    /// Occupancy of the current states.
    pub occ: DevPtr<u64>,
    /// Occupancy of the previous states.
    pub occ_prev: DevPtr<u64>,
    /// Current states.
    pub cur: DevPtr<Word>,
    /// Next states.
    pub next: DevMut<Word>,
    /// Active probes' indices.
    pub list: DevPtr<u32>,
    /// Per-probe change flags.
    pub changed: DevMut<u32>,
}

/// `gbnn_step_sos`: one sum-of-sum update, one thread per (active probe, cluster).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StepSos {
    /// Network shape.
    pub shape: Shape,
    /// γ.
    pub gamma: u32,
    /// Active probes.
    pub n_active: u32,
    /// W.
    pub w: DevPtr<Word>,
    /// Current states.
    pub cur: DevPtr<Word>,
    /// Next states.
    pub next: DevMut<Word>,
    /// Active probes' indices.
    pub list: DevPtr<u32>,
    /// Per-probe change flags.
    pub changed: DevMut<u32>,
}

/// `gbnn_compact`: after an update, one thread per active probe.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Compact {
    /// Active probes.
    pub n_active: u32,
    /// Active probes' indices.
    pub list_in: DevPtr<u32>,
    /// Per-probe change flags, cleared.
    pub changed: DevMut<u32>,
    /// Per-probe iteration counts.
    pub iters: DevMut<u32>,
    /// Per-probe convergence flags.
    pub converged: DevMut<u32>,
    /// Still-changing probes, compacted.
    pub list_out: DevMut<u32>,
    /// Their number (one `u32`, zeroed before).
    pub count: DevMut<u32>,
}

/// `gbnn_dense_select`: the paper's method after cuBLAS, one thread per (probe, cluster).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DenseSelect {
    /// Network shape.
    pub shape: Shape,
    /// Probes.
    pub k: u32,
    /// Scores `S = W·V`, column-major `n × K`.
    pub s: DevPtr<f32>,
    /// `V`, rewritten.
    pub v: DevMut<f32>,
    /// Bit-packed states, rewritten.
    pub states: DevMut<Word>,
    /// One change flag for the batch.
    pub changed: DevMut<u32>,
}

kernel_args! {
    Store => GbnnStore,
    Init => GbnnInit,
    StepWord => GbnnStepWord,
    ProbeIndex => GbnnProbeIndex,
    JointFirst => GbnnJointFirst,
    Occupancy => GbnnOccupancy,
    StepJoint => GbnnStepJoint,
    StepSos => GbnnStepSos,
    Compact => GbnnCompact,
    DenseSelect => GbnnDenseSelect,
}
