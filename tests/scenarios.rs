//! The paper's scenarios, at test scale.

use neurobits::device::Cpu;
use neurobits::gbnn::rates;
use neurobits::gbnn::scenario::scenario;
use neurobits_core::gbnn::{Network, Params, Rule};

#[test]
fn parallel_scenario_store_equals_serial_store() {
    let s = scenario(1).unwrap();
    let mut serial = Network::new(s.clusters, s.neurons).unwrap();
    serial.store_random(5, s.stored);
    assert_eq!(s.network(5).unwrap(), serial);
}

/// Paper Fig. 14d: every rule retrieves effectively 100 % of Scenario 2 up to 13 erased clusters.
#[test]
fn scenario2_near_100_percent_up_to_13_erased_for_every_rule() {
    let s = scenario(2).unwrap();
    let net = s.network(1).unwrap();
    let cpu = Cpu::new(None).unwrap();
    for e in [7, 13] {
        let (probes, truth) = s.probes(1, 200, e).unwrap();
        for rule in Rule::ALL {
            let b = cpu.retrieve(&net, &probes, rule, &Params { gamma: 2, max_iter: 20 }).unwrap();
            let r = rates(net.geometry(), &b.states, &truth);
            assert!(r.strict >= 0.98, "{rule:?} at {e} erased: {r:?}");
        }
    }
}

/// Paper Section VII-A (Scenario 1, γ = 2) on 1000 probes per point.
#[test]
fn scenario1_reproduces_the_papers_trends() {
    let s = scenario(1).unwrap();
    let net = s.network(1).unwrap();
    let cpu = Cpu::new(None).unwrap();
    let p = Params { gamma: 2, max_iter: 20 };
    let rate = |rule, e| {
        let (probes, truth) = s.probes(1, 1000, e).unwrap();
        let b = cpu.retrieve(&net, &probes, rule, &p).unwrap();
        rates(net.geometry(), &b.states, &truth)
    };
    let (sos5, som5, joint5) = (rate(Rule::SumOfSum, 5), rate(Rule::SumOfMax, 5), rate(Rule::Joint, 5));
    assert!((0.45..0.65).contains(&sos5.strict), "{sos5:?}");
    assert!(som5.expected > 0.9 && som5.strict > 0.85, "{som5:?}");
    assert_eq!(joint5.strict, som5.strict);
    let som6 = rate(Rule::SumOfMax, 6);
    assert!(som6.strict > 0.15 && som6.expected > 0.18, "{som6:?}");
    assert!(rate(Rule::SumOfSum, 6).strict < som6.strict / 2.0);
}
