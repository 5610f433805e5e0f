use crate::retrieve::checked_retrieve;
use crate::store::store_message;
use crate::{Error, Geometry, Params, Rule, Stats, Word};

/// A GBNN whose weights live in a fixed array of `WORDS` words: no heap, for microcontrollers.
/// Size it with [`crate::weight_words`].
///
/// ```
/// use neurobits_core::{FixedNetwork, weight_words};
/// let mut net = FixedNetwork::<{ weight_words(8, 50) }>::new(8, 50).unwrap();
/// net.store(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
/// assert_eq!(net.stored(), 1);
/// assert!(net.store(&[50, 0, 0, 0, 0, 0, 0, 0]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct FixedNetwork<const WORDS: usize> {
    geom: Geometry,
    stored: u64,
    w: [Word; WORDS],
}

impl<const WORDS: usize> FixedNetwork<WORDS> {
    /// An empty network of `clusters × neurons`; fails if it needs more than `WORDS` words.
    pub fn new(clusters: usize, neurons: usize) -> Result<Self, Error> {
        let geom = Geometry::new(clusters, neurons)?;
        if geom.weight_words() > WORDS {
            return Err(Error::Capacity(geom.weight_words(), WORDS));
        }
        Ok(FixedNetwork { geom, stored: 0, w: [0; WORDS] })
    }

    /// Stores a message (`C` symbols in `[0, L)`).
    pub fn store(&mut self, msg: &[u16]) -> Result<(), Error> {
        self.geom.check_symbols(msg, false)?;
        store_message(&self.geom, &mut self.w, msg);
        self.stored += 1;
        Ok(())
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

    /// The used part of the weight array.
    pub fn weights(&self) -> &[Word] {
        &self.w[..self.geom.weight_words()]
    }
}
