//! The cortical network on the host: its state in vectors (the same layout every target uses),
//! the learning-step counter, and the network file.

use anyhow::{anyhow, bail, Context, Result};
use neurobits_core::cortical::lgn::THETA;
use neurobits_core::cortical::rng::{key, BASELINE};
use neurobits_core::cortical::rules::{baseline_weight, Rule, LTD};
use neurobits_core::cortical::{digest, Geometry, Net};
use std::path::Path;

use crate::io::{atomic::write_atomic, memory::ensure_fits};

/// A network's whole state: `[hc][i][m]` Q0.16 weights, `[hc][m]` `Ω`, own-win counters and
/// random-firing flags, and the learning steps done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    /// Shape.
    pub geo: Geometry,
    /// Weights.
    pub w: Vec<u16>,
    /// Cached `Ω`.
    pub omega: Vec<u32>,
    /// Own wins since the last random win.
    pub cnt: Vec<u32>,
    /// Random firing on (1) / off (0).
    pub rf: Vec<u8>,
    /// Learning steps done (the random-firing counter).
    pub t: u64,
    /// The seed the network was made with (random firing keeps using it).
    pub seed: u64,
    /// The rule it learns and answers by (the spec's, or the competitive one).
    pub rule: Rule,
    /// The LGN threshold its images go through (`Config::lgn_threshold`): set by training; 16
    /// (spec D-10) for a network made otherwise or read from a file written before it was kept.
    pub lgn_threshold: i32,
}

impl Network {
    /// The untrained network of `seed` (spec D-9), after checking that it fits in memory.
    ///
    /// ```
    /// use neurobits::cortical::Network;
    /// use neurobits_core::cortical::Geometry;
    /// let net = Network::new(Geometry::new(3, 16).unwrap(), 1).unwrap();
    /// assert_eq!(net.w.len(), 7 * 32 * 16);
    /// ```
    pub fn new(geo: Geometry, seed: u64) -> Result<Self> {
        let mut n = Network::zeroed(geo)?;
        n.seed = seed;
        n.rf.fill(1);
        // The core's init, hypercolumns in parallel (2^20 − 1 of them take minutes on one core).
        let (m, n_in, k) = (geo.minicolumns(), geo.inputs(), key(seed, neurobits_core::cortical::rng::INIT));
        use rayon::prelude::*;
        n.w.par_chunks_mut(geo.weights_per_column())
            .enumerate()
            .for_each(|(hc, col)| neurobits_core::cortical::init_column(col, k, hc as u64, m, n_in));
        Ok(n)
    }

    /// A network of zero weights, counters and flags (to be filled: a gather, a load), after
    /// checking that it fits in memory.
    pub fn zeroed(geo: Geometry) -> Result<Self> {
        let per_m = geo.hypercolumns() * geo.minicolumns();
        ensure_fits("the cortical network", geo.weights() as u128 * 2 + per_m as u128 * 9)?;
        Ok(Network {
            geo,
            w: vec![0; geo.weights()],
            omega: vec![0; per_m],
            cnt: vec![0; per_m],
            rf: vec![0; per_m],
            t: 0,
            seed: 0,
            rule: Rule::spec(LTD),
            lgn_threshold: THETA,
        })
    }

    /// The random-weights baseline of spec §11.5: weights uniform on [0, 1) from stream 4.
    pub fn random(geo: Geometry, seed: u64) -> Result<Self> {
        let mut n = Network::zeroed(geo)?;
        (n.seed, n.t) = (seed, 0);
        n.rf.fill(1);
        let (m, k) = (geo.minicolumns(), key(seed, BASELINE));
        for (hc, col) in n.w.chunks_mut(geo.weights_per_column()).enumerate() {
            for i in 0..geo.inputs() {
                for mm in 0..m {
                    col[i * m + mm] = baseline_weight(k, hc as u64, m, mm, i);
                }
            }
        }
        n.recompute_omega();
        Ok(n)
    }

    /// The state as the core's borrowed [`Net`].
    pub fn net(&mut self) -> Net<'_> {
        Net::new(self.geo, &mut self.w, &mut self.omega, &mut self.cnt, &mut self.rf).expect("sizes kept by Network")
    }

    /// `weights_sha256` of spec §4, as lowercase hex.
    pub fn weights_sha256(&self) -> String {
        crate::io::hex(&digest::weights_sha256(&self.geo, &self.w))
    }

    /// The network file's bytes (see the manual's "File formats", docs/manual/src/cli.md): magic `NBCORT3\0`, then
    /// little-endian `u32` levels, `u32` M, `u64` seed, `u64` t, the weights (`u16`,
    /// `[hc][i][m]`), the counters (`u32`), the random-firing flags (`u8`), the rule (`u32`,
    /// `Rule`'s bits) and the LGN threshold (`i32`). `Ω` is recomputed on load; `NBCORT2\0` files
    /// (no threshold) load with 16, `NBCORT1\0` files (no rule either) also with the spec's rule.
    pub fn encode(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(36 + self.w.len() * 2 + self.cnt.len() * 5);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&(self.geo.levels() as u32).to_le_bytes());
        buf.extend_from_slice(&(self.geo.minicolumns() as u32).to_le_bytes());
        buf.extend_from_slice(&self.seed.to_le_bytes());
        buf.extend_from_slice(&self.t.to_le_bytes());
        self.w.iter().for_each(|w| buf.extend_from_slice(&w.to_le_bytes()));
        self.cnt.iter().for_each(|c| buf.extend_from_slice(&c.to_le_bytes()));
        buf.extend_from_slice(&self.rf);
        buf.extend_from_slice(&self.rule.0.to_le_bytes());
        buf.extend_from_slice(&self.lgn_threshold.to_le_bytes());
        buf
    }

    /// Saves the network ([`Network::encode`]) atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let b = self.encode();
        write_atomic(path, |f| Ok(f.write_all(&b)?))
    }

    /// A network from [`Network::encode`]'s bytes, checking every size against them (`name`
    /// names them in errors).
    pub fn decode(b: &[u8], name: &str) -> Result<Self> {
        if b.len() < 32 {
            bail!("{name}: not a cortical network file (too short)");
        }
        let (head, body) = b.split_at(32);
        let tail = match &head[..8] {
            b"NBCORT1\0" => 0,
            b"NBCORT2\0" => 4,
            m if m == MAGIC => 8,
            _ => bail!("{name}: not a cortical network file (bad magic)"),
        };
        let v1 = tail == 0;
        let levels = u32::from_le_bytes(head[8..12].try_into().unwrap());
        let m = u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize;
        let geo = Geometry::new(levels, m).map_err(|e| anyhow!("{name}: {e}"))?;
        let per_m = geo.hypercolumns() * m;
        let need = geo.weights() as u128 * 2 + per_m as u128 * 5 + 32 + tail as u128;
        if need != b.len() as u128 {
            bail!("{name}: {} bytes, but a network of {levels} levels x {m} minicolumns has {need}", b.len());
        }
        let (wb, rest) = body.split_at(geo.weights() * 2);
        let (cb, rest) = rest.split_at(per_m * 4);
        let (rf, rb) = rest.split_at(per_m);
        let rule = if v1 { Rule::spec(LTD) } else { Rule(u32::from_le_bytes(rb[..4].try_into().unwrap())) };
        let lgn_threshold = if tail == 8 { i32::from_le_bytes(rb[4..8].try_into().unwrap()) } else { THETA };
        if super::check_lgn_threshold(Some(lgn_threshold)).is_err() {
            bail!("{name}: LGN threshold {lgn_threshold} out of range (a corrupted file?)");
        }
        if rf.iter().any(|&r| r > 1) {
            bail!("{name}: a random-firing flag is neither 0 nor 1");
        }
        let mut n = Network {
            geo,
            w: wb.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect(),
            omega: vec![0; per_m],
            cnt: cb.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect(),
            rf: rf.to_vec(),
            seed: u64::from_le_bytes(head[16..24].try_into().unwrap()),
            t: u64::from_le_bytes(head[24..32].try_into().unwrap()),
            rule,
            lgn_threshold,
        };
        n.recompute_omega();
        Ok(n)
    }

    /// Loads a network written by [`Network::save`], checking its size before reading it.
    pub fn load(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let len = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?.len();
        ensure_fits(&format!("{name}: the network"), len as u128)?;
        let b = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
        Self::decode(&b, &name)
    }

    /// `Ω` of every minicolumn from its weights.
    pub fn recompute_omega(&mut self) {
        let m = self.geo.minicolumns();
        for (col, om) in self.w.chunks(self.geo.weights_per_column()).zip(self.omega.chunks_mut(m)) {
            om.fill(0);
            for row in col.chunks(m) {
                for (o, &w) in om.iter_mut().zip(row) {
                    *o += neurobits_core::cortical::rules::connected(w);
                }
            }
        }
    }
}

const MAGIC: &[u8; 8] = b"NBCORT3\0";
