//! GPU ≡ CPU, bit for bit (`make gpu-test` on a machine with a CUDA GPU).

use neurobits_core::gbnn::batch::{retrieve_batch, retrieve_batch_decoded};
use neurobits_core::gbnn::decode::{decode_state, Decoded};
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{Geometry, Network, Params, Rule, Stats};
use neurobits_gpu_host::gbnn::{DenseGpu, GbnnGpu};
use neurobits_gpu_host::{Gpu, GpuError, Pinned};

struct Config {
    name: &'static str,
    c: usize,
    l: usize,
    m: u64,
    /// Probes per erased count; erased counts cover 1..C-1.
    per_e: u64,
}

const CONFIGS: [Config; 7] = [
    Config { name: "scenario 1 (8x128)", c: 8, l: 128, m: 5_000, per_e: 1_500 },
    Config { name: "scenario 2 (16x512)", c: 16, l: 512, m: 50_000, per_e: 700 },
    Config { name: "non-power-of-two L (6x100)", c: 6, l: 100, m: 2_000, per_e: 2_000 },
    Config { name: "multi-word ragged L (12x200)", c: 12, l: 200, m: 8_000, per_e: 1_000 },
    Config { name: "400-neuron circuit (8x50)", c: 8, l: 50, m: 400, per_e: 1_500 },
    Config { name: "tiny (3x3)", c: 3, l: 3, m: 4, per_e: 4 },
    Config { name: "wide clusters (3x5000)", c: 3, l: 5_000, m: 20_000, per_e: 1_000 },
];

/// Probes of stored messages (seed 1) and, every third, of never-stored ones (seed 99).
fn probes(g: &Geometry, cfg: &Config) -> Vec<u16> {
    let mut out = Vec::new();
    let mut p = vec![0u16; g.clusters()];
    for e in 1..g.clusters() {
        let n = cfg.per_e.min(cfg.m);
        let stored = ProbePlan::new(*g, 1, cfg.m, 2 + e as u64, n, e).unwrap();
        let fresh = ProbePlan::new(*g, 99, cfg.m, 50 + e as u64, n, e).unwrap();
        for i in 0..n {
            if i % 3 == 2 {
                fresh.probe(i, &mut p)
            } else {
                stored.probe(i, &mut p)
            };
            out.extend_from_slice(&p);
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_states_equal_cpu_states_bit_for_bit() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    println!("device: {}", gpu.name());
    let mut total = 0usize;
    for cfg in &CONFIGS {
        let mut net = Network::new(cfg.c, cfg.l).unwrap();
        net.store_random(1, cfg.m);
        let g = *net.geometry();
        let mut msgs = vec![0u16; cfg.m as usize * cfg.c];
        for (k, m) in msgs.chunks_mut(cfg.c).enumerate() {
            message(&g, 1, k as u64, m);
        }
        let stored_on_gpu = gpu.store(g, &msgs).unwrap().download().unwrap();
        assert_eq!(stored_on_gpu, net, "{}: W stored on the GPU differs", cfg.name);
        let mut dnet = gpu.upload(&net).unwrap();
        let pr = probes(&g, cfg);
        let k = pr.len() / cfg.c;
        for rule in Rule::ALL {
            for gamma in [1, 2] {
                if gamma == 1 && rule != Rule::SumOfSum {
                    continue;
                }
                let params = Params { gamma, max_iter: 20 };
                let mut states = vec![0; k * g.row_words()];
                let mut stats = vec![Stats::default(); k];
                retrieve_batch(&g, net.weights(), &pr, rule, &params, &mut states, &mut stats).unwrap();
                let out = dnet.retrieve(&pr, rule, &params).unwrap();
                let first_diff = states.iter().zip(&out.states).position(|(a, b)| a != b);
                assert!(first_diff.is_none(), "{} {rule:?}: state word {first_diff:?} differs", cfg.name);
                assert_eq!(out.stats, stats, "{} {rule:?}: iteration counts differ", cfg.name);
                // Compact results: the device's decoding of its states = the CPU's.
                let mut decoded = vec![Decoded::default(); k * g.clusters()];
                retrieve_batch_decoded(&g, net.weights(), &pr, rule, &params, &mut decoded, &mut stats).unwrap();
                let dec = dnet.retrieve_decoded(&pr, rule, &params).unwrap();
                assert!(dec.decoded == decoded, "{} {rule:?}: decoded results differ", cfg.name);
                assert_eq!(dec.stats, stats, "{} {rule:?}: decoded iteration counts differ", cfg.name);
                if rule == Rule::Joint {
                    // Every joint path of compact results: one launch with 8, 16 or 32 lanes per
                    // probe where the network is small enough, the per-update launches everywhere.
                    for lanes in [None, Some(8), Some(16), Some(32)] {
                        dnet.set_joint_warp(lanes);
                        let other = dnet.retrieve_decoded(&pr, rule, &params).unwrap();
                        assert!(other.decoded == decoded, "{} {lanes:?}: decoded results differ", cfg.name);
                        assert_eq!(other.stats, stats, "{} {lanes:?}: iteration counts differ", cfg.name);
                    }
                    dnet.set_joint_warp(Some(0));
                }
                println!(
                    "{:<30} {:<15} gamma={gamma} {k:>6} probes: bit-exact (GPU kernels {:.3} ms)",
                    cfg.name,
                    rule.name(),
                    out.kernel_ms
                );
            }
        }
        total += k;
    }
    println!("bit-exact on {total} probes per rule across {} configurations", CONFIGS.len());
    assert!(total >= 10_000);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cublas_dense_baseline_equals_bit_packed_sum_of_sum() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let cfg = &CONFIGS[0];
    let mut net = Network::new(cfg.c, cfg.l).unwrap();
    net.store_random(1, cfg.m);
    let g = *net.geometry();
    let pr = probes(&g, cfg);
    let k = pr.len() / cfg.c;
    let params = Params { gamma: 2, max_iter: 20 };
    let mut states = vec![0; k * g.row_words()];
    let mut stats = vec![Stats::default(); k];
    retrieve_batch(&g, net.weights(), &pr, Rule::SumOfSum, &params, &mut states, &mut stats).unwrap();
    let dense = DenseGpu::new(&gpu, &net, 2).unwrap();
    let (out, _, _) = dense.retrieve(&pr, 20).unwrap();
    assert!(out == states, "cuBLAS sum-of-sum differs from the bit-packed one");
    println!("cuBLAS dense sum-of-sum: bit-exact on {k} probes");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batches_stream_through_small_chunks_and_an_owned_handle() {
    // Chunks of 777 probes (several per batch, the last one short) give the unchunked results;
    // the owned handle (`GbnnGpu`) answers several batches from one upload.
    let cfg = &CONFIGS[1];
    let mut net = Network::new(cfg.c, cfg.l).unwrap();
    net.store_random(1, cfg.m);
    let g = *net.geometry();
    let pr = probes(&g, cfg);
    let k = pr.len() / cfg.c;
    let mut handle = GbnnGpu::open(0, &net).expect("a CUDA GPU");
    let whole = handle.retrieve(&pr, Rule::Joint, &Params::default()).unwrap();
    handle.set_chunk_probes(777);
    for rule in Rule::ALL {
        let params = Params::default();
        let mut states = vec![0; k * g.row_words()];
        let mut stats = vec![Stats::default(); k];
        retrieve_batch(&g, net.weights(), &pr, rule, &params, &mut states, &mut stats).unwrap();
        let out = handle.retrieve(&pr, rule, &params).unwrap();
        assert!(out.states == states && out.stats == stats, "{rule:?}: chunked states differ");
        let dec = handle.retrieve_decoded(&pr, rule, &params).unwrap();
        let mut expect = vec![Decoded::default(); k * g.clusters()];
        for (v, d) in states.chunks(g.row_words()).zip(expect.chunks_mut(g.clusters())) {
            decode_state(&g, v, d);
        }
        assert!(dec.decoded == expect, "{rule:?}: chunked decoded results differ");
        if rule == Rule::Joint {
            assert!(whole.states == states, "joint: one chunk differs from many");
        }
        println!("{:<15} {k} probes in chunks of 777: states and decoded results bit-exact", rule.name());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_long_batch_through_the_pipeline_equals_the_cpu() {
    // 300 000 probes with the default chunking: three chunks, the copies on the copy stream
    // beside the kernels (`gbnn::pipeline`); every rule, and the joint rule through the
    // per-update launches too (the one-launch warp path is not pipelined).
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let (name, c, m) = ("pipelined (8x128)", 8, 5_000);
    let mut net = Network::new(c, 128).unwrap();
    net.store_random(1, m);
    let g = *net.geometry();
    // Distinct runs of probes (a fresh probe seed per run), so that chunks differ.
    let (mut pr, mut p, mut seed) = (Vec::new(), vec![0u16; c], 1_000);
    while pr.len() < 300_000 * c {
        let plan = ProbePlan::new(g, 1, m, seed, m, 1 + seed as usize % (c - 1)).unwrap();
        for i in 0..m {
            plan.probe(i, &mut p);
            pr.extend_from_slice(&p);
        }
        seed += 1;
    }
    pr.truncate(300_000 * c);
    let k = pr.len() / c;
    let mut dnet = gpu.upload(&net).unwrap();
    // The same probes and the results in page-locked memory the caller keeps (`Pinned`): the
    // copies then run asynchronously, so the ordering by events is all that keeps them right.
    let pinned = Pinned::from_slice(&gpu, &pr).unwrap();
    let mut out = Pinned::<Decoded>::zeroed(&gpu, k * c).unwrap();
    let mut kept_stats = Vec::new();
    for (rule, warp) in Rule::ALL.into_iter().map(|r| (r, Some(0))).chain([(Rule::Joint, None)]) {
        dnet.set_joint_warp(warp);
        let params = Params::default();
        let mut expect = vec![Decoded::default(); k * c];
        let mut stats = vec![Stats::default(); k];
        retrieve_batch_decoded(&g, net.weights(), &pr, rule, &params, &mut expect, &mut stats).unwrap();
        // Twice pipelined (the second batch reuses the chunk buffers and their spare probe
        // buffer), then with the transfers before and after the kernels.
        for round in 0..3 {
            dnet.set_pipelined(round < 2);
            let dec = dnet.retrieve_decoded(&pr, rule, &params).unwrap();
            assert!(dec.decoded == expect, "{rule:?} (warp {warp:?}, round {round}): pipelined results differ");
            assert!(dec.stats == stats, "{rule:?} (warp {warp:?}, round {round}): statistics differ");
            out.fill(Decoded::default());
            // The statistics' memory given back, as a long-lived caller does: refilled, not appended.
            let run = dnet.retrieve_decoded_into(&pinned, rule, &params, &mut out, kept_stats).unwrap();
            assert!(*out == expect[..], "{rule:?} (warp {warp:?}, round {round}): pinned results differ");
            assert!(run.stats == stats, "{rule:?} (warp {warp:?}, round {round}): pinned statistics differ");
            kept_stats = run.stats;
        }
        // A shorter batch (a ragged last chunk) into the buffers kept from the longer one: the
        // device's result buffer and the page-locked statistics still hold the longer batch's
        // values, which must not leak; twice, the second with the chunk size kept.
        let short = 150_001;
        dnet.set_pipelined(true);
        // The second and later calls queue their first chunk's probes before the probe check
        // (`DeviceNetwork::preload`); a batch of the same size with a bad symbol is refused
        // after that upload, and the next good batch is still right.
        let mut bad = pr[..short * c].to_vec();
        bad[short * c - 1] = 128; // L = 128: one past the last symbol

        // A bad symbol in the preloaded first chunk is found by the device's check
        // (`check_preloaded`); the error is the host check's, word for word.
        let mut bad_first = pr[..short * c].to_vec();
        bad_first[7 * c + 3] = 128;
        for round in 0..3 {
            if round == 2 {
                let err = dnet.retrieve_decoded(&bad, rule, &params).err();
                assert!(matches!(err, Some(GpuError::Input(_))), "{rule:?}: a bad symbol gave {err:?}");
                // The refused batch freed its chunk buffers: a good one keeps new ones, so that
                // the next batch of this size preloads its first chunk and checks it on the GPU.
                let _ = dnet.retrieve_decoded(&pr[..short * c], rule, &params).unwrap();
                let checks = dnet.device_probe_checks();
                let on_device = format!("{:?}", dnet.retrieve_decoded(&bad_first, rule, &params).err());
                if warp.is_none() || rule != Rule::Joint {
                    // (The joint rule's one-launch path checks its batches on the host.)
                    assert_eq!(dnet.device_probe_checks(), checks + 1, "{rule:?}: not checked on the device");
                }
                dnet.set_pipelined(false);
                let on_host = format!("{:?}", dnet.retrieve_decoded(&bad_first, rule, &params).err());
                dnet.set_pipelined(true);
                assert!(on_host.starts_with("Some(Input("), "{rule:?}: the host check gave {on_host}");
                assert_eq!(on_device, on_host, "{rule:?}: the first chunk's bad symbol");
            }
            let dec = dnet.retrieve_decoded(&pr[..short * c], rule, &params).unwrap();
            assert!(dec.decoded == expect[..short * c], "{rule:?} (warp {warp:?}, short {round}): results differ");
            assert!(dec.stats == stats[..short], "{rule:?} (warp {warp:?}, short {round}): statistics differ");
        }
        println!(
            "{name} {:<15} warp {warp:?}: {k} probes, decoded results and statistics = CPU (pageable and pinned memory)",
            rule.name()
        );
    }
}
