use alloc::vec::Vec;

use crate::retrieve::checked_retrieve;
use crate::store::store_message;
use crate::workload::message;
use crate::{Error, Geometry, Params, Rule, Stats, Word};

/// A heap-backed GBNN (feature `alloc`).
///
/// ```
/// use neurobits_core::{Network, Rule, Params, ERASED};
/// let mut net = Network::new(3, 3).unwrap();
/// net.store(&[1, 2, 0]).unwrap();
/// let (mut v, mut s) = (vec![0; 3], vec![0; 3]);
/// net.retrieve(&[ERASED, 2, 0], Rule::SumOfMax, Params::default(), &mut v, &mut s).unwrap();
/// assert_eq!(v, [0b010, 0b100, 0b001]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    geom: Geometry,
    stored: u64,
    w: Vec<Word>,
}

impl Network {
    /// An empty network; reports (rather than aborts on) a weight matrix that cannot be allocated.
    pub fn new(clusters: usize, neurons: usize) -> Result<Self, Error> {
        let geom = Geometry::new(clusters, neurons)?;
        let mut w = Vec::new();
        w.try_reserve_exact(geom.weight_words()).map_err(|_| Error::TooLarge)?;
        w.resize(geom.weight_words(), 0);
        Ok(Network { geom, stored: 0, w })
    }

    /// A network from its parts (e.g. read from a file).
    pub fn from_parts(geom: Geometry, stored: u64, w: Vec<Word>) -> Result<Self, Error> {
        if w.len() != geom.weight_words() {
            return Err(Error::Capacity(geom.weight_words(), w.len()));
        }
        Ok(Network { geom, stored, w })
    }

    /// Stores a message (`C` symbols in `[0, L)`).
    pub fn store(&mut self, msg: &[u16]) -> Result<(), Error> {
        self.geom.check_symbols(msg, false)?;
        store_message(&self.geom, &mut self.w, msg);
        self.stored += 1;
        Ok(())
    }

    /// Stores messages `0..count` of the random stream `seed` ([`crate::workload::message`]).
    pub fn store_random(&mut self, seed: u64, count: u64) {
        let mut m = alloc::vec![0u16; self.geom.clusters()];
        for k in 0..count {
            message(&self.geom, seed, k, &mut m);
            store_message(&self.geom, &mut self.w, &m);
        }
        self.stored += count;
    }

    /// Retrieves a probe into `state` (scratch: a second buffer of the same size).
    pub fn retrieve(
        &self,
        symbols: &[u16],
        rule: Rule,
        params: Params,
        state: &mut [Word],
        scratch: &mut [Word],
    ) -> Result<Stats, Error> {
        checked_retrieve(&self.geom, &self.w, symbols, rule, &params, state, scratch)
    }

    /// The network's shape.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Messages stored so far.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// The weight matrix, row-major.
    pub fn weights(&self) -> &[Word] {
        &self.w
    }
}
