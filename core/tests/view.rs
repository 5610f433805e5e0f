//! The read-only view (weights borrowed, as from flash) retrieves exactly what the owning network
//! retrieves, for every rule, and refuses a slice of the wrong length.

// `Network` (the owning side) needs the heap.
#![cfg(feature = "alloc")]
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{Network, NetworkView, Params, Rule};
use neurobits_core::Error;

#[test]
fn view_over_borrowed_words_equals_the_owning_network() {
    let mut net = Network::new(8, 50).unwrap();
    net.store_random(3, 400);
    let g = *net.geometry();
    // A copy, so that the view borrows words the network does not own (as firmware's flash).
    let words = net.weights().to_vec();
    let view = NetworkView::new(8, 50, net.stored(), &words).unwrap();
    assert_eq!(view.geometry(), net.geometry());
    let plan = ProbePlan::new(g, 3, 400, 4, 100, 5).unwrap();
    let (mut m, mut a, mut b, mut s) = ([0u16; 8], [0u64; 8], [0u64; 8], [0u64; 8]);
    for p in 0..100 {
        plan.probe(p, &mut m);
        for rule in Rule::ALL {
            let params = Params { gamma: 2, max_iter: 20 };
            let sa = view.retrieve(&m, rule, params, &mut a, &mut s).unwrap();
            let sb = net.retrieve(&m, rule, params, &mut b, &mut s).unwrap();
            assert_eq!((a, sa), (b, sb), "{} probe {p}", rule.name());
        }
    }
}

#[test]
fn view_refuses_a_slice_of_the_wrong_length() {
    let words = [0u64; 10];
    assert_eq!(NetworkView::new(3, 3, 0, &words), Err(Error::Capacity(27, 10)));
    assert_eq!(NetworkView::new(0, 3, 0, &words), Err(Error::ZeroClusters));
}
