//! The dense-float baseline: sum-of-sum the way the paper's CPU code did it (Armadillo/BLAS,
//! Eq. 11): `S = W·V` as an `f32` matrix product with `γ` on the diagonal of `W`, then the
//! per-cluster maximum, for a whole batch until every probe converges or `t_max` updates. The
//! product is `matrixmultiply::sgemm` (pure-Rust BLAS-style kernels, all cores); the selection is
//! the core's own [`select_max`], over `f32` scores. Scores are
//! small integers, exact in `f32`, so its final states must equal the bit-packed sum-of-sum's.

use anyhow::Result;
use neurobits_core::gbnn::rules::select_max;
use neurobits_core::{
    gbnn::{Geometry, Network, ERASED},
    Word,
};

use crate::io::memory::ensure_fits;

/// `W` as a dense `n × n` `f32` matrix with `γ` on the diagonal.
pub struct DenseSumOfSum {
    geom: Geometry,
    w: Vec<f32>,
}

impl DenseSumOfSum {
    /// Expands `net` into a dense `f32` matrix with `γ` on the diagonal.
    pub fn new(net: &Network, gamma: u32) -> Result<Self> {
        let g = *net.geometry();
        let n = g.neurons();
        ensure_fits("the dense f32 W of the baseline", (n * n) as u128 * 4)?;
        Ok(DenseSumOfSum { geom: g, w: net.dense_weights(gamma) })
    }

    /// Retrieves `probes` (`K·C` symbols); returns bit-packed final states and the number of
    /// batch updates evaluated.
    pub fn retrieve(&self, probes: &[u16], max_iter: u32) -> (Vec<Word>, u32) {
        let g = &self.geom;
        let (n, c, l) = (g.neurons(), g.clusters(), g.neurons_per_cluster());
        let k = probes.len() / c;
        let mut v = vec![0f32; n * k];
        for (p, pr) in probes.chunks(c).enumerate() {
            for (cl, &s) in pr.iter().enumerate() {
                if s != ERASED {
                    v[(cl * l + s as usize) * k + p] = 1.0;
                }
            }
        }
        let mut s = vec![0f32; n * k];
        let mut next = vec![0f32; n * k];
        let mut t = 0;
        while t < max_iter {
            // SAFETY: the slices hold exactly n·n, n·k and n·k elements with the given strides.
            unsafe {
                matrixmultiply::sgemm(
                    n,
                    n,
                    k,
                    1.0,
                    self.w.as_ptr(),
                    n as isize,
                    1,
                    v.as_ptr(),
                    k as isize,
                    1,
                    0.0,
                    s.as_mut_ptr(),
                    k as isize,
                    1,
                );
            }
            let mut words = vec![0; g.words_per_cluster()];
            for p in 0..k {
                for cl in 0..c {
                    let base = cl * l;
                    select_max(l, |j| s[(base + j) * k + p], &mut words);
                    for j in 0..l {
                        next[(base + j) * k + p] = ((words[j / 64] >> (j % 64)) & 1) as f32;
                    }
                }
            }
            t += 1;
            if next == v {
                break;
            }
            std::mem::swap(&mut v, &mut next);
        }
        let rw = g.row_words();
        let mut states = vec![0; k * rw];
        for p in 0..k {
            for i in 0..n {
                if v[i * k + p] != 0.0 {
                    let (wi, bit) = g.bit(i / l, i % l);
                    states[p * rw + wi] |= bit;
                }
            }
        }
        (states, t)
    }
}
