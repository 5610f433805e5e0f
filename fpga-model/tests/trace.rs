//! The paper's Section V-A example, clock by clock: sum-of-sum oscillates in the state register.

use neurobits_core::gbnn::{Params, Rule, ERASED};
use neurobits_fpga::{Circuit, Phase, S3x3};

fn flat(v: &[u64]) -> [u8; 9] {
    core::array::from_fn(|i| ((v[i / 3] >> (i % 3)) & 1) as u8)
}

#[test]
fn sum_of_sum_oscillation_cycle_by_cycle() {
    let mut c = Circuit::<S3x3>::new();
    for m in [[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] {
        c.store(&m).unwrap();
    }
    c.start(&[ERASED, ERASED, 0], Rule::SumOfSum, Params { gamma: 1, max_iter: 6 }).unwrap();
    let mut trace = Vec::new();
    while c.phase() != Phase::Done {
        c.tick();
        trace.push((c.phase(), flat(c.state()), c.scores().to_vec()));
    }
    let (v0, v1, v2) = ([0, 0, 0, 0, 0, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0, 0], [1, 0, 0, 0, 1, 0, 1, 0, 0]);
    let (s0, s1, s2) =
        (vec![1, 1, 1, 1, 1, 1, 1, 0, 0], vec![4, 3, 3, 3, 4, 3, 7, 0, 0], vec![2, 2, 2, 2, 2, 2, 3, 0, 0]);
    // clock 1 loads v^0; then each update is a Score clock and a Select clock.
    assert_eq!(trace[0].0, Phase::Score);
    assert_eq!(trace[0].1, v0);
    let expect = [
        (Phase::Select, v0, &s0),
        (Phase::Score, v1, &s0),
        (Phase::Select, v1, &s1),
        (Phase::Score, v2, &s1),
        (Phase::Select, v2, &s2),
        (Phase::Score, v1, &s2),
        (Phase::Select, v1, &s1),
        (Phase::Score, v2, &s1),
    ];
    for (i, (phase, v, s)) in expect.iter().enumerate() {
        assert_eq!((trace[1 + i].0, trace[1 + i].1), (*phase, *v), "clock {}", i + 2);
        assert_eq!(&trace[1 + i].2, *s, "scores at clock {}", i + 2);
    }
    // 6 updates (t_max), no convergence: 1 load + 12 + 1 unload clocks.
    assert_eq!(trace.len(), 14);
    assert_eq!(trace.last().unwrap().0, Phase::Done);
}

#[test]
fn sum_of_max_converges_in_one_update() {
    let mut c = Circuit::<S3x3>::new();
    for m in [[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] {
        c.store(&m).unwrap();
    }
    let (stats, cycles) = c.retrieve(&[ERASED, ERASED, 0], Rule::SumOfMax, Params::default()).unwrap();
    assert!(stats.converged);
    assert_eq!((stats.iterations, cycles), (1, 3));
    assert_eq!(flat(c.output()), [1, 1, 1, 1, 1, 1, 1, 0, 0]);
}
