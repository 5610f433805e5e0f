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

    /// Shape, stored-message count and weight matrix, taken apart (see [`Network::from_parts`]).
    ///
    /// ```
    /// let (g, stored, w) = neurobits_core::Network::new(2, 3).unwrap().into_parts();
    /// assert_eq!((stored, w.len()), (0, g.weight_words()));
    /// ```
    pub fn into_parts(self) -> (Geometry, u64, Vec<Word>) {
        (self.geom, self.stored, self.w)
    }

    /// `W` as a dense `n × n` `f32` matrix with `γ` on the diagonal (Eq. 10), for the dense-float
    /// baselines; symmetric, so row- and column-major alike.
    ///
    /// ```
    /// let mut net = neurobits_core::Network::new(2, 2).unwrap();
    /// net.store(&[1, 0]).unwrap();
    /// // neurons (0,0) (0,1) (1,0) (1,1): edge (0,1)–(1,0)
    /// assert_eq!(net.dense_weights(2), [2., 0., 0., 0., 0., 2., 1., 0., 0., 1., 2., 0., 0., 0., 0., 2.]);
    /// ```
    pub fn dense_weights(&self, gamma: u32) -> Vec<f32> {
        let (g, n) = (&self.geom, self.geom.neurons());
        let l = g.neurons_per_cluster();
        let mut d = alloc::vec![0f32; n * n];
        for i in 0..n {
            let row = g.row(&self.w, i);
            for j in 0..n {
                let (wi, bit) = g.bit(j / l, j % l);
                d[i * n + j] = if i == j { gamma as f32 } else { (row[wi] & bit != 0) as u8 as f32 };
            }
        }
        d
    }
}
