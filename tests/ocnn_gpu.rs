//! OCNN on the GPU ≡ CPU: the spec's two digests (hit matrix, final state) and the labels are
//! equal on 12 point sets — 2-D and 3-D, f32 and f64, phase and fragmentary synchronization.
//! Needs a CUDA GPU (`make gpu-test`); the FCPS sets come from `make setup`.

#[path = "common/ocnn_points.rs"]
mod common;
use common::{fcps, random};
use neurobits::ocnn::{self, points, Config, Dtype, SyncArg};
use neurobits_gpu_host::Gpu;

fn config(sync: SyncArg, dtype: Dtype, iters: u32) -> Config {
    Config {
        seed: 3,
        iters,
        transient: 10,
        sync,
        eps: 0.2,
        threshold: None,
        select: ocnn::Select::Stable,
        min_cluster: None,
        scales: vec![1.0],
        restarts: 1,
        links: ocnn::Links::Mutual,
        scale: None,
        cutoff: None,
        dtype,
        variant: ocnn::Variant::XThreads,
        early_stop: None,
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ocnn_gpu_equals_cpu_bit_for_bit() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let data = |name: &str, skip: usize| fcps(name).skip(skip);
    let sets: Vec<(&str, points::Points, SyncArg, Dtype)> = vec![
        ("Lsun 2-D", data("Lsun.data", 3), SyncArg::Phase, Dtype::F32),
        ("Lsun 2-D f64", data("Lsun.data", 3), SyncArg::Phase, Dtype::F64),
        ("Target 2-D fragmentary", data("Target.data", 0), SyncArg::Fragmentary, Dtype::F32),
        ("TwoDiamonds 2-D", data("TwoDiamonds.data", 0), SyncArg::Phase, Dtype::F32),
        ("WingNut 2-D f64 fragmentary", data("WingNut.data", 0), SyncArg::Fragmentary, Dtype::F64),
        ("Hepta 3-D", data("Hepta.data", 0), SyncArg::Phase, Dtype::F32),
        ("Tetra 3-D f64", data("Tetra.data", 0), SyncArg::Phase, Dtype::F64),
        ("Atom 3-D fragmentary", data("Atom.data", 0), SyncArg::Fragmentary, Dtype::F32),
        ("Chainlink 3-D", data("Chainlink.data", 0), SyncArg::Phase, Dtype::F32),
        ("random 2-D n=1000", random(1000, 2, 7), SyncArg::Phase, Dtype::F32),
        ("random 3-D n=517 f64 fragmentary", random(517, 3, 8), SyncArg::Fragmentary, Dtype::F64),
        ("random 2-D n=33", random(33, 2, 9), SyncArg::Phase, Dtype::F32),
    ];
    for (name, p, sync, dtype) in &sets {
        let c = config(*sync, *dtype, 300);
        let cpu = ocnn::cluster(p, &c, None).unwrap();
        if *dtype == Dtype::F32 {
            // The lane rows built on the device are the host's, entry for entry.
            let w = ocnn::weights::dense::<f32>(p, ocnn::scale::scale(p).unwrap()).unwrap();
            let host = w.lane_rows();
            let dev = gpu.ocnn(p.n, &w.j, &w.norm).unwrap().with_lane_rows_built().unwrap();
            let (ptr, cols, vals) = dev.lane_rows().unwrap().unwrap();
            assert!(ptr == host.ptr && cols == host.cols && vals == host.vals, "{name}: lane rows built on the GPU");
        }
        for variant in
            [ocnn::Variant::XThreads, ocnn::Variant::ThreadPerNeuron, ocnn::Variant::YThreads, ocnn::Variant::LaneRows]
        {
            let c = Config { variant, ..c.clone() };
            let gpu_r = ocnn::cluster(p, &c, Some(&gpu)).unwrap();
            assert_eq!(cpu.state_sha256, gpu_r.state_sha256, "{name} {variant:?}: final state");
            assert_eq!(cpu.hits_sha256, gpu_r.hits_sha256, "{name} {variant:?}: hit matrix");
            assert_eq!(cpu.labels, gpu_r.labels, "{name} {variant:?}: labels");
            // The GPU clusters from the spanning forest it builds, the CPU from every pair.
            assert_eq!(cpu.curve, gpu_r.curve, "{name} {variant:?}: k(p) curve");
            assert_eq!(cpu.threshold_percent, gpu_r.threshold_percent, "{name} {variant:?}: threshold");
        }
        println!(
            "{name:<34} n={:<5} k={:<3} bit-exact: state {} hits {}",
            p.n,
            cpu.k,
            &cpu.state_sha256[..16],
            &cpu.hits_sha256[..16]
        );
    }
    // Fixed thresholds below and inside the grid: the GPU's forest starts at the lower one.
    for threshold in [35u32, 80] {
        let c = Config { threshold: Some(threshold), ..config(SyncArg::Phase, Dtype::F32, 300) };
        let (cpu, gpu_r) =
            (ocnn::cluster(&sets[0].1, &c, None).unwrap(), ocnn::cluster(&sets[0].1, &c, Some(&gpu)).unwrap());
        assert_eq!((cpu.labels, cpu.k, cpu.curve), (gpu_r.labels, gpu_r.k, gpu_r.curve), "Lsun at {threshold} %");
    }
    // The default consensus selection (three scales, two initial states each) keeps the same run
    // on both: the same labels, scale, seed and agreements.
    for (name, p) in [("Lsun", &sets[0].1), ("Tetra", &sets[6].1), ("random 2-D n=1000", &sets[9].1)] {
        let c = Config::default();
        let (cpu, gpu_r) = (ocnn::cluster(p, &c, None).unwrap(), ocnn::cluster(p, &c, Some(&gpu)).unwrap());
        assert_eq!(cpu.agreement.len(), 6, "{name}");
        assert_eq!(
            (&cpu.labels, cpu.scale_factor, cpu.run_seed, &cpu.agreement, &cpu.hits_sha256),
            (&gpu_r.labels, gpu_r.scale_factor, gpu_r.run_seed, &gpu_r.agreement, &gpu_r.hits_sha256),
            "{name}: consensus"
        );
    }
    // The consensus's choice of the smallest cluster (12 tight groups of 25: N/20 kept), its
    // scales above 3-D (perplexity 20, 30, 50) and a far point left out (uncoupled), over the
    // mutual links (downloaded hits) and over every pair (the GPU's spanning forest).
    let groups = |k: usize, per: usize, dim: usize, wide: usize, seed: u64| {
        // `k` squares (cubes) of side 5 on a grid `wide` centres across, 20 apart.
        let u = random(k * per, dim, seed);
        let at = |s: usize| {
            let (g, axis) = ((s / dim) % k, s % dim);
            match axis {
                0 => (g % wide) as f64,
                1 => (g / wide) as f64,
                _ => 0.0,
            }
        };
        let coords = (0..k * per * dim).map(|s| u.coords[s] / 40.0 + 20.0 * at(s)).collect();
        points::Points { n: k * per, dim, coords }
    };
    let many = groups(12, 25, 2, 4, 11);
    let mut six = groups(4, 50, 6, 2, 12);
    six.coords.extend([5000.0; 6]);
    six.n += 1;
    for (name, p) in [("12 groups of 25, 2-D", &many), ("4 groups in 6-D + a far point", &six)] {
        for links in [ocnn::Links::Mutual, ocnn::Links::All] {
            let c = Config { links, iters: 300, ..Config::default() };
            let (cpu, gpu_r) = (ocnn::cluster(p, &c, None).unwrap(), ocnn::cluster(p, &c, Some(&gpu)).unwrap());
            assert_eq!(
                (&cpu.labels, cpu.min_cluster, cpu.uncoupled, cpu.a, &cpu.agreement, &cpu.hits_sha256),
                (&gpu_r.labels, gpu_r.min_cluster, gpu_r.uncoupled, gpu_r.a, &gpu_r.agreement, &gpu_r.hits_sha256),
                "{name} {links:?}: consensus"
            );
            let want = if p.n == 300 { (Some(15), 0, 12) } else { (Some(20), 1, 4) };
            assert_eq!((cpu.min_cluster, cpu.uncoupled, cpu.k_non_singleton), want, "{name} {links:?}");
            println!(
                "{name:<30} {links:?}: min_cluster {:?}, uncoupled {}, k {}",
                cpu.min_cluster, cpu.uncoupled, cpu.k
            );
        }
    }
    println!(
        "OCNN GPU = CPU bit for bit on {} point sets (2-D, 3-D, f32, f64, phase, fragmentary), all three decompositions \
         and lane rows; \
         clusters from the GPU's spanning forest = from all pairs (auto, 35 % and 80 %); the consensus selection (mutual links, \
         from the downloaded hits) keeps \
         the same run (Lsun, Tetra, random 1000)",
        sets.len()
    );
}

/// The sparse coupling (`--cutoff`) on the GPU gives the CPU's bits: state, the coupled pairs'
/// hits and labels.
#[test]
#[ignore = "needs a CUDA GPU"]
fn ocnn_sparse_gpu_equals_cpu_bit_for_bit() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let sets: Vec<(&str, points::Points, f64, SyncArg, Dtype)> = vec![
        ("random 2-D n=3000 cutoff 3", random(3000, 2, 11), 3.0, SyncArg::Phase, Dtype::F32),
        ("random 2-D n=2000 cutoff 4 f64", random(2000, 2, 12), 4.0, SyncArg::Phase, Dtype::F64),
        ("random 3-D n=1500 cutoff 2.5 fragmentary", random(1500, 3, 13), 2.5, SyncArg::Fragmentary, Dtype::F32),
        ("random 3-D n=700 cutoff 3 f64 fragmentary", random(700, 3, 14), 3.0, SyncArg::Fragmentary, Dtype::F64),
    ];
    for (name, p, r, sync, dtype) in &sets {
        let c = Config { cutoff: Some(*r), threshold: Some(60), ..config(*sync, *dtype, 300) };
        let (cpu, gpu_r) = (ocnn::cluster(p, &c, None).unwrap(), ocnn::cluster(p, &c, Some(&gpu)).unwrap());
        assert_eq!(cpu.state_sha256, gpu_r.state_sha256, "{name}: final state");
        assert_eq!(cpu.hits_sha256, gpu_r.hits_sha256, "{name}: coupled pairs' hits");
        assert_eq!(cpu.labels, gpu_r.labels, "{name}: labels");
        println!(
            "{name:<44} pairs={:<7} bit-exact: state {} hits {}",
            cpu.coupled_pairs,
            &cpu.state_sha256[..16],
            &cpu.hits_sha256[..16]
        );
    }
    println!("OCNN sparse (--cutoff) GPU = CPU bit for bit on {} point sets", sets.len());
}
