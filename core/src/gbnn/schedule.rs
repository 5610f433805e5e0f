//! Each rule's schedule, written once: which update runs at step `t`, on which clusters, and when
//! a retrieval stops. The CPU loop ([`super::retrieve()`]), the GPU host loop and the FPGA model's
//! controller all drive a [`Schedule`], so they cannot disagree on iteration counts.

use super::rules::{
    active_clusters, bail_out_early_word, global_max, global_word, init_word, joint_first_word, joint_iter_word,
    sum_of_max_word, sum_of_max_wta_cluster, sum_of_sum_cluster,
};
use super::{Geometry, Mode, Params, Rule, Stats};
use crate::Word;

/// What one synchronous update computes.
///
/// ```
/// use neurobits_core::gbnn::{Rule, Update};
/// assert_eq!(Rule::Joint.update(0), Update::JointFirst);
/// assert_eq!(Rule::Joint.update(1), Update::JointIter);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum Update {
    /// Eq. 3–5 on every cluster; per cluster, since the maximum needs the whole cluster.
    SumOfSum = 0,
    /// Eq. 6–7 evaluated for every neuron of every cluster.
    SumOfMax = 1,
    /// Bail-out-early (Section IV-D) on every cluster, checked against every cluster.
    BailOutEarly = 2,
    /// Joint's first pass (Algorithm 2, lines 1–5): erased clusters become the AND of the known
    /// neurons' rows; known clusters keep their symbol.
    JointFirst = 3,
    /// A later joint update (lines 8–13): bail-out-early on the erased clusters, checked against
    /// the erased clusters; known clusters are frozen.
    JointIter = 4,
    /// Noisy sum-of-max: Eq. 6 (`γ = 1`) and a per-cluster winner-take-all ([`Mode::Noisy`]).
    SumOfMaxWta = 5,
    /// Sparse sum-of-sum: Eq. 3 and a global winner-take-all ([`Mode::Sparse`]).
    GlobalSumOfSum = 6,
    /// Sparse sum-of-max: Eq. 6 (`γ = 1`) and a global winner-take-all ([`Mode::Sparse`]).
    GlobalSumOfMax = 7,
}

impl Rule {
    /// The update that rule runs at step `t` (0-based).
    pub const fn update(self, t: u32) -> Update {
        match self {
            Rule::SumOfSum => Update::SumOfSum,
            Rule::SumOfMax => Update::SumOfMax,
            Rule::BailOutEarly => Update::BailOutEarly,
            Rule::Joint if t == 0 => Update::JointFirst,
            Rule::Joint => Update::JointIter,
        }
    }
}

impl Update {
    /// The update with discriminant `x` (the GPU kernels' encoding).
    ///
    /// ```
    /// use neurobits_core::gbnn::Update;
    /// assert_eq!(Update::from_u32(Update::JointIter as u32), Some(Update::JointIter));
    /// assert_eq!(Update::from_u32(9), None);
    /// ```
    pub const fn from_u32(x: u32) -> Option<Update> {
        match x {
            0 => Some(Update::SumOfSum),
            1 => Some(Update::SumOfMax),
            2 => Some(Update::BailOutEarly),
            3 => Some(Update::JointFirst),
            4 => Some(Update::JointIter),
            5 => Some(Update::SumOfMaxWta),
            6 => Some(Update::GlobalSumOfSum),
            7 => Some(Update::GlobalSumOfMax),
            _ => None,
        }
    }

    /// Word `wi` of cluster `c` of the next state, for every update but sum-of-sum, which needs
    /// the whole cluster (`erased`: [`Geometry::erased_mask`] of `symbols`).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, Update, ERASED, store::store_message};
    /// let g = Geometry::new(3, 3).unwrap();
    /// let mut w = [0u64; 27];
    /// store_message(&g, &mut w, &[1, 2, 0]);
    /// let p = [ERASED, 2, 0];
    /// let v = [0u64, 0b100, 0b001];
    /// assert_eq!(Update::JointFirst.word(&g, &w, &v, &p, 0b001, 0, 0), 0b010);
    /// ```
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn word(
        self,
        geom: &Geometry,
        w: &[Word],
        v: &[Word],
        symbols: &[u16],
        erased: u64,
        c: usize,
        wi: usize,
    ) -> Word {
        match self {
            Update::JointFirst => joint_first_word(geom, w, symbols, c, wi),
            _ => self.iteration_word(geom, w, v, erased, c, wi),
        }
    }

    /// [`Update::word`] for the updates that read the current state only (sum-of-max,
    /// bail-out-early, later joint updates); for the others, the current word. What a GPU
    /// thread per (probe, word) runs: joint's first pass needs the probe's known rows and has a
    /// kernel of its own.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, Update, store::store_message};
    /// let g = Geometry::new(3, 3).unwrap();
    /// let mut w = [0u64; 27];
    /// store_message(&g, &mut w, &[1, 2, 0]);
    /// let v = [0b111u64, 0b111, 0b001];
    /// assert_eq!(Update::SumOfMax.iteration_word(&g, &w, &v, 0b011, 0, 0), 0b010);
    /// ```
    #[inline(always)]
    pub fn iteration_word(self, geom: &Geometry, w: &[Word], v: &[Word], erased: u64, c: usize, wi: usize) -> Word {
        match self {
            Update::SumOfMax => sum_of_max_word(geom, w, v, c, wi),
            Update::BailOutEarly => bail_out_early_word(geom, w, v, c, wi, geom.all_clusters()),
            Update::JointIter => joint_iter_word(geom, w, v, erased, c, wi),
            // Not an iteration of the current state alone: nothing to compute per word here.
            Update::JointFirst
            | Update::SumOfSum
            | Update::SumOfMaxWta
            | Update::GlobalSumOfSum
            | Update::GlobalSumOfMax => v[c * geom.words_per_cluster() + wi],
        }
    }

    /// Cluster `c` of the next state into `out` (`⌈L/64⌉` words), for any update.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn cluster(
        self,
        geom: &Geometry,
        w: &[Word],
        v: &[Word],
        symbols: &[u16],
        erased: u64,
        params: &Params,
        c: usize,
        out: &mut [Word],
    ) {
        match self {
            Update::SumOfSum => sum_of_sum_cluster(geom, w, v, c, params.gamma, out),
            Update::SumOfMaxWta => sum_of_max_wta_cluster(geom, w, v, c, out),
            Update::GlobalSumOfSum | Update::GlobalSumOfMax => {
                // One cluster alone: the global maximum is computed here; `retrieve::step`
                // computes it once per update instead.
                let (active, som) = (active_clusters(geom, v), self == Update::GlobalSumOfMax);
                let max = global_max(geom, w, v, active, som, params.gamma);
                for (wi, o) in out.iter_mut().enumerate() {
                    *o = global_word(geom, w, v, active, som, params.gamma, c, wi, max);
                }
            }
            _ => {
                for (wi, o) in out.iter_mut().enumerate() {
                    *o = self.word(geom, w, v, symbols, erased, c, wi);
                }
            }
        }
    }
}

/// Word `wi` of cluster `c` of a probe's initial state under `rule`: the known symbol's bit; an
/// erased cluster starts all on (sum-of-max, bail-out-early) or all off (sum-of-sum, joint).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, ERASED, schedule::initial_word};
/// let g = Geometry::new(2, 3).unwrap();
/// assert_eq!(initial_word(&g, &[2, ERASED], Rule::SumOfMax, 1, 0), 0b111);
/// assert_eq!(initial_word(&g, &[2, ERASED], Rule::Joint, 1, 0), 0);
/// ```
#[inline(always)]
pub fn initial_word(geom: &Geometry, symbols: &[u16], rule: Rule, c: usize, wi: usize) -> Word {
    init_word(geom, symbols, c, wi, rule.erased_start_on())
}

/// Where a retrieval stands: the next step `t`, whether the last update changed anything, and
/// the rule's update limit.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Params, Rule, Schedule, Update};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut s = Schedule::new(Rule::Joint, &g, &Params::default());
/// assert_eq!(s.next_update(), Some(Update::JointFirst));
/// s.record(true);
/// assert_eq!(s.next_update(), Some(Update::JointIter));
/// s.record(false); // nothing changed: converged
/// assert_eq!(s.next_update(), None);
/// assert_eq!((s.stats().iterations, s.stats().converged), (2, true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Schedule {
    rule: Rule,
    mode: Mode,
    limit: u32,
    t: u32,
    converged: bool,
}

impl Schedule {
    /// A retrieval about to run its first update.
    pub const fn new(rule: Rule, geom: &Geometry, params: &Params) -> Self {
        Schedule::with_mode(rule, Mode::Erasure, geom, params)
    }

    /// A retrieval in `mode` about to run its first update. The noisy and sparse updates may turn
    /// neurons on as well as off, so, like sum-of-sum, they stop after `max_iter` updates.
    ///
    /// ```
    /// use neurobits_core::gbnn::{Geometry, Mode, Params, Rule, Schedule, Update};
    /// let g = Geometry::new(3, 3).unwrap();
    /// let p = Params { gamma: 1, max_iter: 1 };
    /// let mut s = Schedule::with_mode(Rule::SumOfMax, Mode::Sparse, &g, &p);
    /// assert_eq!(s.next_update(), Some(Update::GlobalSumOfMax));
    /// s.record(true);
    /// assert_eq!((s.next_update(), s.stats().converged), (None, false));
    /// ```
    pub const fn with_mode(rule: Rule, mode: Mode, geom: &Geometry, params: &Params) -> Self {
        let limit = match mode {
            Mode::Erasure => rule.iteration_limit(geom, params),
            Mode::Noisy | Mode::Sparse => params.max_iter,
        };
        Schedule { rule, mode, limit, t: 0, converged: false }
    }

    /// The update to run next, or `None` when the retrieval is over (the last update changed
    /// nothing, or the rule's limit is reached).
    #[inline]
    pub const fn next_update(&self) -> Option<Update> {
        if self.converged || self.t >= self.limit {
            None
        } else {
            Some(self.rule.update_in(self.mode, self.t))
        }
    }

    /// Records the update just run; `changed`: whether the next state differs from the current.
    #[inline]
    pub fn record(&mut self, changed: bool) {
        self.t += 1;
        self.converged = !changed;
    }

    /// Updates run so far, and whether the last one changed nothing.
    pub const fn stats(&self) -> Stats {
        Stats { iterations: self.t, converged: self.converged }
    }

    /// The next step's index `t`.
    pub const fn t(&self) -> u32 {
        self.t
    }
}
