//! Argument structs of the GBNN kernels (see [`crate::kernel`]). Buffers, all row-major: `w`:
//! `n · rw` words of W; `probes`: `K · C` symbols; `cur`/`next`: two state buffers of `K · rw`
//! words (step `t` reads buffer `t % 2`, writes the other); `list`: the probes still iterating;
//! `changed`, `iters`, `converged`: one `u32` per probe.

use super::shard::Shard;
use crate::kernel::{kernel_struct, DevMut, DevPtr};
use crate::Word;

mod check;
mod select;
pub use check::ProbeCheck;
pub use select::{DenseSelect, StepGlobal, StepSos};

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

kernel_struct! {
    /// `gbnn_store`: one thread per (message, cluster).
    Store => GbnnStore {
        /// Network shape.
        shape: Shape,
        /// The clusters whose columns `w` holds (all of them on one device).
        shard: Shard,
        /// Messages.
        m: u32,
        /// `M · C` symbols.
        msgs: DevPtr<u16>,
        /// W's shard ([`Shard::words`]), ORed into.
        w: DevMut<Word>,
    }
}

kernel_struct! {
    /// `gbnn_init`: one thread per (probe, word); per probe when `lean`.
    Init => GbnnInit {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// The rule, as `Rule as u32` (its initial state).
        rule: u32,
        /// The mode, as `Mode as u32` (its initial state: [`super::mode::initial_word_in`]).
        mode: u32,
        /// 1: a rule that [keeps known clusters](super::Rule::keeps_known), with compact results
        /// (which decode known clusters from the probe): the host has zeroed `buf0` (erased
        /// clusters start off; nothing reads the known words, and the first update writes every
        /// erased word of `buf1`), or, for a sparse joint run (`JointFirst::sparse`), zeroed
        /// nothing (every reader goes through the occupancy), so only the per-probe fields are
        /// set, one thread per probe.
        lean: u32,
        /// `K · C` symbols.
        probes: DevPtr<u16>,
        /// First state buffer.
        buf0: DevMut<Word>,
        /// Second state buffer.
        buf1: DevMut<Word>,
        /// Active list, set to the identity.
        list: DevMut<u32>,
        /// Per-probe change flags, cleared.
        changed: DevMut<u32>,
        /// Per-probe iteration counts, cleared.
        iters: DevMut<u32>,
        /// Per-probe convergence flags, cleared.
        converged: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_step_word`: one per-word update (`Update::word`; all but sum-of-sum), one thread per (active probe, word).
    StepWord => GbnnStepWord {
        /// Network shape.
        shape: Shape,
        /// The update, as `Update as u32`.
        update: u32,
        /// Active probes.
        n_active: u32,
        /// W.
        w: DevPtr<Word>,
        /// Probe symbols.
        probes: DevPtr<u16>,
        /// Current states.
        cur: DevPtr<Word>,
        /// Next states.
        next: DevMut<Word>,
        /// Active probes' indices.
        list: DevPtr<u32>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_probe_index`: the joint rule's per-probe index, one thread per probe.
    ProbeIndex => GbnnProbeIndex {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// Probe symbols.
        probes: DevPtr<u16>,
        /// `K · C`: rows of the known neurons ([`super::rules::known_rows`]).
        rows: DevMut<u32>,
        /// `K`: known clusters.
        known: DevMut<u32>,
        /// `K · C`: erased clusters in order.
        erased_list: DevMut<u8>,
        /// `K`: erased-cluster masks.
        erased_mask: DevMut<u64>,
    }
}

/// The joint index (the output of `gbnn_probe_index`) as the later kernels use it; each kernel
/// takes its four pointers as separate fields.
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

kernel_struct! {
    /// `gbnn_joint_first`: one thread per (probe, owned erased slot `j < e_max`, word).
    JointFirst => GbnnJointFirst {
        /// Network shape.
        shape: Shape,
        /// The clusters whose columns `w` holds; only their erased slots get work.
        shard: Shard,
        /// Most erased clusters of any probe in the shard (all of them on one device).
        e_max: u32,
        /// Probes.
        k: u32,
        /// W.
        w: DevPtr<Word>,
        /// `K · C` known rows.
        rows: DevPtr<u32>,
        /// `K` known-cluster counts.
        known: DevPtr<u32>,
        /// `K · C` erased clusters.
        erased_list: DevPtr<u8>,
        /// `K` erased masks.
        erased_mask: DevPtr<u64>,
        /// Nonzero: write only the nonzero words of `next` (a sparse run: every later reader
        /// goes through the occupancy). The state before the first pass is zero in every erased
        /// word (the joint rule starts them off), so a probe changed iff some word is nonzero.
        sparse: u32,
        /// Next states.
        next: DevMut<Word>,
        /// Occupancy of the next states, ORed into (zeroed before): `K · C · ⌈⌈L/64⌉/64⌉` words
        /// (`rules::occupancy_part` per cluster).
        occ_next: DevMut<u64>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_step_joint`: a later joint update, one thread per (active probe, erased slot).
    StepJoint => GbnnStepJoint {
        /// Network shape.
        shape: Shape,
        /// The clusters whose columns `w` holds; only their erased slots get work.
        shard: Shard,
        /// Most erased clusters of any probe in the shard (all of them on one device).
        e_max: u32,
        /// Active probes.
        n_active: u32,
        /// W.
        w: DevPtr<Word>,
        /// `K · C` known rows.
        rows: DevPtr<u32>,
        /// `K` known-cluster counts.
        known: DevPtr<u32>,
        /// `K · C` erased clusters.
        erased_list: DevPtr<u8>,
        /// `K` erased masks.
        erased_mask: DevPtr<u64>,
        /// Occupancy of the current states.
        occ: DevPtr<u64>,
        /// Occupancy of the previous states; each slot's is replaced by its next state's (by the
        /// thread that read it), so no update needs an occupancy pass of its own.
        occ_prev: DevMut<u64>,
        /// Current states.
        cur: DevPtr<Word>,
        /// Next states.
        next: DevMut<Word>,
        /// Active probes' indices.
        list: DevPtr<u32>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_compact`: after an update, one thread per active probe.
    Compact => GbnnCompact {
        /// Active probes.
        n_active: u32,
        /// Active probes' indices.
        list_in: DevPtr<u32>,
        /// Per-probe change flags, cleared.
        changed: DevMut<u32>,
        /// Per-probe iteration counts.
        iters: DevMut<u32>,
        /// Per-probe convergence flags.
        converged: DevMut<u32>,
        /// Still-changing probes, compacted.
        list_out: DevMut<u32>,
        /// Their number (one `u32`, zeroed before).
        count: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_decode`: compact results, one thread per (probe, cluster).
    Decode => GbnnDecode {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// The rule, as `Rule as u32`: known clusters of a rule that keeps them decode from the
        /// probe (their words may not be in `states`; see `Init::lean`).
        rule: u32,
        /// `K · C` symbols.
        probes: DevPtr<u16>,
        /// Final states, `K` rows.
        states: DevPtr<Word>,
        /// Nonzero: erased clusters decode through `occ` (a sparse joint run, whose states hold
        /// only the words their occupancy marks).
        sparse: u32,
        /// With `sparse`: the final states' occupancy, `K · C · ⌈⌈L/64⌉/64⌉` words.
        occ: DevPtr<u64>,
        /// `K · C` [`super::decode::Decoded`] values.
        out: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_pack`: a shard's share of the state exchange after a joint update, one thread per
    /// (active probe, owned slot `jo < eo_max`): the `jo`-th owned erased cluster of `next` as a
    /// sparse record ([`super::shard::sparse_record`]) at `send[(act · eo_max + jo) · 3]`; a
    /// cluster with more nonzero words goes densely into the next free slot of `ovf`.
    Pack => GbnnPack {
        /// Network shape.
        shape: Shape,
        /// This device's clusters.
        shard: Shard,
        /// Most owned erased clusters of any probe on any shard.
        eo_max: u32,
        /// Active probes.
        n_active: u32,
        /// Per-probe erased masks.
        erased_mask: DevPtr<u64>,
        /// Active probes' indices (the same order on every device).
        list: DevPtr<u32>,
        /// Next states (this shard's erased clusters just computed).
        next: DevPtr<Word>,
        /// `n_active · eo_max` records of [`super::shard::RECORD_WORDS`] words.
        send: DevMut<Word>,
        /// Dense overflow: `n_active · eo_max` slots of `⌈L/64⌉` words.
        ovf: DevMut<Word>,
        /// Overflow slots used (one `u32`, zeroed before).
        ovf_count: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_unpack`: every shard's records (gathered rank-major) into `next`, one thread per
    /// (active probe, owned slot) and source rank in a loop; flags probes that changed.
    Unpack => GbnnUnpack {
        /// Network shape.
        shape: Shape,
        /// Shards (devices); shard `q` is [`Shard::of`]`(q, ranks)`.
        ranks: u32,
        /// As in [`Pack`].
        eo_max: u32,
        /// Active probes.
        n_active: u32,
        /// Overflow slots per rank in `recv_ovf` (the most any rank used).
        ovf_max: u32,
        /// Per-probe erased masks.
        erased_mask: DevPtr<u64>,
        /// Active probes' indices.
        list: DevPtr<u32>,
        /// `ranks` blocks of `n_active · eo_max` records.
        recv: DevPtr<Word>,
        /// `ranks` blocks of `ovf_max · ⌈L/64⌉` words.
        recv_ovf: DevPtr<Word>,
        /// Current states.
        cur: DevPtr<Word>,
        /// Next states, completed.
        next: DevMut<Word>,
        /// Occupancy of the next states, written for every unpacked cluster.
        occ_next: DevMut<u64>,
        /// Per-probe change flags.
        changed: DevMut<u32>,
    }
}

kernel_struct! {
    /// `gbnn_joint_warp`: a whole joint retrieval of a small network in one launch, a group of
    /// `lanes` lanes per probe (see [`JointWarp::fits`], [`JointWarp::lanes`]): the first pass,
    /// every later update of the core's `Schedule` and the decoding, with the probe's state in
    /// its share of the block's dynamic shared memory ([`JointWarp::shared_bytes`] per probe).
    /// Lane `i` of a group computes the erased words `2i, 2i + 1, 2(i + lanes), …` of the first
    /// pass (`i, i + lanes, …` when a cluster has an odd number of words; erased clusters in
    /// order, a cluster's words in order), so a group's loads of W rows are contiguous.
    JointWarp => GbnnJointWarp {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// Lanes per probe (8, 16 or 32): a warp runs `32 / lanes` probes side by side.
        lanes: u32,
        /// W (the whole matrix: one device).
        w: DevPtr<Word>,
        /// `K · C` symbols.
        probes: DevPtr<u16>,
        /// `K · C` [`super::decode::Decoded`] values.
        out: DevMut<u32>,
        /// Per-probe iteration counts.
        iters: DevMut<u32>,
        /// Per-probe convergence flags.
        converged: DevMut<u32>,
    }
}

impl JointWarp {
    /// Erased words of a probe at most: its occupancy is one `u128`.
    pub const MAX_WORDS: usize = 128;
    /// Warps per block of the launch.
    pub const WARPS: u32 = 4;

    /// Whether a batch whose probes erase at most `e_max` clusters can run a probe per group of
    /// lanes: at most [`JointWarp::MAX_WORDS`] erased words, a row of at most 256 words and one
    /// occupancy word per cluster.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::JointWarp};
    /// assert!(JointWarp::fits(&Geometry::new(16, 512).unwrap(), 15)); // 120 erased words
    /// assert!(!JointWarp::fits(&Geometry::new(32, 2048).unwrap(), 16)); // 512
    /// ```
    pub const fn fits(g: &super::Geometry, e_max: u32) -> bool {
        let wpc = g.words_per_cluster();
        e_max as usize * wpc <= Self::MAX_WORDS && g.row_words() <= 256 && wpc <= 64
    }

    /// Lanes per probe for a batch with at most `e_max` erased clusters (see [`JointWarp::fits`]):
    /// 8 when its erased words take at most eight rounds of eight lanes, else 16, else 32.
    /// Fewer lanes put several probes in a warp, so the later updates (a lane per nonzero word,
    /// a few per probe) and the per-probe bookkeeping keep more lanes busy.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::JointWarp};
    /// let g = Geometry::new(16, 512).unwrap();
    /// assert_eq!(JointWarp::lanes(&g, 7), 8);
    /// assert_eq!(JointWarp::lanes(&g, 15), 16);
    /// ```
    pub const fn lanes(g: &super::Geometry, e_max: u32) -> u32 {
        let words = e_max as usize * g.words_per_cluster();
        if words <= 64 {
            8
        } else if words <= 128 {
            16
        } else {
            32
        }
    }

    /// Shared bytes per probe: two state rows (`C · ⌈L/64⌉` words each), one occupancy word per
    /// cluster, the known rows and the erased clusters in order (`C` `u32`s each), and two
    /// 128-bit occupancies of the erased words.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::JointWarp};
    /// assert_eq!(JointWarp::shared_bytes(&Geometry::new(16, 512).unwrap()), 2 * 16 * 8 * 8 + 16 * (8 + 4 + 4) + 32);
    /// ```
    pub const fn shared_bytes(g: &super::Geometry) -> u32 {
        (2 * g.row_words() * 8 + g.clusters() * 16 + 32) as u32
    }

    /// The shared addresses of probe share `i` of a block whose dynamic shared memory starts at
    /// `base` (16-byte aligned parts, in the order of [`JointWarp::shared_bytes`]).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, kernels::JointWarp};
    /// let g = Geometry::new(16, 512).unwrap();
    /// let s = JointWarp::layout(&g, 1, 0);
    /// assert_eq!((s.states, s.occ, s.rows, s.erased, s.bits), ([2336, 3360], 4384, 4512, 4576, [4640, 4656]));
    /// ```
    pub const fn layout(g: &super::Geometry, i: u32, base: u32) -> WarpShared {
        let (row, c) = (g.row_words() as u32 * 8, g.clusters() as u32);
        let at = base + i * Self::shared_bytes(g);
        let bits = at + 2 * row + c * 16;
        WarpShared {
            states: [at, at + row],
            occ: at + 2 * row,
            rows: at + 2 * row + c * 8,
            erased: at + 2 * row + c * 12,
            bits: [bits, bits + 16],
        }
    }
}

/// A probe's share of `gbnn_joint_warp`'s shared memory, as 32-bit shared addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpShared {
    /// The two state rows (an update reads one and writes the other).
    pub states: [u32; 2],
    /// One occupancy word per cluster.
    pub occ: u32,
    /// The known rows ([`super::rules::known_rows`]), `C` `u32`s.
    pub rows: u32,
    /// The erased clusters in increasing order, `C` `u32`s.
    pub erased: u32,
    /// Two 128-bit occupancies of the erased words (an update reads one and clears bits of the
    /// other).
    pub bits: [u32; 2],
}
