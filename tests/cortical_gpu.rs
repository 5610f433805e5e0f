//! The cortical network's GPU variants against the CPU, bit for bit (spec §11.5 item 1): the
//! configuration A digests of the spec from the per-level, work-queue and graph variants, the
//! pipelined kernel against the CPU's pipelined schedule, the evaluation winners, the device-side initial
//! weights, and random networks of 16 … 128 minicolumns under both learning rules (the spec's and
//! the competitive one), and the default (competitive) digits configuration. Needs a CUDA GPU
//! (`make gpu-test`).

use neurobits::cortical::{self, bench::random_inputs, cpu, gpu, Network, ScheduleArg, TrainConfig, VariantArg};
use neurobits::device::DeviceChoice;
use neurobits_core::cortical::rng::{key, INIT};
use neurobits_core::cortical::rules::{Rule, LTD};
use neurobits_core::cortical::{train, Geometry, Protocol, Schedule};
use neurobits_gpu_host::cortical::Variant;
use neurobits_gpu_host::Gpu;

#[path = "common/cortical.rs"]
mod common;
use common::{A_WEIGHTS, A_WINNERS};

fn config_a(schedule: ScheduleArg, variant: VariantArg) -> TrainConfig {
    common::config_a(1, schedule, variant, DeviceChoice::Gpu)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn configuration_a_on_the_gpu_gives_the_spec_digests_and_the_cpu_winners() {
    let g = Gpu::open(0).unwrap();
    for variant in [VariantArg::PerLevel, VariantArg::Queue, VariantArg::Graph] {
        let c = config_a(ScheduleArg::Synchronous, variant);
        let p = cortical::prepare(&c).unwrap();
        let (mut net, s) = gpu::train_gpu(&g, &p, &c.config(), variant.for_schedule(c.schedule)).unwrap();
        let r = cortical::report(&mut net, &p, &c.config(), "gpu".into(), s);
        assert_eq!((r.weights_sha256.as_str(), r.winners_sha256.as_str()), (A_WEIGHTS, A_WINNERS), "{variant:?}");
        // The evaluation pass on the GPU gives the CPU's winners.
        let mut tr = gpu::upload(&g, &net, &p.train_x, variant.for_schedule(c.schedule), Rule::spec(LTD)).unwrap();
        let on_gpu = gpu::evaluate(&mut tr, p.train_labels.len()).unwrap();
        assert_eq!(on_gpu, cpu::evaluate(&mut net, &p.train_x, cpu::Threads::Single), "{variant:?}");
        println!("configuration A on the GPU ({variant:?}): spec digests reproduced, {s:.3} s");
    }
    let c = config_a(ScheduleArg::Pipelined, VariantArg::PerLevel);
    let p = cortical::prepare(&c).unwrap();
    let (mut gn, gs) = gpu::train_gpu(&g, &p, &c.config(), Variant::Pipelined).unwrap();
    let (mut cn, cs) = cortical::train_cpu(&p, &c.config(), cpu::Threads::Single).unwrap();
    let (gr, cr) = (
        cortical::report(&mut gn, &p, &c.config(), "gpu".into(), gs),
        cortical::report(&mut cn, &p, &c.config(), "cpu".into(), cs),
    );
    assert_eq!((gr.weights_sha256, gr.winners_sha256), (cr.weights_sha256.clone(), cr.winners_sha256.clone()));
    assert_ne!(cr.weights_sha256, A_WEIGHTS);
    println!("configuration A pipelined: GPU = CPU ({})", cr.weights_sha256);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_variant_equals_the_cpu_on_random_networks() {
    let g = Gpu::open(0).unwrap();
    for (levels, m) in [(7u32, 16usize), (7, 32), (6, 64), (6, 128), (9, 32)] {
        let geo = Geometry::new(levels, m).unwrap();
        let x = random_inputs(&geo, 8, 0.25, 3);
        // The device's initial weights are the host's.
        let dev = g.cortical_untrained(geo, neurobits_core::cortical::Part::whole(&geo), key(7, INIT), &x).unwrap();
        let host = Network::new(geo, 7).unwrap();
        assert_eq!(dev.state().unwrap().0, host.w, "init L={levels} M={m}");
        for rule in [Rule::spec(LTD), Rule::competitive(2)] {
            for (schedule, variant) in [
                (Schedule::Synchronous, Variant::PerLevel),
                (Schedule::Synchronous, Variant::Queue),
                (Schedule::Synchronous, Variant::Graph),
                (Schedule::Pipelined, Variant::Pipelined),
            ] {
                let protocol = Protocol { epochs: 25, exposure: 2, seed: 7 };
                let mut cpu_net = Network::new(geo, 7).unwrap();
                cpu_net.rule = rule;
                let mut tr = cpu::CpuTrainer::new(&mut cpu_net, &x, schedule, cpu::Threads::Rayon);
                let Ok(()) = train(&mut tr, &mut [0; 8], &protocol, |_| {});
                let cpu_last = tr.winners.clone();
                let mut gnet = Network::new(geo, 7).unwrap();
                gnet.rule = rule;
                let mut gt = gpu::upload(&g, &gnet, &x, variant, rule).unwrap();
                train(&mut gt, &mut [0; 8], &protocol, |_| {}).unwrap();
                let what = format!("L={levels} M={m} {variant:?} {rule:?}");
                assert_eq!(gt.dev.winners(variant).unwrap(), cpu_last, "last winners {what}");
                if variant != Variant::Pipelined {
                    // The evaluation pass (learning off) under the rule: the CPU's winners.
                    assert_eq!(
                        gpu::evaluate(&mut gt, 8).unwrap(),
                        cpu::evaluate(&mut cpu_net, &x, cpu::Threads::Single),
                        "{what}"
                    );
                }
                gpu::download(&gt, &mut gnet).unwrap();
                assert_eq!(gnet, cpu_net, "state {what}");
                let learnt = cpu_net.omega.iter().filter(|&&o| o > 0).count();
                assert!(learnt > 0, "nothing was learnt: the test would not see a difference");
                println!("{what}: GPU = CPU after {} steps ({learnt} minicolumns learnt)", gnet.t);
            }
        }
    }
}

/// The default configuration (competitive rule, 5 levels × 16 minicolumns, digits upsampled to
/// 16 × 16, 10 images per class) trained on the GPU: the CPU's weights and held-out report.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_competitive_digits_configuration_on_the_gpu_equals_the_cpu() {
    let g = Gpu::open(0).unwrap();
    for variant in [VariantArg::PerLevel, VariantArg::Queue, VariantArg::Graph] {
        let c = common::quality(1, Some(10), DeviceChoice::Gpu, variant);
        let p = cortical::prepare(&c).unwrap();
        let (mut gn, gs) = gpu::train_gpu(&g, &p, &c.config(), variant.for_schedule(c.schedule)).unwrap();
        let (mut cn, cs) = cortical::train_cpu(&p, &c.config(), cpu::Threads::Single).unwrap();
        let (gr, cr) = (
            cortical::report(&mut gn, &p, &c.config(), "gpu".into(), gs),
            cortical::report(&mut cn, &p, &c.config(), "cpu".into(), cs),
        );
        assert_eq!((&gr.weights_sha256, &gr.winners_sha256), (&cr.weights_sha256, &cr.winners_sha256), "{variant:?}");
        assert_eq!(gr.held_out, cr.held_out, "{variant:?}");
        println!(
            "competitive digits ({variant:?}): GPU = CPU ({}), held-out coverage {}",
            cr.weights_sha256, cr.held_out.coverage
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_split_over_gpus_and_the_cpu_equals_the_single_device() {
    use neurobits::cortical::split::{Dev, Plan};
    let n = Gpu::count();
    let gpus: Vec<Gpu> = (0..n.min(2)).map(|i| Gpu::open(i).unwrap()).collect();
    let second = if n >= 2 { Dev::Gpu(1) } else { Dev::Gpu(0) };
    println!("{n} GPU(s): the second worker is {second} and the CPU");
    for (levels, m) in [(6, 32), (5, 128), (7, 16)] {
        let geo = Geometry::new(levels, m).unwrap();
        let x = random_inputs(&geo, common::IMAGES, 0.3, 9);
        let (want, winners) = common::reference(geo, &x);
        let mut plans = vec![Plan::single(&geo, Dev::Gpu(0)), Plan::single(&geo, second)];
        for cut in 1..levels as usize {
            let total = geo.level_len(cut - 1);
            for h in 0..=(levels as usize - cut) {
                for first in [1, total / 2, total - 1].into_iter().filter(|&f| f >= 1 && f < total) {
                    plans.push(Plan::dealt(&geo, cut, &[Dev::Gpu(0), second], &[first, total - first], second, h));
                    plans.push(Plan::dealt(
                        &geo,
                        cut,
                        &[Dev::Gpu(0), Dev::Cpu],
                        &[first, total - first],
                        Dev::Gpu(0),
                        h,
                    ));
                }
            }
        }
        plans.dedup();
        for (k, plan) in plans.iter().enumerate() {
            // Every third run caps GPU 0 at one block per launch (the warps stride).
            let slow = (k % 3 == 2).then_some((0, 1));
            let (got, got_winners) = common::split_run(geo, &x, plan, &gpus, cpu::Threads::Rayon, slow);
            assert_eq!(got, want, "L {levels} M {m}: {plan} slow {slow:?}");
            assert_eq!(got_winners, winners, "L {levels} M {m}: {plan}");
        }
        println!(
            "L = {levels}, M = {m}: {} splits over GPUs and the CPU = one CPU thread ({})",
            plans.len(),
            &want[..16]
        );
    }
}
