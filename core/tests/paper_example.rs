//! The paper's Section V-A example (C = 3, L = 3, 1-based messages (1,1,1), (2,2,1), (3,2,1),
//! (1,3,1), probe (?,?,1), γ = 1), here 0-based.

use neurobits_core::gbnn::retrieve::{init_state, step};
use neurobits_core::gbnn::rules::score;
use neurobits_core::gbnn::{retrieve, Network, Params, Rule, ERASED};

const PROBE: [u16; 3] = [ERASED, ERASED, 0];

fn network() -> Network {
    let mut net = Network::new(3, 3).unwrap();
    for m in [[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] {
        net.store(&m).unwrap();
    }
    net
}

/// The state as the paper prints it: one 0/1 per neuron.
fn flat(v: &[u64]) -> [u8; 9] {
    core::array::from_fn(|i| ((v[i / 3] >> (i % 3)) & 1) as u8)
}

#[test]
fn weight_matrix_is_the_printed_one_without_its_diagonal() {
    let net = network();
    let g = net.geometry();
    // The paper's W with γ = 1 on the diagonal.
    let printed = [
        "100101100",
        "010010100",
        "001010100",
        "100100100",
        "011010100",
        "100001100",
        "111111100",
        "000000010",
        "000000001",
    ];
    for (i, row) in printed.iter().enumerate() {
        let r = flat(g.row(net.weights(), i));
        for (j, ch) in row.bytes().enumerate() {
            let want = if i == j { 0 } else { ch - b'0' };
            assert_eq!(r[j], want, "W[{i}][{j}]");
        }
    }
}

#[test]
fn sum_of_sum_oscillates_exactly_as_printed() {
    let net = network();
    let (g, w) = (*net.geometry(), net.weights());
    let params = Params { gamma: 1, max_iter: 20 };
    let mut v = vec![0; 3];
    init_state(&g, &PROBE, Rule::SumOfSum, &mut v);
    assert_eq!(flat(&v), [0, 0, 0, 0, 0, 0, 1, 0, 0]);

    let printed_scores: [[u32; 9]; 3] =
        [[1, 1, 1, 1, 1, 1, 1, 0, 0], [4, 3, 3, 3, 4, 3, 7, 0, 0], [2, 2, 2, 2, 2, 2, 3, 0, 0]];
    let printed_states: [[u8; 9]; 3] =
        [[1, 1, 1, 1, 1, 1, 1, 0, 0], [1, 0, 0, 0, 1, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0, 0]];
    let mut next = vec![0; 3];
    for t in 0..3 {
        let s: Vec<u32> = (0..9).map(|i| score(&g, w, &v, g.all_clusters(), i / 3, i % 3, 1)).collect();
        assert_eq!(s, printed_scores[t], "s^{t}");
        assert!(step(&g, w, &PROBE, Rule::SumOfSum.update(t as u32), &params, &v, &mut next));
        assert_eq!(flat(&next), printed_states[t], "v^{}", t + 1);
        v.copy_from_slice(&next);
    }

    let mut scratch = vec![0; 3];
    let stats = retrieve(&g, w, &PROBE, Rule::SumOfSum, &params, &mut v, &mut scratch);
    assert_eq!((stats.iterations, stats.converged), (20, false));
    // 20 updates from v^0 end on v^20 = v^2 (period 2 from v^1).
    assert_eq!(flat(&v), printed_states[1]);
}

#[test]
fn sum_of_sum_with_gamma_two_converges() {
    let net = network();
    let mut v = vec![0; 3];
    let mut s = vec![0; 3];
    let stats = net.retrieve(&PROBE, Rule::SumOfSum, Params { gamma: 2, max_iter: 20 }, &mut v, &mut s).unwrap();
    assert!(stats.converged, "{stats:?}");
}

#[test]
fn sum_of_max_converges_to_all_matching_cliques() {
    let net = network();
    for rule in [Rule::SumOfMax, Rule::BailOutEarly, Rule::Joint] {
        let (mut v, mut s) = (vec![0; 3], vec![0; 3]);
        let stats = net.retrieve(&PROBE, rule, Params::default(), &mut v, &mut s).unwrap();
        assert!(stats.converged, "{rule:?}");
        // Every stored message matches (?,?,1): all their neurons stay on.
        assert_eq!(flat(&v), [1, 1, 1, 1, 1, 1, 1, 0, 0], "{rule:?}");
    }
}
