//! Multi-probe order over the buckets of one pseudo-hash table (Lv, Josephson, Wang, Charikar and
//! Li, "Multi-probe LSH", VLDB 2007): the query's own bucket first, then every other bucket in
//! order of its score — the sum of the probe costs of the bits in which it differs from the
//! query's key — without scoring all `2^b` buckets.
//!
//! Bits are sorted by cost (ascending; ties by bit). A set of sorted positions is a `u32` mask;
//! from the set whose largest position is `p`, *shift* replaces `p` by `p + 1` and *expand* adds
//! `p + 1`. Starting from `{0}`, these two moves reach every non-empty set exactly once and never
//! lower the score, so popping a min-heap of (score, mask) yields the buckets in non-decreasing
//! score, ties by mask: one order on every target. Scores are `f32` sums built along that one
//! path (parent's score, then `− cost[p] + cost[p+1]` or `+ cost[p+1]`), so they are the same
//! floats everywhere too.

use super::sort_key;

/// A heap entry: a set's score and its mask over sorted bit positions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Probe {
    /// Sum of the costs of the set's bits.
    pub score: f32,
    /// Sorted positions in the set (bit `p` = the `p`-th cheapest bit).
    pub mask: u32,
}

impl Probe {
    fn rank(&self) -> (u32, u32) {
        (sort_key(self.score), self.mask)
    }
}

/// The buckets of one table in probe order, as keys; `heap` is caller-owned scratch: yielding
/// `n` keys needs `heap.len() ≥ n` (each pop pushes at most two), and the iterator ends early
/// (never skips a bucket) when the heap is full. All `2^bits` keys come out when it is large
/// enough.
///
/// ```
/// use neurobits_core::flyhash::{Probe, Probes};
/// let costs = [0.5f32, 0.1, 2.0];
/// let mut heap = [Probe::default(); 8];
/// let keys: Vec<u32> = Probes::new(0b000, &costs, &mut heap).collect();
/// // bit 1 (0.1), bit 0 (0.5), bits 0+1 (0.6), bit 2 (2.0), 1+2, 0+2, 0+1+2
/// assert_eq!(keys, [0b000, 0b010, 0b001, 0b011, 0b100, 0b110, 0b101, 0b111]);
/// ```
pub struct Probes<'a> {
    key: u32,
    bits: usize,
    /// Bit index of each sorted position.
    order: [u8; 32],
    /// Cost of each sorted position, ascending.
    cost: [f32; 32],
    heap: &'a mut [Probe],
    len: usize,
    started: bool,
}

impl<'a> Probes<'a> {
    /// Probe order around `key` for the bits' `costs` (`costs.len()` ≤ 32 bits, finite, ≥ 0).
    pub fn new(key: u32, costs: &[f32], heap: &'a mut [Probe]) -> Self {
        let bits = costs.len().min(32);
        let mut order = [0u8; 32];
        for (p, o) in order.iter_mut().enumerate().take(bits) {
            *o = p as u8;
        }
        // Insertion sort by (cost, bit): b ≤ 32, and stable, so ties keep the lower bit first.
        for i in 1..bits {
            let mut j = i;
            while j > 0 && sort_key(costs[order[j - 1] as usize]) > sort_key(costs[order[j] as usize]) {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
        let mut cost = [0f32; 32];
        for p in 0..bits {
            cost[p] = costs[order[p] as usize];
        }
        let mut probes = Probes { key, bits, order, cost, heap, len: 0, started: false };
        if bits > 0 {
            probes.push(Probe { score: cost[0], mask: 1 });
        }
        probes
    }

    fn push(&mut self, p: Probe) -> bool {
        if self.len == self.heap.len() {
            return false;
        }
        let mut i = self.len;
        self.heap[i] = p;
        self.len += 1;
        while i > 0 {
            let up = (i - 1) / 2;
            if self.heap[up].rank() <= self.heap[i].rank() {
                break;
            }
            self.heap.swap(up, i);
            i = up;
        }
        true
    }

    fn pop(&mut self) -> Option<Probe> {
        if self.len == 0 {
            return None;
        }
        let top = self.heap[0];
        self.len -= 1;
        self.heap[0] = self.heap[self.len];
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.len && self.heap[l].rank() < self.heap[m].rank() {
                m = l;
            }
            if r < self.len && self.heap[r].rank() < self.heap[m].rank() {
                m = r;
            }
            if m == i {
                break;
            }
            self.heap.swap(i, m);
            i = m;
        }
        Some(top)
    }
}

impl Iterator for Probes<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if !self.started {
            self.started = true;
            return Some(self.key);
        }
        // Room for both children, or stop: a skipped child would lose its whole subtree.
        if self.len + 1 > self.heap.len() {
            return None;
        }
        let p = self.pop()?;
        let top = 31 - p.mask.leading_zeros() as usize;
        if top + 1 < self.bits {
            let next = self.cost[top + 1];
            let mut shifted = p.score - self.cost[top];
            shifted += next;
            self.push(Probe { score: shifted, mask: (p.mask & !(1 << top)) | 1 << (top + 1) });
            self.push(Probe { score: p.score + next, mask: p.mask | 1 << (top + 1) });
        }
        let mut flip = 0u32;
        for pos in 0..self.bits {
            if p.mask >> pos & 1 == 1 {
                flip |= 1 << self.order[pos];
            }
        }
        Some(self.key ^ flip)
    }
}
