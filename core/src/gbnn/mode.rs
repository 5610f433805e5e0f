//! What a probe's symbols mean: erased (the seed paper), noisy (known but possibly wrong) or sparse
//! (messages with silent clusters), and which update each rule runs in each mode. Written once:
//! every target asks [`Rule::update_in`] and [`initial_word_in`].
//!
//! | mode | initial state | sum-of-sum | sum-of-max | bail-out-early, joint |
//! |---|---|---|---|---|
//! | [`Mode::Erasure`] | known symbol on; erased cluster all on (sum-of-max, bail-out-early) or off | Eq. 3–5 | Eq. 6–7 | as in the paper |
//! | [`Mode::Noisy`] | as erasure; no cluster is ever frozen | Eq. 3–5 on every cluster | Eq. 6 with `γ = 1`, per-cluster winner-take-all | refused: they rely on the known symbols being right |
//! | [`Mode::Sparse`] | given symbols on; erased and silent clusters off | Eq. 3, global winner-take-all | Eq. 6 with `γ = 1`, global winner-take-all | refused |

use super::rules::init_word;
use super::{Geometry, Rule, Update, ERASED};
use crate::{Error, Word};

/// The symbol value that marks a silent cluster (no active neuron) of a sparse message or probe.
/// Symbols are below [`super::MAX_NEURONS`] `= u16::MAX − 1`, so it is never a symbol.
///
/// ```
/// use neurobits_core::gbnn::{SILENT, ERASED, MAX_NEURONS};
/// assert!(SILENT != ERASED && SILENT as usize >= MAX_NEURONS);
/// ```
pub const SILENT: u16 = u16::MAX - 1;

/// How a probe's symbols are to be read.
///
/// ```
/// use neurobits_core::gbnn::Mode;
/// assert_eq!(Mode::from_name("noisy"), Some(Mode::Noisy));
/// assert_eq!(Mode::Sparse.name(), "sparse");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum Mode {
    /// Known symbols are right, erased ones ([`ERASED`]) unknown (Yao, Gripon & Rabbat 2013).
    #[default]
    Erasure = 0,
    /// Known symbols may be wrong (substituted): every cluster may change (Gripon & Berrou 2011).
    Noisy = 1,
    /// Messages activate some clusters only, the others are [`SILENT`]; retrieval by a global
    /// winner-take-all (Aliabadi, Berrou, Gripon & Jiang 2014).
    Sparse = 2,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Erasure, Mode::Noisy, Mode::Sparse];

    /// The mode's command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Erasure => "erasure",
            Mode::Noisy => "noisy",
            Mode::Sparse => "sparse",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The mode with discriminant `x`.
    pub const fn from_u32(x: u32) -> Option<Mode> {
        match x {
            0 => Some(Mode::Erasure),
            1 => Some(Mode::Noisy),
            2 => Some(Mode::Sparse),
            _ => None,
        }
    }
}

impl Rule {
    /// Whether the literature defines `self` in `mode` (bail-out-early and joint rely on the known
    /// symbols being right: Lemma 1 and Algorithm 2 only ever remove neurons).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Mode, Rule};
    /// assert!(Rule::SumOfMax.supports(Mode::Sparse) && !Rule::Joint.supports(Mode::Noisy));
    /// ```
    pub const fn supports(self, mode: Mode) -> bool {
        matches!((self, mode), (_, Mode::Erasure) | (Rule::SumOfSum | Rule::SumOfMax, _))
    }

    /// The update `self` runs at step `t` in `mode` (must be [`Rule::supports`]ed; otherwise the
    /// erasure update).
    ///
    /// ```
    /// use neurobits_core::gbnn::{Mode, Rule, Update};
    /// assert_eq!(Rule::SumOfMax.update_in(Mode::Noisy, 3), Update::SumOfMaxWta);
    /// assert_eq!(Rule::SumOfSum.update_in(Mode::Sparse, 0), Update::GlobalSumOfSum);
    /// assert_eq!(Rule::Joint.update_in(Mode::Erasure, 0), Update::JointFirst);
    /// ```
    pub const fn update_in(self, mode: Mode, t: u32) -> Update {
        match (mode, self) {
            (Mode::Noisy, Rule::SumOfMax) => Update::SumOfMaxWta,
            (Mode::Sparse, Rule::SumOfSum) => Update::GlobalSumOfSum,
            (Mode::Sparse, Rule::SumOfMax) => Update::GlobalSumOfMax,
            _ => self.update(t),
        }
    }
}

/// Word `wi` of cluster `c` of a probe's initial state in `mode`: the erasure rule's
/// ([`init_word`]) in the erasure and noisy modes; in the sparse mode only the given symbols
/// are on, since the decoder does not know which of the clusters without a symbol were active
/// (erased and silent clusters both start off).
///
/// ```
/// use neurobits_core::gbnn::{Geometry, Mode, Rule, ERASED, SILENT, mode::initial_word_in};
/// let g = Geometry::new(3, 3).unwrap();
/// let p = [2, ERASED, SILENT];
/// assert_eq!(initial_word_in(&g, &p, Rule::SumOfMax, Mode::Noisy, 1, 0), 0b111);
/// assert_eq!(initial_word_in(&g, &p, Rule::SumOfMax, Mode::Sparse, 1, 0), 0);
/// assert_eq!(initial_word_in(&g, &p, Rule::SumOfMax, Mode::Sparse, 0, 0), 0b100);
/// ```
#[inline(always)]
pub fn initial_word_in(geom: &Geometry, symbols: &[u16], rule: Rule, mode: Mode, c: usize, wi: usize) -> Word {
    match (mode, symbols[c]) {
        (Mode::Sparse, ERASED | SILENT) => 0,
        _ => init_word(geom, symbols, c, wi, rule.erased_start_on()),
    }
}

/// Checks a probe for `rule` in `mode`: `C` symbols in `[0, L)` or [`ERASED`]; [`SILENT`] in the
/// sparse mode only; and a rule the mode supports.
///
/// ```
/// use neurobits_core::{Error, gbnn::{Geometry, Mode, Rule, SILENT, mode::check_probe}};
/// let g = Geometry::new(2, 4).unwrap();
/// assert!(check_probe(&g, &[1, SILENT], Rule::SumOfSum, Mode::Sparse).is_ok());
/// assert_eq!(check_probe(&g, &[1, SILENT], Rule::SumOfSum, Mode::Noisy), Err(Error::Symbol(1, SILENT)));
/// assert!(check_probe(&g, &[1, 2], Rule::Joint, Mode::Noisy).is_err());
/// ```
#[inline]
pub fn check_probe(geom: &Geometry, symbols: &[u16], rule: Rule, mode: Mode) -> Result<(), Error> {
    if !rule.supports(mode) {
        return Err(Error::Unsupported(rule.name(), mode.name()));
    }
    if mode == Mode::Sparse {
        if symbols.len() != geom.clusters() {
            return Err(Error::Arity(geom.clusters(), symbols.len()));
        }
        for (c, &s) in symbols.iter().enumerate() {
            if s != SILENT && s != ERASED && s as usize >= geom.neurons_per_cluster() {
                return Err(Error::Symbol(c, s));
            }
        }
        return Ok(());
    }
    geom.check_symbols(symbols, true)
}

/// Checks a message to store: `C` symbols in `[0, L)` or [`SILENT`] (a sparse message).
///
/// ```
/// use neurobits_core::{Error, gbnn::{Geometry, ERASED, SILENT, mode::check_message}};
/// let g = Geometry::new(2, 4).unwrap();
/// assert!(check_message(&g, &[SILENT, 3]).is_ok());
/// assert_eq!(check_message(&g, &[ERASED, 3]), Err(Error::Symbol(0, ERASED)));
/// ```
pub fn check_message(geom: &Geometry, msg: &[u16]) -> Result<(), Error> {
    if msg.len() != geom.clusters() {
        return Err(Error::Arity(geom.clusters(), msg.len()));
    }
    for (c, &s) in msg.iter().enumerate() {
        if s != SILENT && s as usize >= geom.neurons_per_cluster() {
            return Err(Error::Symbol(c, s));
        }
    }
    Ok(())
}
