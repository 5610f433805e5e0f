//! The single-probe driver: initial state, synchronous updates until convergence.

use super::mode::{check_probe, initial_word_in};
use super::rules::{active_clusters, global_max, global_word};
use super::schedule::{Schedule, Update};
use super::{Geometry, Mode};
use crate::{Error, Word};

/// A retrieval rule (Yao, Gripon & Rabbat 2013).
///
/// ```
/// use neurobits_core::gbnn::Rule;
/// assert_eq!(Rule::from_name("joint"), Some(Rule::Joint));
/// assert_eq!(Rule::Joint.name(), "joint");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum Rule {
    /// Eq. 3–5; erased clusters start off; at most `max_iter` updates.
    SumOfSum = 0,
    /// Eq. 6–7 evaluated for every neuron; erased clusters start on.
    SumOfMax = 1,
    /// The sum-of-max update with early exit, skipping off neurons (Section IV-D).
    BailOutEarly = 2,
    /// One sum-of-sum pass keeping neurons with `C − e` signals, then bail-out-early on the
    /// erased clusters only (Algorithm 2).
    Joint = 3,
}

impl Rule {
    /// All rules, in the paper's order.
    pub const ALL: [Rule; 4] = [Rule::SumOfSum, Rule::SumOfMax, Rule::BailOutEarly, Rule::Joint];

    /// The rule's command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Rule::SumOfSum => "sum-of-sum",
            Rule::SumOfMax => "sum-of-max",
            Rule::BailOutEarly => "bail-out-early",
            Rule::Joint => "joint",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(s: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The rule with discriminant `x` (the GPU kernels' encoding).
    pub const fn from_u32(x: u32) -> Option<Rule> {
        match x {
            0 => Some(Rule::SumOfSum),
            1 => Some(Rule::SumOfMax),
            2 => Some(Rule::BailOutEarly),
            3 => Some(Rule::Joint),
            _ => None,
        }
    }

    /// Whether erased clusters start with all neurons on.
    pub const fn erased_start_on(self) -> bool {
        matches!(self, Rule::SumOfMax | Rule::BailOutEarly)
    }

    /// Whether the rule's updates never change a known cluster (joint: Algorithm 2 freezes them;
    /// `joint_first_word` and `joint_iter_word` return their initial words), so their final
    /// state is known without reading it.
    ///
    /// ```
    /// use neurobits_core::gbnn::Rule;
    /// assert!(Rule::Joint.keeps_known() && !Rule::SumOfMax.keeps_known());
    /// ```
    pub const fn keeps_known(self) -> bool {
        matches!(self, Rule::Joint)
    }

    /// Most updates before giving up: `max_iter` for sum-of-sum; the others only remove neurons,
    /// so they converge within `n + 1` updates (+1 for joint's first pass).
    pub const fn iteration_limit(self, geom: &Geometry, params: &Params) -> u32 {
        match self {
            Rule::SumOfSum => params.max_iter,
            _ => geom.neurons() as u32 + 2,
        }
    }
}

/// Retrieval parameters.
///
/// ```
/// let p = neurobits_core::gbnn::Params::default();
/// assert_eq!((p.gamma, p.max_iter), (1, 20));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Params {
    /// Sum-of-sum's reinforcement factor γ (the other rules are independent of any γ > 0).
    pub gamma: u32,
    /// Sum-of-sum's update limit `t_max`.
    pub max_iter: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { gamma: 1, max_iter: 20 }
    }
}

/// What a retrieval did.
///
/// ```
/// let s = neurobits_core::gbnn::Stats::default();
/// assert!(!s.converged && s.iterations == 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Updates evaluated, including the last one, which changed nothing if `converged`.
    pub iterations: u32,
    /// Whether an update changed nothing (false: sum-of-sum hit `max_iter`).
    pub converged: bool,
}

/// Writes the rule's initial state of a probe into `v`.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, ERASED, retrieve::init_state};
/// let g = Geometry::new(2, 3).unwrap();
/// let mut v = [0u64; 2];
/// init_state(&g, &[2, ERASED], Rule::SumOfMax, &mut v);
/// assert_eq!(v, [0b100, 0b111]);
/// ```
pub fn init_state(geom: &Geometry, symbols: &[u16], rule: Rule, v: &mut [Word]) {
    init_state_in(geom, symbols, rule, Mode::Erasure, v)
}

/// [`init_state`] in `mode` ([`initial_word_in`]).
pub fn init_state_in(geom: &Geometry, symbols: &[u16], rule: Rule, mode: Mode, v: &mut [Word]) {
    let wpc = geom.words_per_cluster();
    for c in 0..geom.clusters() {
        for wi in 0..wpc {
            v[c * wpc + wi] = initial_word_in(geom, symbols, rule, mode, c, wi);
        }
    }
}

/// One synchronous update `u` of a probe (the rule's [`Rule::update`] at step `t`): writes
/// `v^{t+1}` into `next` from `v = v^t`; returns whether anything changed.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, Params, ERASED, retrieve::{init_state, step}};
/// let g = Geometry::new(2, 3).unwrap();
/// let w = [0u64; 12]; // nothing stored: no neuron has support
/// let (mut v, mut next) = ([0u64; 2], [0u64; 2]);
/// init_state(&g, &[2, ERASED], Rule::SumOfMax, &mut v);
/// assert!(step(&g, &w, &[2, ERASED], Rule::SumOfMax.update(0), &Params::default(), &v, &mut next));
/// assert_eq!(next, [0, 0]);
/// ```
pub fn step(
    geom: &Geometry,
    w: &[Word],
    symbols: &[u16],
    u: Update,
    params: &Params,
    v: &[Word],
    next: &mut [Word],
) -> bool {
    let wpc = geom.words_per_cluster();
    if matches!(u, Update::GlobalSumOfSum | Update::GlobalSumOfMax) {
        // The global maximum once per update, then every word against it.
        let (active, som) = (active_clusters(geom, v), u == Update::GlobalSumOfMax);
        let max = global_max(geom, w, v, active, som, params.gamma);
        for c in 0..geom.clusters() {
            for wi in 0..wpc {
                next[c * wpc + wi] = global_word(geom, w, v, active, som, params.gamma, c, wi, max);
            }
        }
        return next[..geom.row_words()] != v[..geom.row_words()];
    }
    let erased = geom.erased_mask(symbols);
    for c in 0..geom.clusters() {
        u.cluster(geom, w, v, symbols, erased, params, c, &mut next[c * wpc..(c + 1) * wpc]);
    }
    next[..geom.row_words()] != v[..geom.row_words()]
}

/// Retrieves one probe (unchecked: `symbols` must pass [`Geometry::check_symbols`] and `state`,
/// `scratch` hold at least [`Geometry::row_words`] words). The final state is left in `state`.
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Rule, Params, ERASED, retrieve, store::store_message};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
/// let st = retrieve(&g, &w, &[ERASED, 2, 0], Rule::Joint, &Params::default(), &mut v, &mut s);
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// assert_eq!((st.iterations, st.converged), (2, true));
/// ```
pub fn retrieve(
    geom: &Geometry,
    w: &[Word],
    symbols: &[u16],
    rule: Rule,
    params: &Params,
    state: &mut [Word],
    scratch: &mut [Word],
) -> Stats {
    retrieve_in(geom, w, symbols, rule, Mode::Erasure, params, state, scratch)
}

/// [`retrieve`] in `mode` (unchecked: the probe must pass [`check_probe`]).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Mode, Rule, Params, retrieve_in, store::store_message};
/// let g = Geometry::new(3, 3).unwrap();
/// let mut w = [0u64; 27];
/// store_message(&g, &mut w, &[1, 2, 0]);
/// let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
/// // Cluster 0's symbol is wrong (0 instead of 1): the noisy sum-of-sum corrects it.
/// retrieve_in(&g, &w, &[0, 2, 0], Rule::SumOfSum, Mode::Noisy, &Params::default(), &mut v, &mut s);
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn retrieve_in(
    geom: &Geometry,
    w: &[Word],
    symbols: &[u16],
    rule: Rule,
    mode: Mode,
    params: &Params,
    state: &mut [Word],
    scratch: &mut [Word],
) -> Stats {
    let rw = geom.row_words();
    let (state, scratch) = (&mut state[..rw], &mut scratch[..rw]);
    init_state_in(geom, symbols, rule, mode, state);
    let mut sched = Schedule::with_mode(rule, mode, geom, params);
    while let Some(u) = sched.next_update() {
        let changed = step(geom, w, symbols, u, params, state, scratch);
        sched.record(changed);
        if changed {
            state.copy_from_slice(scratch);
        }
    }
    sched.stats()
}

/// [`retrieve`] with every precondition checked.
///
/// ```
/// use neurobits_core::{Error, gbnn::{Geometry, Rule, Params, retrieve::checked_retrieve}};
/// let g = Geometry::new(3, 3).unwrap();
/// let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
/// let r = checked_retrieve(&g, &[0; 27], &[0, 3, 0], Rule::Joint, &Params::default(), &mut v, &mut s);
/// assert_eq!(r, Err(Error::Symbol(1, 3)));
/// ```
pub fn checked_retrieve(
    geom: &Geometry,
    w: &[Word],
    symbols: &[u16],
    rule: Rule,
    params: &Params,
    state: &mut [Word],
    scratch: &mut [Word],
) -> Result<Stats, Error> {
    checked_retrieve_in(geom, w, symbols, rule, Mode::Erasure, params, state, scratch)
}

/// [`retrieve_in`] with every precondition checked ([`check_probe`]: bail-out-early and joint
/// are refused outside the erasure mode).
#[allow(clippy::too_many_arguments)]
pub fn checked_retrieve_in(
    geom: &Geometry,
    w: &[Word],
    symbols: &[u16],
    rule: Rule,
    mode: Mode,
    params: &Params,
    state: &mut [Word],
    scratch: &mut [Word],
) -> Result<Stats, Error> {
    check_probe(geom, symbols, rule, mode)?;
    let rw = geom.row_words();
    for len in [state.len(), scratch.len()] {
        if len < rw {
            return Err(Error::Capacity(rw, len));
        }
    }
    if w.len() < geom.weight_words() {
        return Err(Error::Capacity(geom.weight_words(), w.len()));
    }
    Ok(retrieve_in(geom, w, symbols, rule, mode, params, state, scratch))
}
