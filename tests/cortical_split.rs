//! The multi-device split (spec §6, §11.4): every split the profiler can produce gives the
//! single device's bits (P-4), shown here with CPU workers (each holding only its part, moving
//! winners through inboxes exactly as the GPUs do); and the partitioner's decisions on injected
//! costs.

use neurobits::cortical::bench::random_inputs;
use neurobits::cortical::cpu::Threads;
use neurobits::cortical::split::plan::{deal, largest_remainder, predict};
use neurobits::cortical::split::profile::{profile_cpu, DeviceCosts, LevelCost};
use neurobits::cortical::split::{partition, Costs, Dev, Plan, Slot, SplitNet};
use neurobits::cortical::Network;
use neurobits_core::cortical::Geometry;

#[path = "common/cortical.rs"]
mod common;
use common::{reference, split_run, IMAGES};

/// Every cut, every 2-way deal of its subtrees (or every deal point up to 8), every number of
/// CPU top levels: the lower workers, the middle worker and the top worker are separate parts.
fn every_split(geo: Geometry) -> Vec<Plan> {
    let l = geo.levels();
    let mut plans = vec![Plan::single(&geo, Dev::Cpu)];
    for cut in 1..l {
        let total = geo.level_len(cut - 1);
        for first in (1..total).take(8) {
            for h in 0..=(l - cut) {
                plans.push(Plan::dealt(&geo, cut, &[Dev::Cpu, Dev::Cpu], &[first, total - first], Dev::Cpu, h));
            }
        }
    }
    plans
}

#[test]
fn every_split_equals_the_single_device() {
    for (levels, m) in [(5, 16), (4, 128), (6, 32)] {
        let geo = Geometry::new(levels, m).unwrap();
        let x = random_inputs(&geo, IMAGES, 0.3, 9);
        let (want, winners) = reference(geo, &x);
        assert!(winners.iter().any(|&w| w >= 0), "the reference network is silent");
        let plans = every_split(geo);
        for (k, plan) in plans.iter().enumerate() {
            let threads = if k % 2 == 0 { Threads::Single } else { Threads::Rayon };
            let (got, got_winners) = split_run(geo, &x, plan, &[], threads, None);
            assert_eq!(got, want, "L {levels} M {m}: {plan}");
            assert_eq!(got_winners, winners, "L {levels} M {m}: {plan}");
        }
        eprintln!("L = {levels}, M = {m}: {} splits = single device ({})", plans.len(), &want[..16]);
    }
}

#[test]
fn untrained_parts_equal_the_untrained_network() {
    let geo = Geometry::new(5, 16).unwrap();
    let x = random_inputs(&geo, IMAGES, 0.3, 9);
    let plan = Plan::dealt(&geo, 3, &[Dev::Cpu, Dev::Cpu], &[1, 3], Dev::Cpu, 1);
    let s = SplitNet::untrained(&geo, 3, &plan, &[], &x, Threads::Single).unwrap();
    let mut got = Network::new(geo, 99).unwrap();
    s.gather(&mut got).unwrap();
    assert_eq!(got.w, Network::new(geo, 3).unwrap().w);
}

/// Costs per hypercolumn (seconds) per device, a launch latency, a fixed transfer latency.
struct Mock {
    per_hc: Vec<(Dev, f64, f64)>,
    transfer: f64,
}

impl Costs for Mock {
    fn level(&self, d: Dev, _l: usize, n: usize) -> f64 {
        let (_, per, lat) = self.per_hc.iter().find(|p| p.0 == d).copied().unwrap();
        lat + per * n as f64
    }
    fn transfer(&self, from: Dev, to: Dev, _n: usize) -> f64 {
        if from == to {
            0.0
        } else {
            self.transfer
        }
    }
}

const BIG: u64 = 1 << 40;

#[test]
fn three_times_faster_gets_three_quarters() {
    // The paper's C2050 vs its slower GPU at 16K hypercolumns.
    let geo = Geometry::new(14, 128).unwrap();
    let mock = Mock { per_hc: vec![(Dev::Gpu(0), 3e-7, 5e-6), (Dev::Gpu(1), 1e-7, 5e-6)], transfer: 1e-5 };
    let slots = [Slot { dev: Dev::Gpu(0), capacity: BIG }, Slot { dev: Dev::Gpu(1), capacity: BIG }];
    let c = partition(&geo, &slots, &mock).unwrap();
    let counts = c.plan.counts(&[Dev::Gpu(0), Dev::Gpu(1)]);
    let total = geo.level_len(c.plan.cut - 1);
    assert_eq!(counts.iter().sum::<usize>(), total);
    assert!(total >= 4, "{}", c.plan);
    assert_eq!(counts[1], total * 3 / 4, "{}", c.plan);
    // Upper levels on the faster GPU.
    assert!(c.plan.upper.iter().all(|u| u.0 == Dev::Gpu(1)), "{}", c.plan);
    // It beats the faster device alone.
    let alone = predict(&geo, &mock, geo.levels(), &[Dev::Gpu(1)], &[1], Dev::Gpu(1), 0);
    assert!(c.predicted < alone * 0.8, "{} vs {}", c.predicted, alone);
}

#[test]
fn a_full_fast_device_overflows_to_the_other() {
    let geo = Geometry::new(12, 32).unwrap();
    let bytes = neurobits::cortical::split::plan::column_bytes(&geo);
    let mock = Mock { per_hc: vec![(Dev::Gpu(0), 4e-7, 5e-6), (Dev::Gpu(1), 1e-7, 5e-6)], transfer: 1e-5 };
    // GPU 1 can hold a quarter of the network: performance first, DRAM second.
    let cap = bytes * geo.hypercolumns() as u64 / 4;
    let slots = [Slot { dev: Dev::Gpu(0), capacity: BIG }, Slot { dev: Dev::Gpu(1), capacity: cap }];
    let c = partition(&geo, &slots, &mock).unwrap();
    let counts = c.plan.counts(&[Dev::Gpu(0), Dev::Gpu(1)]);
    let total = geo.level_len(c.plan.cut - 1);
    let held: u64 = counts[1] as u64 * ((1u64 << c.plan.cut) - 1) * bytes
        + c.plan
            .upper
            .iter()
            .filter(|u| u.0 == Dev::Gpu(1))
            .map(|u| (geo.offset(u.2) - geo.offset(u.1)) as u64)
            .sum::<u64>()
            * bytes;
    assert!(held <= cap, "{} holds {held} > {cap}", c.plan);
    assert!(counts[1] > 0 && counts[0] > counts[1], "{}", c.plan);
    assert_eq!(counts.iter().sum::<usize>(), total);
    // Nothing fits: no plan.
    let tiny = [Slot { dev: Dev::Gpu(0), capacity: bytes }, Slot { dev: Dev::Gpu(1), capacity: bytes }];
    assert!(partition(&geo, &tiny, &mock).is_none());
}

#[test]
fn tiny_top_levels_go_to_the_cpu() {
    // Fig. 9: a launch costs the GPU 10 us whatever its size; the CPU 2 us per hypercolumn;
    // a transfer 3 us. The CPU takes the levels of 1, 2 and 4 hypercolumns (14 + 3 us against
    // 30 us on the GPU); the level of 8 would cost it 16 us, the GPU 10.
    let geo = Geometry::new(10, 32).unwrap();
    let mock = Mock { per_hc: vec![(Dev::Gpu(0), 1e-11, 1e-5), (Dev::Cpu, 2e-6, 0.0)], transfer: 3e-6 };
    let slots = [Slot { dev: Dev::Gpu(0), capacity: BIG }, Slot { dev: Dev::Cpu, capacity: BIG }];
    let c = partition(&geo, &slots, &mock).unwrap();
    assert_eq!(c.plan.cpu_levels(), 3, "{}", c.plan);
    assert!(c.plan.lower.iter().all(|l| l.0 == Dev::Gpu(0)), "{}", c.plan);
    // A CPU three times as slow takes only the top level (6 + 3 < 10 us; two levels: 18 + 3 > 19).
    let slow = Mock { per_hc: vec![(Dev::Gpu(0), 1e-11, 1e-5), (Dev::Cpu, 6e-6, 0.0)], transfer: 3e-6 };
    assert_eq!(partition(&geo, &slots, &slow).unwrap().plan.cpu_levels(), 1);
}

/// [`Mock`] with a host cost per GPU launch and a CPU wake-up cost.
struct Host<'a> {
    base: &'a Mock,
    issue: f64,
    wake: f64,
}

impl Costs for Host<'_> {
    fn level(&self, d: Dev, l: usize, n: usize) -> f64 {
        self.base.level(d, l, n)
    }
    fn transfer(&self, from: Dev, to: Dev, n: usize) -> f64 {
        self.base.transfer(from, to, n)
    }
    fn issue(&self, d: Dev) -> f64 {
        if d == Dev::Cpu {
            0.0
        } else {
            self.issue
        }
    }
    fn wake(&self) -> f64 {
        self.wake
    }
}

#[test]
fn launches_issued_by_one_host_thread_and_a_waking_cpu_are_costed() {
    use neurobits::cortical::split::plan::predict;
    // Every level 1 us on either GPU, 0.1 us per hypercolumn on the CPU, free transfers;
    // issuing a launch takes the host 3 us, waking the CPU 20 us.
    let geo = Geometry::new(6, 32).unwrap();
    let mock =
        Mock { per_hc: vec![(Dev::Gpu(0), 0.0, 1e-6), (Dev::Gpu(1), 0.0, 1e-6), (Dev::Cpu, 1e-7, 0.0)], transfer: 0.0 };
    let host = Host { base: &mock, issue: 3e-6, wake: 20e-6 };
    let (g, counts) = ([Dev::Gpu(0), Dev::Gpu(1)], [4, 4]);
    // Without host costs: 3 lower levels then 3 upper ones, 6 us.
    let plain = predict(&geo, &mock, 3, &g, &counts, Dev::Gpu(1), 0);
    assert!((plain - 6e-6).abs() < 1e-12, "{plain}");
    // Each upper level takes its 3 us of issue (9 us); GPU 1 would start after GPU 0's 3 launches
    // were issued (9 us), but it is still running the step before's upper levels then: 9 + 9 us.
    let costed = |h| predict(&geo, &host, 3, &g, &counts, Dev::Gpu(1), h);
    assert!((costed(0) - 18e-6).abs() < 1e-12, "{}", costed(0));
    // With the upper levels on GPU 0, GPU 1 waits for the issue: 9 + 9 + 9 us.
    let on_0 = predict(&geo, &host, 3, &g, &counts, Dev::Gpu(0), 0);
    assert!((on_0 - 27e-6).abs() < 1e-12, "{on_0}");
    // With a CPU level the host waits at the end of each step, so nothing hides the issue: GPU 1
    // starts at 9 us and runs 9 us (its own issue).
    // The top level (1 hypercolumn) on the CPU: 0.1 us, plus the CPU's wake-up, once however
    // many levels it runs.
    assert!((costed(1) - (18e-6 + 6e-6 + 0.1e-6 + 20e-6)).abs() < 1e-12, "{}", costed(1));
    assert!((costed(2) - (18e-6 + 3e-6 + 0.3e-6 + 20e-6)).abs() < 1e-12, "{}", costed(2));
    // So the partitioner keeps the top levels on the GPU once waking the CPU costs more than
    // the CPU saves.
    let slots = [
        Slot { dev: Dev::Gpu(0), capacity: BIG },
        Slot { dev: Dev::Gpu(1), capacity: BIG },
        Slot { dev: Dev::Cpu, capacity: BIG },
    ];
    let free = Host { base: &mock, issue: 0.0, wake: 0.0 };
    assert!(partition(&geo, &slots, &free).unwrap().plan.cpu_levels() > 0);
    assert_eq!(partition(&geo, &slots, &host).unwrap().plan.cpu_levels(), 0);
}

#[test]
fn without_a_gpu_the_cpu_runs_everything() {
    let geo = Geometry::new(6, 16).unwrap();
    let mock = Mock { per_hc: vec![(Dev::Cpu, 1e-6, 0.0)], transfer: 0.0 };
    let c = partition(&geo, &[Slot { dev: Dev::Cpu, capacity: BIG }], &mock).unwrap();
    assert_eq!(c.plan, Plan::single(&geo, Dev::Cpu));
}

#[test]
fn rounding_and_dealing() {
    assert_eq!(largest_remainder(4, &[1.0, 3.0]), vec![1, 3]);
    assert_eq!(largest_remainder(7, &[1.0, 1.0, 1.0]), vec![3, 2, 2]);
    assert_eq!(largest_remainder(8, &[2.0, 1.0]).iter().sum::<usize>(), 8);
    // The fast device (rate 3) is capped at 4: the 2 it cannot hold go to the other.
    assert_eq!(deal(8, &[1.0, 3.0], &[8, 4]), Some(vec![4, 4]));
    assert_eq!(deal(8, &[1.0, 3.0], &[3, 4]), None);
}

#[test]
fn level_costs_are_read_off_the_sample() {
    let lc = |level, n, s| LevelCost { level, hypercolumns: n, seconds: s, per_hypercolumn: s / n as f64 };
    // A sample of 4 levels: bottom 8 HCs in 8 us; upper levels of 4, 2, 1 in 5, 4, 4 us.
    let d = DeviceCosts {
        dev: Dev::Gpu(0),
        name: "mock".into(),
        sample_levels: 4,
        levels: vec![lc(0, 8, 8e-6), lc(1, 4, 5e-6), lc(2, 2, 4e-6), lc(3, 1, 4e-6)],
        event_gap: 0.0,
        transfer: 1e-6,
        issue: 2e-6,
        wake: 0.0,
    };
    let p = neurobits::cortical::split::profile::Profile { devices: vec![d] };
    let g = Dev::Gpu(0);
    assert!((p.level(g, 0, 32) - 32e-6).abs() < 1e-12); // the bottom scales
    assert!((p.level(g, 5, 16) - 20e-6).abs() < 1e-12); // beyond the sample: the largest level's rate
    assert!((p.level(g, 5, 3) - 4.5e-6).abs() < 1e-12); // between 2 and 4: interpolated
    assert!((p.level(g, 9, 1) - 4e-6).abs() < 1e-12);
    assert_eq!(p.transfer(g, g, 10), 0.0);
    assert!(p.level(Dev::Gpu(1), 0, 1).is_infinite());
    assert_eq!((p.issue(g), p.issue(Dev::Cpu), p.wake()), (2e-6, 0.0, 0.0));
}

#[test]
fn the_cpu_profile_measures_every_level() {
    let geo = Geometry::new(14, 16).unwrap();
    let d = profile_cpu(&geo, 0.25, 5).unwrap();
    // The sample is capped at 12 levels; every level took time; the bottom costs most.
    assert_eq!((d.sample_levels, d.levels.len()), (12, 12));
    assert!(d.levels.iter().all(|l| l.seconds > 0.0));
    assert!(d.levels[0].seconds > d.levels[11].seconds);
    let p = neurobits::cortical::split::profile::Profile { devices: vec![d] };
    let c = partition(&geo, &[Slot { dev: Dev::Cpu, capacity: BIG }], &p).unwrap();
    assert_eq!(c.plan, Plan::single(&geo, Dev::Cpu));
    assert!(c.predicted > 0.0 && c.predicted.is_finite());
}

#[test]
fn profile_bad_input_is_one_line_and_exit_2() {
    use assert_cmd::Command;
    // Without a GPU (CI) every call fails; with one, only the bad arguments do.
    let has_gpu = neurobits_gpu_host::Gpu::count() > 0;
    let mut cases = vec![
        vec!["--levels", "0"],
        vec!["--minicolumns", "129"],
        vec!["--density", "2"],
        vec!["--steps", "0"],
        vec!["--slow", "1"],
        vec!["--slow", "0:0"],
    ];
    if !has_gpu {
        cases.push(vec!["--levels", "5"]);
    }
    for bad in cases {
        let a = Command::cargo_bin("neurobits").unwrap().args(["cortical", "profile"]).args(&bad).assert();
        let o = a.get_output();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
    let a = Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "profile-figure", "--out", "/tmp/x.svg", "/nonexistent.json"])
        .assert();
    assert_eq!(a.get_output().status.code(), Some(2));
}

/// The plans `cortical profile` times before choosing: one per number of CPU top levels, in
/// order of prediction, the first the partitioner's choice, each the best predicted of its count.
#[test]
fn candidates_span_the_cpu_levels() {
    use neurobits::cortical::split::plan::{candidates, plan_for};
    let geo = Geometry::new(10, 32).unwrap();
    let mock = Mock {
        per_hc: vec![(Dev::Gpu(0), 2e-7, 5e-6), (Dev::Gpu(1), 2e-7, 5e-6), (Dev::Cpu, 2e-6, 0.0)],
        transfer: 1e-5,
    };
    let slots = [
        Slot { dev: Dev::Gpu(0), capacity: BIG },
        Slot { dev: Dev::Gpu(1), capacity: BIG },
        Slot { dev: Dev::Cpu, capacity: BIG },
    ];
    let c = candidates(&geo, &slots, &mock, 4);
    assert_eq!(c.len(), 4);
    assert_eq!(c[0].plan, partition(&geo, &slots, &mock).unwrap().plan);
    assert!(c.windows(2).all(|w| w[0].predicted <= w[1].predicted));
    for (i, x) in c.iter().enumerate() {
        assert!(c[..i].iter().all(|y| y.plan.cpu_levels() != x.plan.cpu_levels()), "{}", x.plan);
        // Nothing with its number of CPU levels is predicted faster.
        for cut in 1..=geo.levels() {
            for h in 0..=geo.levels() - cut {
                if let Some(ch) = plan_for(&geo, &slots, &mock, cut, h) {
                    if ch.plan.cpu_levels() == x.plan.cpu_levels() {
                        assert!(ch.predicted >= x.predicted, "{} beats {}", ch.plan, x.plan);
                    }
                }
            }
        }
    }
    assert_eq!(candidates(&geo, &slots, &mock, 1).len(), 1);
}

/// `cortical profile-figure --levels-out` draws the time per level of each profiled device (the
/// paper's Fig. 9) from the committed 2-H200 profile: two GPUs and the CPU.
#[test]
fn level_figure_from_the_h200_profile() {
    let dir = tempfile::tempdir().unwrap();
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/results/cortical/profile-h200x2-l16.json");
    let (fig26, fig9) = (dir.path().join("f26.svg"), dir.path().join("f9.svg"));
    assert_cmd::Command::cargo_bin("neurobits")
        .unwrap()
        .args(["cortical", "profile-figure", run, "--out"])
        .arg(&fig26)
        .arg("--levels-out")
        .arg(&fig9)
        .assert()
        .success();
    let s = std::fs::read_to_string(&fig9).unwrap();
    assert!(s.contains("gpu0") && s.contains("gpu1") && s.contains("cpu"), "a curve per device");
    assert!(std::fs::metadata(&fig26).unwrap().len() > 0);
}
