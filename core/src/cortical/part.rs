//! The part of a network one worker holds (spec §6, P-1): a run of levels, each a contiguous
//! range of its hypercolumns ([`Span`]). A worker stores only its own hypercolumns, in span order
//! (`slot`), and keeps their winners after an *inbox* of the winners it receives from the level
//! below its first (`out`). The whole network is the one part whose slots are the hypercolumn ids,
//! so the CPU loop, the rayon step and the GPU's per-level launches all walk spans.

use super::column::{bottom_input, parent_input, Input};
use super::geometry::{Geometry, MAX_LEVELS};
use crate::Error;

/// Hypercolumns `first … first + count − 1` of level `level` on one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Span {
    /// Level (0 = bottom).
    pub level: u32,
    /// Index in the level of the first hypercolumn.
    pub first: u32,
    /// Hypercolumns.
    pub count: u32,
    /// Where the first one's state is stored on the worker.
    pub slot: u32,
    /// Where the first one's winner is written in the worker's winner buffer.
    pub out: u32,
    /// Level 0: the first one's input in the bottom words (in units of one hypercolumn's input).
    /// Above: its left child's winner in the worker's winner buffer (children are adjacent).
    pub child: u32,
}

impl Span {
    /// Network-wide id of the span's hypercolumn `k` (the random-firing counter uses it, so a
    /// hypercolumn behaves the same wherever it runs: P-4).
    #[inline(always)]
    pub fn id(&self, geo: &Geometry, k: usize) -> usize {
        geo.offset(self.level as usize) + self.first as usize + k
    }

    /// The input of the span's hypercolumn `k`: bottom words `x` at level 0, else its children's
    /// winners in `src` (this step's winner buffer, or the step before's when pipelined).
    #[inline(always)]
    pub fn input(&self, geo: &Geometry, k: usize, x: &[u64], src: &[i32]) -> Input {
        if self.level == 0 {
            bottom_input(geo, x, self.child as usize + k)
        } else {
            let c = self.child as usize + 2 * k;
            parent_input(geo.minicolumns(), src[c], src[c + 1])
        }
    }
}

/// A worker's share of a network: up to [`MAX_LEVELS`] spans, bottom first, no allocation.
///
/// ```
/// use neurobits_core::cortical::{Geometry, Part};
/// let geo = Geometry::new(4, 16).unwrap(); // 8 + 4 + 2 + 1 hypercolumns
/// // Cut at level 2: 4 subtrees of levels 0–1 (2 + 1 hypercolumns each); a worker takes the second.
/// let lower = Part::subtrees(&geo, 2, 1, 2).unwrap();
/// assert_eq!((lower.columns(), lower.top().first, lower.top().count), (3, 1, 1));
/// // The upper levels 2–3 (2 + 1 hypercolumns) receive the 4 subtrees' roots in their inbox.
/// let upper = Part::levels(&geo, 2, 4).unwrap();
/// assert_eq!((upper.inbox(), upper.columns(), upper.outputs()), (4, 3, 7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    spans: [Span; MAX_LEVELS as usize],
    len: usize,
    inbox: usize,
    columns: usize,
}

impl Part {
    fn empty(inbox: usize) -> Part {
        Part { spans: [Span::default(); MAX_LEVELS as usize], len: 0, inbox, columns: 0 }
    }

    /// Appends level `level`'s hypercolumns `first … first + count − 1`; their children are the
    /// previous span's winners, or the inbox for the first span above the bottom.
    fn push(&mut self, level: usize, first: usize, count: usize) {
        let child = match self.len {
            0 if level == 0 => first,
            0 => 0,
            n => self.spans[n - 1].out as usize,
        };
        let slot = self.columns;
        self.spans[self.len] = Span {
            level: level as u32,
            first: first as u32,
            count: count as u32,
            slot: slot as u32,
            out: (self.inbox + slot) as u32,
            child: child as u32,
        };
        self.len += 1;
        self.columns += count;
    }

    /// The whole network: slots and outputs are the hypercolumn ids.
    pub fn whole(geo: &Geometry) -> Part {
        let mut p = Part::empty(0);
        for l in 0..geo.levels() {
            p.push(l, 0, geo.level_len(l));
        }
        p
    }

    /// Levels `lo … hi − 1` in full; above the bottom, the inbox holds level `lo − 1`'s winners.
    pub fn levels(geo: &Geometry, lo: usize, hi: usize) -> Result<Part, Error> {
        if lo >= hi || hi > geo.levels() {
            return Err(Error::CorticalShape);
        }
        let mut p = Part::empty(if lo == 0 { 0 } else { geo.level_len(lo - 1) });
        for l in lo..hi {
            p.push(l, 0, geo.level_len(l));
        }
        Ok(p)
    }

    /// Subtrees `s … e − 1` of a cut at level `cut` (P-1: `2^(L−cut)` subtrees, each levels
    /// `0 … cut − 1` under one level-`cut − 1` hypercolumn).
    pub fn subtrees(geo: &Geometry, cut: usize, s: usize, e: usize) -> Result<Part, Error> {
        if cut == 0 || cut > geo.levels() || s >= e || e > geo.level_len(cut - 1) {
            return Err(Error::CorticalShape);
        }
        let mut p = Part::empty(0);
        for l in 0..cut {
            let k = 1usize << (cut - 1 - l);
            p.push(l, s * k, (e - s) * k);
        }
        Ok(p)
    }

    /// The spans, bottom first.
    pub fn spans(&self) -> &[Span] {
        &self.spans[..self.len]
    }

    /// The last span: its winners are what the part hands on.
    pub fn top(&self) -> Span {
        self.spans[self.len - 1]
    }

    /// Winners received from below before the first span runs.
    pub fn inbox(&self) -> usize {
        self.inbox
    }

    /// Hypercolumns stored.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Length of the winner buffer: the inbox, then one per stored hypercolumn.
    pub fn outputs(&self) -> usize {
        self.inbox + self.columns
    }
}
