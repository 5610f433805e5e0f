//! # neurobits-fpga
//!
//! A clock-cycle model of a fully-parallel GBNN circuit of at most 400 neurons, after the first
//! hardware GBNN (Jarollahi, Onizawa, Gripon & Gross, ISCAS 2012) and its winner-take-all-free
//! sum-of-max successor (J. Signal Processing Systems 2014). `no_std`, no heap: the size is a
//! type ([`circuit_size!`]) whose `C·L ≤ 400` is checked at compile time.
//!
//! The model is register-transfer level: [`Circuit::tick`] latches every register from
//! combinational logic evaluated on the current registers, and that logic *is* the core's step
//! functions — `score` and `select_max` for the sum-of-sum adders and comparator trees,
//! `sum_of_max_word` for the AND-of-ORs, `joint_first_word` and `joint_iter_word` for the joint
//! rule — so decoded states equal the CPU's and GPU's bit for bit.
//!
//! ## Datapaths and cycles
//! | phase | cycles | registers latched |
//! |---|---|---|
//! | store one message | 1 | the `C(C−1)` weight bits of its clique |
//! | load a probe | 1 | state ← initial state of the rule |
//! | sum-of-sum iteration | 2 | scores ← per-neuron adders; state ← per-cluster WTA |
//! | sum-of-max / bail-out-early iteration | 1 | state ← per-neuron AND over per-cluster ORs |
//! | joint first pass, then each iteration | 1 each | state ← AND of known rows / AND-of-ORs on erased clusters |
//! | unload | 1 | output register ← state |
//!
//! Each update's "changed" comparator decides between another iteration and unloading, as the
//! software drivers do, so iteration counts match them too. Bail-out-early is a software
//! schedule; in hardware it is the sum-of-max datapath (Theorem 1), modelled with its own core
//! function to show the equality.
//!
//! ## Resource estimate (see [`resources`])
//! * weight flip-flops: `C(C−1)/2 · L²` (W is symmetric, no intra-cluster edges)
//! * state flip-flops `n = C·L`; score registers `n · b` with `b = ⌈log₂((C−1)·L + γ + 1)⌉`
//! * sum-of-sum: `n` adder trees of `(C−1)·L` one-bit inputs (about `(C−1)·L` full adders each),
//!   `C` comparator trees of `L − 1` `b`-bit comparators and `n` `b`-bit equality comparators
//! * sum-of-max: `n·(C−1)·L` AND2 gates, `n·(C−1)` OR trees of `L` inputs, `n` AND trees of `C` inputs
//! * critical path, in 6-input LUT levels: sum-of-max `⌈log₆(2L)⌉ + ⌈log₆ C⌉`; sum-of-sum
//!   (per stage, the longer of the two) adder tree `⌈log₂((C−1)·L)⌉` carry-chain levels, WTA
//!   `⌈log₂ L⌉ · 2` levels (compare + select)
//!
//! These are formula counts. The circuit also exists as RTL (`fpga-model/rtl/gbnn_circuit.sv`
//! with its `gbnn_pair` and `gbnn_cluster` instances, replayed against this model bit for bit under Verilator by `make fpga-verilate`), whose
//! measured Yosys/nextpnr figures (`make fpga-synth`, `results/fpga/synth.json`) the CLI prints
//! beside these; [`Report`] takes any clock.

#![no_std]
#![warn(missing_docs)]

mod circuit;
mod report;
mod size;

pub use circuit::{Circuit, Phase};
pub use report::{resources, Report, Resources};
#[doc(hidden)]
pub use size::{__Word, __core};
pub use size::{S16x25, S3x3, S4x100, S8x50, Size, MAX_NEURONS};
