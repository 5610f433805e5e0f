use neurobits_core::gbnn::mode::{check_message, check_probe};
use neurobits_core::gbnn::retrieve::init_state_in;
use neurobits_core::gbnn::rules::{global_score, max_score, score, select_equal, select_max};
use neurobits_core::gbnn::store::store_message;
use neurobits_core::gbnn::{Geometry, Mode, Params, Rule, Schedule, Stats, Update};
use neurobits_core::Error;

use crate::Size;

/// The controller's state (the FSM register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for a probe.
    Idle,
    /// Next clock loads the probe's initial state.
    Load,
    /// First half of a winner-take-all update (sum-of-sum; the noisy and sparse modes): latch
    /// every neuron's score.
    Score,
    /// Second half: winner-take-all per cluster (or over the whole network, sparse mode) into
    /// the state.
    Select,
    /// One single-cycle update (sum-of-max, bail-out-early, joint).
    Update,
    /// Next clock copies the state to the output register.
    Unload,
    /// Output valid.
    Done,
}

/// A fully-parallel GBNN circuit of size `S`, stepped one clock at a time.
///
/// ```
/// use neurobits_fpga::{Circuit, S3x3};
/// use neurobits_core::gbnn::{Params, Rule, ERASED};
/// let mut c = Circuit::<S3x3>::new();
/// for m in [[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] { c.store(&m).unwrap(); }
/// let (stats, cycles) = c.retrieve(&[ERASED, ERASED, 0], Rule::SumOfMax, Params::default()).unwrap();
/// assert_eq!((stats.iterations, cycles), (1, 3)); // load, one update, unload
/// ```
#[derive(Clone)]
pub struct Circuit<S: Size> {
    geom: Geometry,
    w: S::Weights,
    v: S::State,
    out: S::State,
    scores: S::Scores,
    probe: S::Symbols,
    rule: Rule,
    mode: Mode,
    params: Params,
    phase: Phase,
    sched: Schedule,
    cycles: u64,
    stored: u64,
}

impl<S: Size> Default for Circuit<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Size> Circuit<S> {
    /// An empty circuit, all registers zero.
    pub fn new() -> Self {
        let geom = match Geometry::new(S::C, S::L) {
            Ok(g) => g,
            Err(_) => unreachable!("circuit_size! checks the bounds"),
        };
        let (w, v, scores, probe) = S::zero();
        Circuit {
            geom,
            w,
            v,
            out: v,
            scores,
            probe,
            rule: Rule::Joint,
            mode: Mode::Erasure,
            params: Params::default(),
            phase: Phase::Idle,
            sched: Schedule::new(Rule::Joint, &geom, &Params::default()),
            cycles: 0,
            stored: 0,
        }
    }

    /// The network's shape.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Stores one message: its whole clique is written in one clock (a sparse message's
    /// [`SILENT`](neurobits_core::gbnn::SILENT) clusters take no part in it).
    pub fn store(&mut self, msg: &[u16]) -> Result<(), Error> {
        check_message(&self.geom, msg)?;
        store_message(&self.geom, self.w.as_mut(), msg);
        self.stored += 1;
        self.cycles += 1;
        Ok(())
    }

    /// Latches a probe and the rule; the next clock loads it.
    pub fn start(&mut self, symbols: &[u16], rule: Rule, params: Params) -> Result<(), Error> {
        self.start_in(symbols, rule, Mode::Erasure, params)
    }

    /// [`Circuit::start`] in `mode` (the core's `check_probe`: a rule the mode defines, silent
    /// clusters in the sparse mode only).
    pub fn start_in(&mut self, symbols: &[u16], rule: Rule, mode: Mode, params: Params) -> Result<(), Error> {
        check_probe(&self.geom, symbols, rule, mode)?;
        self.probe.as_mut().copy_from_slice(symbols);
        self.rule = rule;
        self.mode = mode;
        self.params = params;
        self.phase = Phase::Load;
        Ok(())
    }

    /// One clock edge: every register takes the value its combinational logic computes from the
    /// current registers.
    pub fn tick(&mut self) {
        let g = self.geom;
        let wpc = g.words_per_cluster();
        self.cycles += 1;
        match self.phase {
            Phase::Idle | Phase::Done => {}
            Phase::Load => {
                init_state_in(&g, self.probe.as_ref(), self.rule, self.mode, self.v.as_mut());
                self.sched = Schedule::with_mode(self.rule, self.mode, &g, &self.params);
                self.phase = self.next_phase();
            }
            Phase::Score => {
                let (w, v, gamma, all) = (self.w.as_ref(), self.v.as_ref(), self.params.gamma, g.all_clusters());
                let u = self.pending();
                for (i, s) in self.scores.as_mut().iter_mut().enumerate() {
                    let (c, l) = (i / S::L, i % S::L);
                    // The score adders: sum-of-sum's popcount of W ∧ v, or (noisy sum-of-max) a
                    // C-input popcount of the sum-of-max datapath's per-cluster ORs.
                    *s = match u {
                        Update::SumOfSum => score(&g, w, v, all, c, l, gamma),
                        Update::SumOfMaxWta => max_score(&g, w, v, c, l),
                        Update::GlobalSumOfSum => global_score(&g, w, v, all, false, gamma, c, l),
                        Update::GlobalSumOfMax => global_score(&g, w, v, all, true, gamma, c, l),
                        _ => unreachable!("Score phase for a single-clock update"),
                    };
                }
                self.phase = Phase::Select;
            }
            Phase::Select => {
                let mut next = self.v;
                let scores = self.scores.as_ref();
                if matches!(self.pending(), Update::GlobalSumOfSum | Update::GlobalSumOfMax) {
                    // One more comparator tree over the clusters' maxima gives the global one;
                    // every neuron's equality comparator takes it instead of its cluster's.
                    let max = scores.iter().copied().max().unwrap_or(0);
                    for (k, o) in next.as_mut().iter_mut().enumerate() {
                        let sc = &scores[k / wpc * S::L..(k / wpc + 1) * S::L];
                        *o = select_equal(S::L, k % wpc, |l| sc[l], max);
                    }
                } else {
                    for c in 0..S::C {
                        let sc = &scores[c * S::L..(c + 1) * S::L];
                        select_max(S::L, |l| sc[l], &mut next.as_mut()[c * wpc..(c + 1) * wpc]);
                    }
                }
                self.latch_update(next);
            }
            Phase::Update => {
                let mut next = self.v;
                let (w, v, p) = (self.w.as_ref(), self.v.as_ref(), self.probe.as_ref());
                let erased = g.erased_mask(p);
                // The controller enters Update only when the schedule has an update to run.
                let u = self.pending();
                for (k, o) in next.as_mut().iter_mut().enumerate() {
                    *o = u.word(&g, w, v, p, erased, k / wpc, k % wpc);
                }
                self.latch_update(next);
            }
            Phase::Unload => {
                self.out = self.v;
                self.phase = Phase::Done;
            }
        }
    }

    /// The update the schedule runs next (the Score and Select phases exist only while one is
    /// pending).
    fn pending(&self) -> Update {
        match self.sched.next_update() {
            Some(u) => u,
            None => unreachable!("an update phase with no update pending"),
        }
    }

    /// The controller's choice after a load or an update: the core's [`Schedule`] says whether
    /// another update runs, and which datapath it uses.
    fn next_phase(&self) -> Phase {
        match self.sched.next_update() {
            None => Phase::Unload,
            Some(u) if crate::report::two_clock(u) => Phase::Score,
            Some(_) => Phase::Update,
        }
    }

    /// The end of an update: the "changed" comparator and the iteration counter (the schedule)
    /// pick the next phase.
    fn latch_update(&mut self, next: S::State) {
        let changed = next != self.v;
        self.v = next;
        self.sched.record(changed);
        self.phase = self.next_phase();
    }

    /// Runs a probe to completion; returns what the software drivers report and the clocks taken
    /// (load to unload).
    pub fn retrieve(&mut self, symbols: &[u16], rule: Rule, params: Params) -> Result<(Stats, u64), Error> {
        self.retrieve_in(symbols, rule, Mode::Erasure, params)
    }

    /// [`Circuit::retrieve`] in `mode`: noisy probes (no cluster frozen: the given symbols start
    /// on and may change) or sparse ones (a global winner-take-all).
    ///
    /// ```
    /// use neurobits_fpga::{Circuit, S3x3};
    /// use neurobits_core::gbnn::{Mode, Params, Rule};
    /// let mut c = Circuit::<S3x3>::new();
    /// c.store(&[1, 2, 0]).unwrap();
    /// // Cluster 0's symbol is wrong (0 instead of 1): the noisy sum-of-max corrects it.
    /// let (stats, cycles) = c.retrieve_in(&[0, 2, 0], Rule::SumOfMax, Mode::Noisy, Params::default()).unwrap();
    /// assert_eq!(c.output(), [0b010, 0b100, 0b001]);
    /// assert_eq!(cycles, 2 + 2 * stats.iterations as u64); // load, Score + Select per update, unload
    /// ```
    pub fn retrieve_in(
        &mut self,
        symbols: &[u16],
        rule: Rule,
        mode: Mode,
        params: Params,
    ) -> Result<(Stats, u64), Error> {
        self.start_in(symbols, rule, mode, params)?;
        let start = self.cycles;
        while self.phase != Phase::Done {
            self.tick();
        }
        Ok((self.sched.stats(), self.cycles - start))
    }

    /// The schedule's registers: updates run (the iteration counter) and whether the last one
    /// changed nothing.
    pub fn stats(&self) -> Stats {
        self.sched.stats()
    }

    /// The FSM register.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The neuron state register.
    pub fn state(&self) -> &[neurobits_core::Word] {
        self.v.as_ref()
    }

    /// The output register (valid in [`Phase::Done`]).
    pub fn output(&self) -> &[neurobits_core::Word] {
        self.out.as_ref()
    }

    /// The score registers of the sum-of-sum datapath.
    pub fn scores(&self) -> &[u32] {
        self.scores.as_ref()
    }

    /// Clocks since power-on (stores included).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Messages stored.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// The weight flip-flops.
    pub fn weights(&self) -> &[neurobits_core::Word] {
        self.w.as_ref()
    }
}
