//! Criterion benches of the CPU rules (`make bench`). The paper-scale side-by-side table is the
//! CLI's `neurobits gbnn bench`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use neurobits::device::Cpu;
use neurobits::gbnn::scenario::scenario;
use neurobits_core::gbnn::{retrieve, Params, Rule};

fn single_probe(c: &mut Criterion) {
    let s = scenario(1).unwrap();
    let net = s.network(1).unwrap();
    let (probes, _) = s.probes(1, 64, s.erased).unwrap();
    let g = *net.geometry();
    let params = Params { gamma: 2, max_iter: 20 };
    let mut group = c.benchmark_group("scenario1_single_probe");
    group.throughput(Throughput::Elements(64));
    for rule in Rule::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(rule.name()), &rule, |b, &rule| {
            let (mut v, mut sc) = (vec![0; g.row_words()], vec![0; g.row_words()]);
            b.iter(|| {
                for p in probes.chunks(g.clusters()) {
                    retrieve(&g, net.weights(), p, rule, &params, &mut v, &mut sc);
                }
            })
        });
    }
    group.finish();
}

fn batch_scenario2(c: &mut Criterion) {
    let s = scenario(2).unwrap();
    let net = s.network(1).unwrap();
    let (probes, _) = s.probes(1, s.probes, s.erased).unwrap();
    let cpu = Cpu::new(None).unwrap();
    let params = Params { gamma: 2, max_iter: 20 };
    let mut group = c.benchmark_group("scenario2_batch_30000");
    group.sample_size(10);
    group.throughput(Throughput::Elements(s.probes));
    for rule in [Rule::Joint, Rule::BailOutEarly] {
        group.bench_function(rule.name(), |b| b.iter(|| cpu.retrieve(&net, &probes, rule, &params).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, single_probe, batch_scenario2);
criterion_main!(benches);
