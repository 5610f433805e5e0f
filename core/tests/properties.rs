//! Lemma 1, Lemma 2, Theorem 1 and the joint ≡ sum-of-max claim on random instances, and the
//! bit-packed rules against direct, dense transcriptions of the paper's equations.

use neurobits_core::gbnn::retrieve::{init_state, step};
use neurobits_core::gbnn::rules::{bail_out_early_word, joint_first_word, sum_of_max_word};
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{retrieve, Geometry, Network, Params, Rule, ERASED};
use proptest::prelude::*;

/// A random network: C in 2..=6, L in 1..=70 (crossing the 64-bit word boundary), M messages.
fn instance() -> impl Strategy<Value = (Network, u64)> {
    (2usize..=6, 1usize..=70, 0u64..80, any::<u64>()).prop_map(|(c, l, m, seed)| {
        let mut net = Network::new(c, l).unwrap();
        net.store_random(seed, m);
        (net, seed)
    })
}

/// [`instance`], sometimes with clusters over 64 words (L > 4096: several occupancy words).
fn instance_wide() -> impl Strategy<Value = (Network, u64)> {
    prop_oneof![
        instance(),
        (2usize..=4, 4097usize..=8300, 0u64..300, any::<u64>()).prop_map(|(c, l, m, seed)| {
            let mut net = Network::new(c, l).unwrap();
            net.store_random(seed, m);
            (net, seed)
        })
    ]
}

fn random_state(g: &Geometry, seed: u64) -> Vec<u64> {
    let mut v = vec![0; g.row_words()];
    for c in 0..g.clusters() {
        for l in 0..g.neurons_per_cluster() {
            if neurobits_core::prng::draw(seed, g.neuron(c, l) as u64).is_multiple_of(3) {
                let (wi, b) = g.bit(c, l);
                v[wi] |= b;
            }
        }
    }
    v
}

fn on(g: &Geometry, v: &[u64], i: usize) -> bool {
    let (wi, b) = g.bit(i / g.neurons_per_cluster(), i % g.neurons_per_cluster());
    v[wi] & b != 0
}

fn edge(g: &Geometry, w: &[u64], i: usize, j: usize) -> bool {
    on(g, g.row(w, i), j)
}

fn som_next(g: &Geometry, w: &[u64], v: &[u64]) -> Vec<u64> {
    let mut next = vec![0; g.row_words()];
    step(g, w, &vec![ERASED; g.clusters()], Rule::SumOfMax.update(1), &Params::default(), v, &mut next);
    next
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn lemma1_off_stays_off((net, seed) in instance()) {
        let (g, w) = (net.geometry(), net.weights());
        let v = random_state(g, seed);
        let next = som_next(g, w, &v);
        for (a, b) in next.iter().zip(&v) {
            prop_assert_eq!(a & !b, 0);
        }
    }

    #[test]
    fn lemma2_a_stored_clique_is_stable((net, seed) in instance(), k in 0u64..80) {
        let (g, w) = (net.geometry(), net.weights());
        prop_assume!(k < net.stored());
        let mut m = vec![0; g.clusters()];
        message(g, seed, k, &mut m);
        // The clique alone, and the clique inside a random larger state.
        let mut clique = vec![0; g.row_words()];
        for (c, &s) in m.iter().enumerate() {
            let (wi, b) = g.bit(c, s as usize);
            clique[wi] |= b;
        }
        prop_assert_eq!(som_next(g, w, &clique), clique.clone());
        let noisy: Vec<u64> = random_state(g, seed ^ 1).iter().zip(&clique).map(|(a, b)| a | b).collect();
        let next = som_next(g, w, &noisy);
        for (n, c) in next.iter().zip(&clique) {
            prop_assert_eq!(n & c, *c);
        }
    }

    #[test]
    fn theorem1_bail_out_early_equals_sum_of_max((net, seed) in instance()) {
        let (g, w) = (net.geometry(), net.weights());
        let v = random_state(g, seed);
        for c in 0..g.clusters() {
            for wi in 0..g.words_per_cluster() {
                prop_assert_eq!(
                    bail_out_early_word(g, w, &v, c, wi, g.all_clusters()),
                    sum_of_max_word(g, w, &v, c, wi)
                );
            }
        }
    }

    #[test]
    fn sum_of_max_matches_eq_6_7_densely((net, seed) in instance()) {
        let (g, w) = (net.geometry(), net.weights());
        let v = random_state(g, seed);
        let next = som_next(g, w, &v);
        let l = g.neurons_per_cluster();
        for i in 0..g.neurons() {
            let mut s = on(g, &v, i) as usize;
            for c2 in (0..g.clusters()).filter(|&c2| c2 != i / l) {
                s += (0..l).any(|j| on(g, &v, c2 * l + j) && edge(g, w, c2 * l + j, i)) as usize;
            }
            prop_assert_eq!(on(g, &next, i), s == g.clusters());
        }
    }

    #[test]
    fn sum_of_sum_matches_eq_3_5_densely((net, seed) in instance(), gamma in 0u32..4) {
        let (g, w) = (net.geometry(), net.weights());
        let v = random_state(g, seed);
        let mut next = vec![0; g.row_words()];
        let p = Params { gamma, max_iter: 20 };
        step(g, w, &vec![ERASED; g.clusters()], Rule::SumOfSum.update(0), &p, &v, &mut next);
        let l = g.neurons_per_cluster();
        let s: Vec<u32> = (0..g.neurons()).map(|i| {
            gamma * on(g, &v, i) as u32
                + (0..g.neurons()).filter(|&j| on(g, &v, j) && edge(g, w, j, i)).count() as u32
        }).collect();
        for i in 0..g.neurons() {
            let max = s[(i / l) * l..(i / l + 1) * l].iter().max().copied().unwrap();
            prop_assert_eq!(on(g, &next, i), s[i] == max);
        }
    }

    #[test]
    fn joint_first_pass_keeps_neurons_with_c_minus_e_signals((net, seed) in instance(), e in 0usize..=6) {
        let (g, w) = (net.geometry(), net.weights());
        let e = e.min(g.clusters());
        prop_assume!(net.stored() > 0);
        let plan = ProbePlan::new(*g, seed, net.stored(), seed ^ 7, 1, e).unwrap();
        let mut probe = vec![0; g.clusters()];
        plan.probe(0, &mut probe);
        let mut v0 = vec![0; g.row_words()];
        init_state(g, &probe, Rule::Joint, &mut v0);
        let l = g.neurons_per_cluster();
        for c in (0..g.clusters()).filter(|&c| probe[c] == ERASED) {
            for wi in 0..g.words_per_cluster() {
                let got = joint_first_word(g, w, &probe, c, wi);
                for b in 0..64.min(l - wi * 64) {
                    let i = c * l + wi * 64 + b;
                    let signals = (0..g.neurons()).filter(|&j| on(g, &v0, j) && edge(g, w, j, i)).count();
                    prop_assert_eq!((got >> b) & 1 == 1, signals == g.clusters() - e);
                }
            }
        }
    }

    #[test]
    fn joint_first_pass_on_several_words_equals_one_word_at_a_time((net, seed) in instance(), e in 0usize..=6) {
        use neurobits_core::gbnn::{rules::{joint_first_words_cols, known_rows}, shard::Shard};
        let (g, w) = (net.geometry(), net.weights());
        let e = e.min(g.clusters());
        prop_assume!(net.stored() > 0);
        let plan = ProbePlan::new(*g, seed, net.stored(), seed ^ 11, 1, e).unwrap();
        let mut probe = vec![0; g.clusters()];
        plan.probe(0, &mut probe);
        let mut rows = vec![0; g.clusters()];
        let nk = known_rows(g, &probe, &mut rows);
        let rows = &rows[..nk];
        let s = Shard::all(g);
        // Every erased word, paired with every erased word (the kernel's pairs and its repeats).
        let words: Vec<(usize, usize)> = (0..g.clusters())
            .filter(|&c| probe[c] == ERASED)
            .flat_map(|c| (0..g.words_per_cluster()).map(move |wi| (c, wi)))
            .collect();
        for &a in &words {
            for &b in &words {
                let one = [a, b].map(|(c, wi)| joint_first_word(g, w, &probe, c, wi));
                prop_assert_eq!(joint_first_words_cols::<2, 4>(g, w, &s, rows, [a, b]), one);
                prop_assert_eq!(joint_first_words_cols::<2, 8>(g, w, &s, rows, [a, b]), one);
                prop_assert_eq!(joint_first_words_cols::<1, 2>(g, w, &s, rows, [a])[0], one[0]);
            }
        }
    }

    /// The two-word first pass (one 16-byte load per row) equals two words at once, where W is
    /// 16-byte aligned (the vector path) and where it is not (the fallback).
    #[test]
    fn joint_first_pass_on_pairs_equals_two_words(
        c in 2usize..=6, l in 65usize..=260, m in 1u64..60, seed in any::<u64>(), e in 1usize..=5,
    ) {
        use neurobits_core::gbnn::{rules::{joint_first_pair_cols, joint_first_words_cols, known_rows}, shard::Shard};
        let mut net = Network::new(c, l).unwrap();
        net.store_random(seed, m);
        let (g, w) = (net.geometry(), net.weights());
        let plan = ProbePlan::new(*g, seed, net.stored(), seed ^ 5, 1, e.min(c)).unwrap();
        let mut probe = vec![0; c];
        plan.probe(0, &mut probe);
        let mut rows = vec![0; c];
        let nk = known_rows(g, &probe, &mut rows);
        let rows = &rows[..nk];
        let s = Shard::all(g);
        // `u128` is 16-byte aligned: W copied to its start, and one word past it.
        let mut buf = vec![0u128; w.len().div_ceil(2) + 1];
        // SAFETY: the u128s hold 2·len(buf) plain words.
        let words = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u64>(), 2 * buf.len()) };
        for start in [0, 1] {
            let wv = &mut words[start..start + w.len()];
            wv.copy_from_slice(w);
            for cl in (0..c).filter(|&cl| probe[cl] == ERASED) {
                for wi in 0..g.words_per_cluster() - 1 {
                    let want = joint_first_words_cols::<2, 4>(g, w, &s, rows, [(cl, wi), (cl, wi + 1)]);
                    prop_assert_eq!(joint_first_pair_cols::<4>(g, wv, &s, rows, (cl, wi)), want);
                }
            }
        }
    }

    #[test]
    fn joint_equals_sum_of_max_on_probes_of_stored_messages((net, seed) in instance(), e in 0usize..=6, k in 1u64..10) {
        let (g, w) = (net.geometry(), net.weights());
        let e = e.min(g.clusters());
        let k = k.min(net.stored());
        let plan = ProbePlan::new(*g, seed, net.stored(), seed ^ 3, k, e).unwrap();
        let mut probe = vec![0; g.clusters()];
        let (mut a, mut b, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()], vec![0; g.row_words()]);
        for p in 0..k {
            plan.probe(p, &mut probe);
            let sa = retrieve(g, w, &probe, Rule::Joint, &Params::default(), &mut a, &mut s);
            let sb = retrieve(g, w, &probe, Rule::SumOfMax, &Params::default(), &mut b, &mut s);
            prop_assert!(sa.converged && sb.converged);
            prop_assert_eq!(&a, &b);
        }
    }
}

#[test]
fn fixed_and_heap_networks_agree() {
    use neurobits_core::gbnn::{weight_words, FixedNetwork};
    let mut fixed = FixedNetwork::<{ weight_words(8, 50) }>::new(8, 50).unwrap();
    let mut heap = Network::new(8, 50).unwrap();
    let g = *heap.geometry();
    let mut m = [0u16; 8];
    for k in 0..300 {
        message(&g, 11, k, &mut m);
        fixed.store(&m).unwrap();
        heap.store(&m).unwrap();
    }
    assert_eq!(fixed.weights(), heap.weights());
    let plan = ProbePlan::new(g, 11, 300, 5, 100, 4).unwrap();
    let (mut a, mut b, mut s) = ([0u64; 8], [0u64; 8], [0u64; 8]);
    for p in 0..100 {
        plan.probe(p, &mut m);
        for rule in Rule::ALL {
            let sa = fixed.retrieve(&m, rule, Params::default(), &mut a, &mut s).unwrap();
            let sb = heap.retrieve(&m, rule, Params::default(), &mut b, &mut s).unwrap();
            assert_eq!((a, sa), (b, sb));
        }
    }
}

#[test]
fn batch_driver_equals_single_probe_driver() {
    use neurobits_core::gbnn::batch::retrieve_batch;
    let mut net = Network::new(8, 128).unwrap();
    net.store_random(1, 5000);
    let g = *net.geometry();
    let plan = ProbePlan::new(g, 1, 5000, 2, 500, 5).unwrap();
    let mut probes = vec![0; 500 * 8];
    for (p, chunk) in probes.chunks_mut(8).enumerate() {
        plan.probe(p as u64, chunk);
    }
    for rule in Rule::ALL {
        let mut states = vec![0; 500 * g.row_words()];
        let mut stats = vec![Default::default(); 500];
        retrieve_batch(&g, net.weights(), &probes, rule, &Params::default(), &mut states, &mut stats).unwrap();
        let (mut v, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()]);
        for (p, probe) in probes.chunks(8).enumerate() {
            let st = retrieve(&g, net.weights(), probe, rule, &Params::default(), &mut v, &mut s);
            assert_eq!(&states[p * g.row_words()..(p + 1) * g.row_words()], &v[..]);
            assert_eq!(stats[p], st);
        }
    }
}

#[test]
fn probe_plan_picks_distinct_messages_and_exactly_e_erasures() {
    let g = Geometry::new(16, 512).unwrap();
    let plan = ProbePlan::new(g, 1, 50_000, 2, 30_000, 7).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut p = [0u16; 16];
    for i in 0..30_000 {
        let k = plan.probe(i, &mut p);
        assert!(k < 50_000 && seen.insert(k));
        assert_eq!(p.iter().filter(|&&s| s == ERASED).count(), 7);
    }
    assert!(ProbePlan::new(g, 1, 10, 2, 11, 7).is_err());
    assert!(ProbePlan::new(g, 1, 10, 2, 10, 17).is_err());
}

#[test]
fn workload_is_pinned() {
    // Guards the portable PRNG's definition: other targets rely on these exact values.
    let g = Geometry::new(4, 100).unwrap();
    let mut m = [0u16; 4];
    message(&g, 0, 0, &mut m);
    let again = {
        let key = neurobits_core::prng::stream_key(0, 1);
        core::array::from_fn::<u16, 4, _>(|c| {
            neurobits_core::prng::below(neurobits_core::prng::draw(key, c as u64), 100) as u16
        })
    };
    assert_eq!(m, again);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn nth_set_bit_is_the_walk(x in any::<u64>(), sparse in any::<u64>(), n in 0u32..66) {
        use neurobits_core::bits::{nth_set_bit, set_bits};
        for x in [x, x & sparse, x & sparse & sparse.rotate_left(17)] {
            prop_assert_eq!(nth_set_bit(x, n), set_bits(x).nth(n as usize));
        }
    }

    #[test]
    fn occupancy_variants_equal_the_plain_ones((net, seed) in instance_wide(), sparse in any::<bool>()) {
        use neurobits_core::gbnn::rules::{
            bail_out_early_word_occ, joint_iter_word, joint_iter_word_cols, joint_iter_word_occ, joint_support_cols,
            occupancy_part, occupancy_words,
        };
        use neurobits_core::gbnn::shard::Shard;
        let (g, w) = (net.geometry(), net.weights());
        let mut v = random_state(g, seed);
        if sparse {
            // At most one neuron per cluster (a retrieval after its first pass): the batched
            // path of `joint_support_cols`; a cluster left empty sends no support.
            for c in 0..g.clusters() {
                let wpc = g.words_per_cluster();
                let first = (0..wpc).map(|wi| v[c * wpc + wi]).position(|x| x != 0);
                for wi in 0..wpc {
                    let x = v[c * wpc + wi];
                    v[c * wpc + wi] = if Some(wi) == first && (seed >> c) & 7 != 0 { x & x.wrapping_neg() } else { 0 };
                }
            }
        }
        let ow = occupancy_words(g);
        let occ: Vec<u64> = (0..g.clusters() * ow).map(|i| occupancy_part(g, &v, i / ow, i % ow)).collect();
        let erased = g.all_clusters() & !1;
        for c in 0..g.clusters() {
            for wi in 0..g.words_per_cluster() {
                let plain = joint_iter_word(g, w, &v, erased, c, wi);
                if ow == 1 {
                    prop_assert_eq!(
                        bail_out_early_word_occ(g, w, &v, c, wi, g.all_clusters(), &occ),
                        bail_out_early_word(g, w, &v, c, wi, g.all_clusters())
                    );
                    prop_assert_eq!(joint_iter_word_occ(g, w, &v, erased, c, wi, &occ), plain);
                }
                prop_assert_eq!(joint_iter_word_cols(g, w, &Shard::all(g), &v, erased, c, wi, &occ), plain);
                // The support alone, against its definition: the AND over the other erased
                // clusters of the OR of their active neurons' rows at this word.
                let from = erased & !(1u64 << c);
                let mut want = u64::MAX;
                for c2 in (0..g.clusters()).filter(|c2| from & (1 << c2) != 0) {
                    let rows = (0..g.neurons_per_cluster()).map(|l| g.neuron(c2, l)).filter(|&i| on(g, &v, i));
                    want &= rows.fold(0, |s, i| s | w[i * g.row_words() + c * g.words_per_cluster() + wi]);
                }
                prop_assert_eq!(joint_support_cols(g, w, &Shard::all(g), &v, from, c, wi, &occ), want);
            }
        }
    }
}

/// The multi-device joint retrieval, simulated: W split into `ranks` shards of clusters (their
/// columns), each shard updating only its own erased clusters from its own words, the full state
/// shared after every update (what the GPUs exchange).
fn sharded_joint(net: &Network, probe: &[u16], ranks: usize, params: &Params) -> (Vec<u64>, u32) {
    use neurobits_core::gbnn::rules::{
        joint_first_word_cols, joint_iter_word_cols, known_rows, occupancy_part, occupancy_words,
    };
    use neurobits_core::gbnn::{shard::Shard, Schedule, Update};
    let g = net.geometry();
    let (wpc, cc) = (g.words_per_cluster(), g.clusters());
    let shards: Vec<(Shard, Vec<u64>)> = (0..ranks)
        .map(|r| {
            let s = Shard::of(g, r, ranks);
            let mut part = vec![0; s.words(g)];
            s.columns_of(g, net.weights(), &mut part);
            (s, part)
        })
        .collect();
    let mut rows = vec![0u32; cc];
    let nk = known_rows(g, probe, &mut rows);
    let erased = g.erased_mask(probe);
    let mut v = vec![0; g.row_words()];
    init_state(g, probe, Rule::Joint, &mut v);
    let mut sched = Schedule::new(Rule::Joint, g, params);
    while let Some(u) = sched.next_update() {
        let ow = occupancy_words(g);
        let occ: Vec<u64> = (0..cc * ow).map(|i| occupancy_part(g, &v, i / ow, i % ow)).collect();
        let mut next = v.clone();
        for (s, part) in &shards {
            for c in (0..cc).filter(|&c| s.owns(c) && erased & (1 << c) != 0) {
                for wi in 0..wpc {
                    next[c * wpc + wi] = match u {
                        Update::JointFirst => joint_first_word_cols(g, part, s, &rows[..nk], c, wi),
                        _ => joint_iter_word_cols(g, part, s, &v, erased, c, wi, &occ),
                    };
                }
            }
        }
        sched.record(next != v);
        v = next;
    }
    (v, sched.stats().iterations)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sharded_joint_equals_joint((net, seed) in instance_wide(), e in 0usize..=6, ranks in 1usize..=4) {
        use neurobits_core::gbnn::workload::erased_clusters;
        let g = net.geometry();
        let ranks = ranks.min(g.clusters());
        let e = e.min(g.clusters());
        let mut probe = vec![0u16; g.clusters()];
        message(g, seed, 0, &mut probe);
        let mask = erased_clusters(seed, 0, g.clusters(), e);
        for (c, s) in probe.iter_mut().enumerate() {
            if mask & (1 << c) != 0 {
                *s = ERASED;
            }
        }
        let params = Params::default();
        let (mut v, mut scratch) = (vec![0; g.row_words()], vec![0; g.row_words()]);
        let stats = retrieve(g, net.weights(), &probe, Rule::Joint, &params, &mut v, &mut scratch);
        let (vs, iters) = sharded_joint(&net, &probe, ranks, &params);
        prop_assert_eq!(vs, v);
        prop_assert_eq!(iters, stats.iterations);
    }
}
