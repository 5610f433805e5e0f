//! The paper's experiment settings, and building their networks and probes from the portable
//! PRNG (message seed `seed`, probe seed `seed + 1`).

use anyhow::{anyhow, Result};
use neurobits_core::gbnn::store::clique_word;
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{Geometry, Network};
use rayon::prelude::*;

use crate::io::memory::ensure_fits;
use crate::progress::bar;

/// A workload: network shape, stored messages, probes, erased clusters, sum-of-sum γ.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Scenario number.
    pub id: u8,
    /// Clusters C.
    pub clusters: usize,
    /// Neurons per cluster L.
    pub neurons: usize,
    /// Messages stored.
    pub stored: u64,
    /// Probes (distinct stored messages).
    pub probes: u64,
    /// Erased clusters per probe.
    pub erased: usize,
    /// Sum-of-sum reinforcement factor γ.
    pub gamma: u32,
}

/// Scenario 1 and 2 of Yao, Gripon & Rabbat (2013, Section VII), and a GPU-scale Scenario 3.
pub fn scenario(id: u8) -> Result<Scenario> {
    let (clusters, neurons, stored, probes, erased) = match id {
        1 => (8, 128, 5_000, 3_000, 5),
        2 => (16, 512, 50_000, 30_000, 7),
        3 => (32, 2048, 1_000_000, 1_000_000, 16),
        _ => return Err(anyhow!("unknown scenario {id} (expected 1, 2 or 3)")),
    };
    Ok(Scenario { id, clusters, neurons, stored, probes, erased, gamma: 2 })
}

impl Scenario {
    /// The network's shape.
    pub fn geometry(&self) -> Result<Geometry> {
        Geometry::new(self.clusters, self.neurons).map_err(|e| anyhow!("{e}"))
    }

    /// Stores messages `0..stored` of stream `seed`, equal to [`Network::store_random`] (tested)
    /// but parallel: threads own disjoint row ranges of W, so
    /// the writes need no atomics; each regenerates the (cheap) message stream.
    pub fn network(&self, seed: u64) -> Result<Network> {
        let g = self.geometry()?;
        ensure_fits("W", g.weight_words() as u128 * 8)?;
        let (_, _, mut w) = Network::new(self.clusters, self.neurons).map_err(|e| anyhow!("W: {e}"))?.into_parts();
        let cluster_words = g.neurons_per_cluster() * g.row_words();
        let pb = bar(g.clusters() as u64, "storing messages");
        // One cluster's rows per task: message k's edges from cluster c all lie in its row there.
        w.par_chunks_mut(cluster_words).enumerate().for_each(|(c, rows)| {
            let mut m = vec![0u16; g.clusters()];
            for k in 0..self.stored {
                message(&g, seed, k, &mut m);
                for b in (0..g.clusters()).filter(|&b| b != c) {
                    let (idx, bit) = clique_word(&g, &m, c, b);
                    rows[idx - c * cluster_words] |= bit;
                }
            }
            pb.inc(1);
        });
        pb.finish_and_clear();
        Network::from_parts(g, self.stored, w).map_err(|e| anyhow!("{e}"))
    }

    /// `count` probes of distinct stored messages with `erased` clusters erased, and the truth.
    pub fn probes(&self, seed: u64, count: u64, erased: usize) -> Result<(Vec<u16>, Vec<u16>)> {
        let g = self.geometry()?;
        let plan =
            ProbePlan::new(g, seed, self.stored, seed.wrapping_add(1), count, erased).map_err(|e| anyhow!("{e}"))?;
        let c = g.clusters();
        ensure_fits(&format!("{count} probes of {c} clusters and their truth"), count as u128 * c as u128 * 4)?;
        let mut probes = vec![0u16; count as usize * c];
        let mut truth = vec![0u16; count as usize * c];
        probes.par_chunks_mut(c).zip(truth.par_chunks_mut(c)).enumerate().for_each(|(p, (pr, tr))| {
            plan.probe(p as u64, pr);
            plan.truth(p as u64, tr);
        });
        Ok((probes, truth))
    }
}
