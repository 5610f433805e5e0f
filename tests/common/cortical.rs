//! The cortical network's configuration A (spec §11.6) and its seed-1 digests (spec §11.5),
//! shared by the CPU, GPU and firmware tests.
#![allow(dead_code)]

use neurobits::cortical::cpu::{CpuTrainer, Threads};
use neurobits::cortical::split::{Plan, SplitNet};
use neurobits::cortical::{ImageArgs, Network, RuleArg, ScheduleArg, TrainConfig, VariantArg};
use neurobits::device::DeviceChoice;
use neurobits_core::cortical::{Geometry, Learner, Schedule};
use neurobits_gpu_host::Gpu;
use std::path::PathBuf;

pub const DIGITS: &str = "data/digits/digits.csv.gz";
pub const A_WEIGHTS: &str = "f51cb83e12e8f1fbd65974907f3399c7cb37ebf43f42e444e662f0c2f950854f";
pub const A_WINNERS: &str = "aa6b76a50627c9311260dbbb8527707dee41fd9f84826e7c86665ee8d278e180";

/// `cortical train` flags of configuration A under the spec's rule (the defaults are the
/// competitive rule's quality configuration).
pub const A_FLAGS: [&str; 12] = [
    "--rule",
    "spec",
    "--levels",
    "3",
    "--upsample",
    "1",
    "--epochs",
    "60",
    "--exposure",
    "4",
    "--train-per-class",
    "1",
];

/// The digits file, which `make setup` extracts.
pub fn digits() -> PathBuf {
    let p = PathBuf::from(DIGITS);
    assert!(p.exists(), "{DIGITS} is missing: run `make setup` (it extracts it from the scikit-learn wheel)");
    p
}

/// Configuration A (3 levels × 16 minicolumns, 1 digit per class, 60 epochs, exposure 4) on `device`.
pub fn config_a(seed: u64, schedule: ScheduleArg, variant: VariantArg, device: DeviceChoice) -> TrainConfig {
    TrainConfig {
        images: ImageArgs {
            data: digits(),
            train_per_class: Some(1),
            test_per_class: 50,
            validation_per_class: 0,
            upsample: 1,
            lgn_threshold: None,
        },
        levels: 3,
        minicolumns: 16,
        epochs: 60,
        exposure: 4,
        seed,
        beta: 0.5,
        rule: RuleArg::Spec,
        rate: 2,
        variant,
        schedule,
        device,
        single_thread: false,
        json: None,
        out: None,
    }
}

/// The defaults of `cortical train` (competitive rule, 5 levels × 16 minicolumns, upsample 2,
/// 20 epochs, exposure 1, rate 2) with `per_class` training images per class (all: `None`).
pub fn quality(seed: u64, per_class: Option<usize>, device: DeviceChoice, variant: VariantArg) -> TrainConfig {
    TrainConfig {
        images: ImageArgs {
            data: digits(),
            train_per_class: per_class,
            test_per_class: 50,
            validation_per_class: 0,
            upsample: 2,
            lgn_threshold: None,
        },
        levels: 5,
        minicolumns: 16,
        epochs: 20,
        exposure: 1,
        seed,
        beta: 0.5,
        rule: RuleArg::Competitive,
        rate: 2,
        variant,
        schedule: ScheduleArg::Synchronous,
        device,
        single_thread: false,
        json: None,
        out: None,
    }
}

pub const STEPS: u64 = 40;
pub const IMAGES: usize = 4;

/// Weights digest and evaluation winners (image 0) after `STEPS` learning steps of the untrained
/// network of seed 3 on the CPU, one thread.
pub fn reference(geo: Geometry, x: &[u64]) -> (String, Vec<i32>) {
    let mut net = Network::new(geo, 3).unwrap();
    let mut tr = CpuTrainer::new(&mut net, x, Schedule::Synchronous, Threads::Single);
    for t in 0..STEPS {
        let Ok(()) = tr.learn(t as usize % IMAGES);
    }
    let mut w = vec![-1; geo.hypercolumns()];
    neurobits::cortical::cpu::step(
        &mut net,
        &x[..geo.bottom_words()],
        &mut w,
        None,
        false,
        neurobits_core::cortical::rules::Rule::spec(32768),
        Threads::Single,
    );
    (net.weights_sha256(), w)
}

/// The same from the network split by `plan` over `gpus` and the CPU (GPU `i` capped at
/// `blocks` blocks per launch for `slow = Some((i, blocks))`), gathered back.
pub fn split_run(
    geo: Geometry,
    x: &[u64],
    plan: &Plan,
    gpus: &[Gpu],
    threads: Threads,
    slow: Option<(usize, u32)>,
) -> (String, Vec<i32>) {
    let net = Network::new(geo, 3).unwrap();
    let mut s = SplitNet::new(&net, plan, gpus, x, threads).unwrap();
    if let Some((i, b)) = slow {
        s.slow_down(i, b);
    }
    for t in 0..STEPS {
        s.learn(t as usize % IMAGES).unwrap();
    }
    s.step(0, false).unwrap();
    let mut out = Network::new(geo, 3).unwrap();
    s.gather(&mut out).unwrap();
    (out.weights_sha256(), s.winners().unwrap())
}
