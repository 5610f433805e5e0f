//! The circuit decodes exactly what the software drivers decode.

use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{retrieve, Params, Rule, ERASED};
use neurobits_fpga::{Circuit, Report, S16x25, S4x100, S8x50, Size};

fn check<S: Size>(stored: u64) {
    let mut circuit = Circuit::<S>::new();
    let g = *circuit.geometry();
    let mut m = vec![0u16; S::C];
    for k in 0..stored {
        message(&g, 7, k, &mut m);
        circuit.store(&m).unwrap();
    }
    assert_eq!(circuit.cycles(), stored, "one clock per stored message");
    // 10 000+ probes per rule: every erased count, stored and never-stored messages.
    let mut probes = Vec::new();
    let per_e = 10_000 / (S::C - 1) as u64 + 1;
    for e in 1..S::C {
        let mut round = 0;
        while (probes.len() / S::C) < per_e as usize * e {
            // Even rounds: probes of stored messages; odd rounds: of never-stored ones.
            let seed = if round % 2 == 0 { 7 } else { 1234 + round };
            let plan = ProbePlan::new(g, seed, stored, 40 + 100 * e as u64 + round, stored, e).unwrap();
            for p in 0..stored {
                plan.probe(p, &mut m);
                probes.extend_from_slice(&m);
            }
            round += 1;
        }
    }
    let count = probes.len() / S::C;
    assert!(count >= 10_000, "{count}");
    let (mut v, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()]);
    for rule in Rule::ALL {
        let params = Params { gamma: 2, max_iter: 20 };
        let mut report = Report::default();
        for p in probes.chunks(S::C) {
            let (stats, cycles) = circuit.retrieve(p, rule, params).unwrap();
            let want = retrieve(&g, circuit.weights(), p, rule, &params, &mut v, &mut s);
            assert_eq!(circuit.output(), &v[..], "{rule:?} {p:?}");
            assert_eq!(stats, want, "{rule:?} {p:?}");
            assert_eq!(cycles, 2 + Report::cycles_per_update(rule) * stats.iterations as u64);
            report.add(cycles, stats.iterations);
        }
        assert_eq!(report.probes, count as u64);
    }
}

#[test]
fn circuit_8x50_equals_the_core() {
    check::<S8x50>(300);
}

#[test]
fn circuit_4x100_equals_the_core() {
    check::<S4x100>(300);
}

#[test]
fn circuit_16x25_equals_the_core() {
    check::<S16x25>(150);
}

#[test]
fn bad_probes_are_refused() {
    let mut c = Circuit::<S8x50>::new();
    assert!(c.retrieve(&[0; 7], Rule::Joint, Params::default()).is_err());
    assert!(c.retrieve(&[50, 0, 0, 0, 0, 0, 0, ERASED], Rule::Joint, Params::default()).is_err());
    assert!(c.store(&[0, 0, 0, 0, 0, 0, 0, ERASED]).is_err());
}

/// The circuit's controller runs the core's schedule, so edge cases of the update limit agree
/// too: with `max_iter = 0` sum-of-sum runs no update on either (the circuit used to run one).
#[test]
fn update_limit_edge_cases_agree_with_the_core() {
    use neurobits_fpga::S3x3;
    let mut c = Circuit::<S3x3>::new();
    for m in [[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 2, 0]] {
        c.store(&m).unwrap();
    }
    let g = *c.geometry();
    let (mut v, mut s) = ([0u64; 3], [0u64; 3]);
    for max_iter in [0, 1, 2, 3] {
        for rule in Rule::ALL {
            let params = Params { gamma: 1, max_iter };
            let probe = [ERASED, ERASED, 0];
            let (hw, _) = c.retrieve(&probe, rule, params).unwrap();
            let sw = retrieve(&g, c.weights(), &probe, rule, &params, &mut v, &mut s);
            assert_eq!(hw, sw, "{} with max_iter {max_iter}", rule.name());
            assert_eq!(c.output(), &v[..], "{} with max_iter {max_iter}", rule.name());
        }
    }
}

/// The noisy and sparse modes (issue 36), state for state and clock for clock against the core's
/// `retrieve_in`: noisy probes of full messages (0 to C − 2 erased, 1 to 2 substituted) and
/// sparse probes of messages of half the clusters (silent clusters `SILENT`), both rules, γ = 1
/// and 2, on every compiled size.
fn check_modes<S: Size>(stored: u64) {
    use neurobits_core::gbnn::workload::sparse_message;
    use neurobits_core::gbnn::{retrieve_in, Mode};
    let g = *Circuit::<S>::new().geometry();
    let (mut v, mut s) = (vec![0; g.row_words()], vec![0; g.row_words()]);
    let mut m = vec![0u16; S::C];
    let mut total = 0;
    for mode in [Mode::Noisy, Mode::Sparse] {
        let active = if mode == Mode::Sparse { (S::C / 2).max(2) } else { S::C };
        let mut circuit = Circuit::<S>::new();
        for k in 0..stored {
            sparse_message(&g, 7, k, active, &mut m);
            circuit.store(&m).unwrap();
        }
        let subs: &[usize] = if mode == Mode::Noisy { &[1, 2] } else { &[0] };
        let mut probes = Vec::new();
        for e in 0..active - 1 {
            for &sub in subs.iter().filter(|&&sub| e + sub <= active) {
                // Stored messages, or (every other combination) never-stored ones.
                let seed = if (e + sub) % 2 == 0 { 7 } else { 1234 };
                let plan = ProbePlan::new(g, seed, stored, 40 + 10 * e as u64 + sub as u64, stored, e).unwrap();
                let plan = plan.with_modes(active, sub).unwrap();
                for p in 0..stored {
                    plan.probe(p, &mut m);
                    probes.extend_from_slice(&m);
                }
            }
        }
        for rule in Rule::ALL.into_iter().filter(|r| r.supports(mode)) {
            for gamma in [1, 2] {
                let params = Params { gamma, max_iter: 20 };
                for p in probes.chunks(S::C) {
                    let (stats, cycles) = circuit.retrieve_in(p, rule, mode, params).unwrap();
                    let want = retrieve_in(&g, circuit.weights(), p, rule, mode, &params, &mut v, &mut s);
                    assert_eq!(circuit.output(), &v[..], "{rule:?} {mode:?} {p:?}");
                    assert_eq!(stats, want, "{rule:?} {mode:?} {p:?}");
                    assert_eq!(cycles, 2 + Report::cycles_per_update_in(rule, mode) * stats.iterations as u64);
                }
            }
        }
        total += probes.len() / S::C;
    }
    assert!(total >= 2_000, "{total}");
    // Rules a mode does not define are refused at `start`, as on every target.
    let mut c = Circuit::<S>::new();
    assert!(c.retrieve_in(&vec![0; S::C], Rule::Joint, Mode::Noisy, Params::default()).is_err());
    assert!(c
        .retrieve_in(&vec![neurobits_core::gbnn::SILENT; S::C], Rule::SumOfSum, Mode::Noisy, Params::default())
        .is_err());
}

#[test]
fn circuit_modes_8x50_equal_the_core() {
    check_modes::<S8x50>(300);
}

#[test]
fn circuit_modes_4x100_equal_the_core() {
    check_modes::<S4x100>(300);
}

#[test]
fn circuit_modes_16x25_equal_the_core() {
    check_modes::<S16x25>(150);
}
