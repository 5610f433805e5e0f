//! Resource estimate and cycle statistics. Formulas are in the crate docs.

use neurobits_core::gbnn::{Mode, Rule, Update};

/// Ceil of log base `b` of `x` (`x ≥ 1`), in integers.
const fn clog(b: u64, x: u64) -> u32 {
    let (mut n, mut p) = (0, 1u64);
    while p < x {
        p *= b;
        n += 1;
    }
    n
}

/// Hardware resources of a `C × L` circuit, from its structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Weight flip-flops: `C(C−1)/2 · L²`.
    pub weight_ffs: u64,
    /// Neuron state flip-flops: `C·L`.
    pub state_ffs: u64,
    /// Score width `b = ⌈log₂((C−1)·L + γ + 1)⌉`.
    pub score_bits: u32,
    /// Score flip-flops of the pipelined sum-of-sum: `C·L·b`.
    pub score_ffs: u64,
    /// Sum-of-sum: one adder tree per neuron, of `(C−1)·L` one-bit inputs.
    pub sos_adder_trees: u64,
    /// Full adders in them (about one per input).
    pub sos_full_adders: u64,
    /// Sum-of-sum WTA: `C·(L−1)` magnitude comparators of `b` bits.
    pub sos_comparators: u64,
    /// Sum-of-sum: `C·L` equality comparators against the cluster maximum.
    pub sos_equality: u64,
    /// Sum-of-max: `C·L·(C−1)·L` AND2 gates (weight ∧ state).
    pub som_and2: u64,
    /// Sum-of-max: `C·L·(C−1)` OR trees of `L` inputs.
    pub som_or_trees: u64,
    /// Sum-of-max: `C·L` AND trees of `C` inputs (self ∧ one signal per other cluster).
    pub som_and_trees: u64,
    /// Sum-of-max critical path in LUT6 levels: `⌈log₆(2L)⌉ + ⌈log₆ C⌉`.
    pub som_depth_luts: u32,
    /// Sum-of-sum score stage: `⌈log₂((C−1)·L)⌉` adder levels.
    pub sos_adder_levels: u32,
    /// Sum-of-sum WTA stage: `2·⌈log₂ L⌉` levels (compare, select).
    pub sos_wta_levels: u32,
}

/// The estimate for `clusters × neurons` with reinforcement `gamma`.
///
/// ```
/// let r = neurobits_fpga::resources(8, 50, 2);
/// assert_eq!(r.weight_ffs, 28 * 2500);
/// assert_eq!(r.score_bits, 9); // 7·50 + 2 = 352 < 512
/// // Any larger γ ranks as 7·50 + 1 does: 701 < 1024, a 10-bit register, not 33.
/// assert_eq!(neurobits_fpga::resources(8, 50, u32::MAX).score_bits, 10);
/// ```
pub const fn resources(clusters: usize, neurons: usize, gamma: u32) -> Resources {
    let (c, l) = (clusters as u64, neurons as u64);
    let n = c * l;
    let inputs = (c - 1) * l;
    // γ as every target scores with it (Geometry::effective_gamma): larger values rank alike.
    let gamma = if gamma as u64 > inputs + 1 { inputs + 1 } else { gamma as u64 };
    let score_bits = clog(2, inputs + gamma + 1);
    Resources {
        weight_ffs: c * (c - 1) / 2 * l * l,
        state_ffs: n,
        score_bits,
        score_ffs: n * score_bits as u64,
        sos_adder_trees: n,
        sos_full_adders: n * inputs,
        sos_comparators: c * (l - 1),
        sos_equality: n,
        som_and2: n * inputs,
        som_or_trees: n * (c - 1),
        som_and_trees: n,
        som_depth_luts: clog(6, 2 * l) + clog(6, c),
        sos_adder_levels: clog(2, inputs),
        sos_wta_levels: 2 * clog(2, l),
    }
}

/// Cycle statistics of a batch of retrievals with one rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct Report {
    /// Retrievals run.
    pub probes: u64,
    /// Sum of their cycles (load to unload).
    pub total_cycles: u64,
    /// The longest.
    pub max_cycles: u64,
    /// Sum of their updates.
    pub total_iterations: u64,
}

impl Report {
    /// Adds one retrieval.
    pub fn add(&mut self, cycles: u64, iterations: u32) {
        self.probes += 1;
        self.total_cycles += cycles;
        self.max_cycles = self.max_cycles.max(cycles);
        self.total_iterations += iterations as u64;
    }

    /// Mean cycles per retrieval.
    pub fn mean_cycles(&self) -> f64 {
        self.total_cycles as f64 / self.probes.max(1) as f64
    }

    /// Mean latency in seconds at `clock_hz`.
    pub fn mean_latency(&self, clock_hz: f64) -> f64 {
        self.mean_cycles() / clock_hz
    }

    /// Clocks per update of `rule`'s datapath.
    pub const fn cycles_per_update(rule: Rule) -> u64 {
        Self::cycles_per_update_in(rule, Mode::Erasure)
    }

    /// Clocks per update of `rule` in `mode`: 2 for a winner-take-all update (scores latched,
    /// then selected), 1 for the AND-of-ORs.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Mode, Rule};
    /// use neurobits_fpga::Report;
    /// assert_eq!(Report::cycles_per_update_in(Rule::SumOfMax, Mode::Erasure), 1);
    /// assert_eq!(Report::cycles_per_update_in(Rule::SumOfMax, Mode::Noisy), 2);
    /// ```
    pub const fn cycles_per_update_in(rule: Rule, mode: Mode) -> u64 {
        if two_clock(rule.update_in(mode, 1)) {
            2
        } else {
            1
        }
    }
}

/// Whether update `u` takes the two-clock winner-take-all datapath (Score, then Select).
pub(crate) const fn two_clock(u: Update) -> bool {
    matches!(u, Update::SumOfSum | Update::SumOfMaxWta | Update::GlobalSumOfSum | Update::GlobalSumOfMax)
}
