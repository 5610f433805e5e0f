#![cfg(feature = "alloc")]
//! The noisy and sparse modes (issue 36), state for state against an independent reference
//! written here with plain loops over a dense 0/1 matrix (not the core's rules), on fresh random
//! networks of several shapes (one word per cluster and several), after every number of updates.

use neurobits_core::gbnn::{Geometry, Mode, Network, Params, Rule, ERASED, SILENT};
use proptest::prelude::*;

/// A small LCG: the test's own randomness, independent of the core's PRNG.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The reference network: `n × n` booleans.
struct Dense {
    c: usize,
    l: usize,
    w: Vec<Vec<bool>>,
}

impl Dense {
    fn new(c: usize, l: usize) -> Self {
        Dense { c, l, w: vec![vec![false; c * l]; c * l] }
    }
    /// Gripon & Berrou 2011 / Aliabadi et al. 2014: the clique of the active clusters.
    fn store(&mut self, m: &[u16]) {
        for a in 0..self.c {
            for b in 0..self.c {
                if a != b && m[a] != SILENT && m[b] != SILENT {
                    self.w[a * self.l + m[a] as usize][b * self.l + m[b] as usize] = true;
                }
            }
        }
    }
    /// Sum-of-sum score (Eq. 3) of neuron i.
    fn sos(&self, v: &[bool], i: usize, gamma: u32) -> u32 {
        let signals = (0..v.len()).filter(|&j| v[j] && self.w[j][i]).count() as u32;
        gamma * v[i] as u32 + signals
    }
    /// Sum-of-max score (Eq. 6, γ = 1) of neuron i.
    fn som(&self, v: &[bool], i: usize) -> u32 {
        let own = i / self.l;
        let heard = (0..self.c)
            .filter(|&c2| c2 != own && (0..self.l).any(|l| v[c2 * self.l + l] && self.w[c2 * self.l + l][i]))
            .count() as u32;
        v[i] as u32 + heard
    }
    /// Runs `rule` in `mode` for at most `max_iter` updates; the final state and (updates, converged).
    fn retrieve(&self, probe: &[u16], rule: Rule, mode: Mode, gamma: u32, max_iter: u32) -> (Vec<bool>, u32, bool) {
        let n = self.c * self.l;
        let mut v = vec![false; n];
        for (c, &s) in probe.iter().enumerate() {
            if s == ERASED && mode == Mode::Noisy && rule == Rule::SumOfMax {
                (0..self.l).for_each(|l| v[c * self.l + l] = true);
            } else if s != ERASED && s != SILENT {
                v[c * self.l + s as usize] = true;
            }
        }
        for t in 0..max_iter {
            let s: Vec<u32> =
                (0..n).map(|i| if rule == Rule::SumOfSum { self.sos(&v, i, gamma) } else { self.som(&v, i) }).collect();
            let next: Vec<bool> = if mode == Mode::Sparse {
                let max = *s.iter().max().unwrap();
                s.iter().map(|&x| x == max).collect()
            } else {
                (0..n)
                    .map(|i| {
                        let c = i / self.l;
                        s[i] == *s[c * self.l..(c + 1) * self.l].iter().max().unwrap()
                    })
                    .collect()
            };
            if next == v {
                return (v, t + 1, true);
            }
            v = next;
        }
        (v, max_iter, false)
    }
}

/// The core's state as booleans.
fn bools(net: &Network, v: &[u64]) -> Vec<bool> {
    let g = net.geometry();
    let (l, wpc) = (g.neurons_per_cluster(), g.words_per_cluster());
    (0..g.neurons()).map(|i| v[(i / l) * wpc + (i % l) / 64] >> ((i % l) % 64) & 1 == 1).collect()
}

fn check(mode: Mode, seed: u64) {
    let mut rng = Lcg(seed);
    let mut cases = 0;
    for &(c, l, m) in &[(4, 3, 3), (5, 8, 12), (6, 16, 40), (8, 10, 60), (3, 70, 200), (7, 5, 10)] {
        let mut net = Network::new(c, l).unwrap();
        let mut dense = Dense::new(c, l);
        let active = if mode == Mode::Sparse { 2 + rng.below(c - 1) } else { c };
        let mut msgs = Vec::new();
        for _ in 0..m {
            let mut msg: Vec<u16> = (0..c).map(|_| rng.below(l) as u16).collect();
            // Silence c − active distinct clusters.
            let mut silent = 0;
            while silent < c - active {
                let k = rng.below(c);
                if msg[k] != SILENT {
                    msg[k] = SILENT;
                    silent += 1;
                }
            }
            net.store(&msg).unwrap();
            dense.store(&msg);
            msgs.push(msg);
        }
        for p in 0..12 {
            let mut probe = msgs[rng.below(m)].clone();
            for x in probe.iter_mut() {
                if *x == SILENT {
                    continue;
                }
                match rng.below(4) {
                    // substituted (noisy) or erased (either mode)
                    0 if mode == Mode::Noisy => *x = ((*x as usize + 1 + rng.below(l - 1)) % l) as u16,
                    1 => *x = ERASED,
                    _ => {}
                }
            }
            for rule in [Rule::SumOfSum, Rule::SumOfMax] {
                for gamma in [1, 2] {
                    for max_iter in [1, 2, 3, 20] {
                        let params = Params { gamma, max_iter };
                        let (mut v, mut s) = (vec![0; net.geometry().row_words()], vec![0; net.geometry().row_words()]);
                        let st = net.retrieve_in(&probe, rule, mode, params, &mut v, &mut s).unwrap();
                        let (want, it, conv) = dense.retrieve(&probe, rule, mode, gamma, max_iter);
                        let at =
                            format!("{mode:?} {rule:?} C={c} L={l} M={m} probe {p} {probe:?} γ={gamma} t≤{max_iter}");
                        assert_eq!(bools(&net, &v), want, "{at}");
                        assert_eq!((st.iterations, st.converged), (it, conv), "{at}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 6 * 12 * 2 * 2 * 4);
}

#[test]
fn noisy_matches_the_dense_reference() {
    for seed in [1, 2, 3] {
        check(Mode::Noisy, seed);
    }
}

#[test]
fn sparse_matches_the_dense_reference() {
    for seed in [4, 5, 6] {
        check(Mode::Sparse, seed);
    }
}

#[test]
fn noisy_corrects_a_substituted_symbol_that_erasure_mode_keeps() {
    // One message in 4 clusters of 4; probe with cluster 0 wrong.
    let mut net = Network::new(4, 4).unwrap();
    net.store(&[1, 2, 3, 0]).unwrap();
    let (mut v, mut s) = (vec![0; 4], vec![0; 4]);
    for rule in [Rule::SumOfSum, Rule::SumOfMax] {
        net.retrieve_in(&[0, 2, 3, 0], rule, Mode::Noisy, Params::default(), &mut v, &mut s).unwrap();
        assert_eq!(v, [0b0010, 0b0100, 0b1000, 0b0001], "{rule:?}");
    }
    // Erasure-mode sum-of-max trusts the wrong symbol: with it gone, nothing can reach C signals.
    net.retrieve(&[0, 2, 3, 0], Rule::SumOfMax, Params::default(), &mut v, &mut s).unwrap();
    assert_eq!(v, [0, 0, 0, 0]);
}

#[test]
fn rules_without_a_definition_are_refused() {
    let net = Network::new(3, 3).unwrap();
    let (mut v, mut s) = (vec![0; 3], vec![0; 3]);
    for mode in [Mode::Noisy, Mode::Sparse] {
        for rule in [Rule::BailOutEarly, Rule::Joint] {
            assert!(net.retrieve_in(&[0, 1, 2], rule, mode, Params::default(), &mut v, &mut s).is_err());
        }
    }
    // SILENT only in sparse probes; never ERASED in a message.
    assert!(net.retrieve_in(&[0, SILENT, 2], Rule::SumOfSum, Mode::Noisy, Params::default(), &mut v, &mut s).is_err());
    assert!(net.clone().store(&[0, ERASED, 1]).is_err());
}

#[test]
fn a_sparse_message_stores_only_its_active_clique() {
    let mut net = Network::new(5, 4).unwrap();
    net.store(&[1, SILENT, 2, SILENT, 3]).unwrap();
    let edges: u32 = net.weights().iter().map(|x| x.count_ones()).sum();
    assert_eq!(edges, 3 * 2); // c(c − 1) directed edges for c = 3
}

proptest! {
    /// The branch-free probe check and erased mask (one vectorised pass) agree with a plain
    /// per-symbol reading: the first bad symbol is the one named, and the mask marks exactly the
    /// erased clusters.
    #[test]
    fn probe_check_and_mask_equal_a_plain_reading(
        c in 2usize..=64,
        l in 1usize..=70,
        raw in proptest::collection::vec(any::<u16>(), 64),
        erased in any::<u64>(),
        allow in any::<bool>(),
    ) {
        let g = Geometry::new(c, l).unwrap();
        // Mostly valid symbols, some erased, an occasional value out of range.
        let probe: Vec<u16> = (0..c)
            .map(|i| if erased >> i & 1 == 1 { ERASED } else if raw[i] % 16 == 0 { raw[i] } else { raw[i] % l as u16 })
            .collect();
        let first_bad = probe.iter().position(|&s| !(allow && s == ERASED) && s as usize >= l);
        let want = match first_bad {
            Some(i) => Err(neurobits_core::Error::Symbol(i, probe[i])),
            None => Ok(()),
        };
        prop_assert_eq!(g.check_symbols(&probe, allow), want);
        let mask = probe.iter().enumerate().fold(0u64, |m, (i, &s)| if s == ERASED { m | 1 << i } else { m });
        prop_assert_eq!(g.erased_mask(&probe), mask);
    }
}
