//! The OCNN uploaded as lane rows only (`Gpu::ocnn_lane_rows`, no `n × n` weights on the device)
//! and the early stop's hook, against the CPU's core functions bit for bit (`make gpu-test` on a
//! machine with a CUDA GPU). The library's `tests/ocnn_gpu.rs` runs the whole pipeline too.

use neurobits_core::ocnn::kernels::lane_entry;
use neurobits_core::ocnn::{initial_state, phase_bit, phase_hits, row_norm, transfer, update_neuron, SyncMode};
use neurobits_gpu_host::ocnn::{Decomposition, HostLaneRows, HostRows};
use neurobits_gpu_host::Gpu;

/// A symmetric coupling with many zero weights (any weights will do: the rows' layout and the
/// update are under test, not the weight rule), and its lane rows as the host lays them out.
fn coupling(n: usize) -> (Vec<f32>, Vec<f32>, HostRows<f32>) {
    let mut j = vec![0f32; n * n];
    for i in 0..n {
        for k in i + 1..n {
            let d = (i as f32 - k as f32).abs();
            let w = if d < 40.0 { (1.0 / (1.0 + d)) * (1.0 + (i % 7) as f32 * 0.01) } else { 0.0 };
            (j[i * n + k], j[k * n + i]) = (w, w);
        }
    }
    let norm: Vec<f32> = j.chunks(n).map(row_norm).collect();
    let mut ptr = vec![0u64];
    let nonzero: Vec<Vec<(u32, f32)>> = j
        .chunks(n)
        .map(|row| row.iter().enumerate().filter(|&(_, &w)| w != 0.0).map(|(k, &w)| (k as u32, w)).collect())
        .collect();
    for nz in &nonzero {
        let mut count = [0u64; 32];
        nz.iter().for_each(|&(k, _)| count[k as usize % 32] += 1);
        ptr.push(ptr.last().unwrap() + 32 * count.iter().max().unwrap());
    }
    let (mut cols, mut vals) = (vec![0u32; *ptr.last().unwrap() as usize], vec![0f32; *ptr.last().unwrap() as usize]);
    for (i, nz) in nonzero.iter().enumerate() {
        let mut at = [0usize; 32];
        for &(k, w) in nz {
            let l = k as usize % 32;
            let e = ptr[i] as usize + lane_entry(at[l], l);
            (cols[e], vals[e]) = (k, w);
            at[l] += 1;
        }
    }
    (j, norm, (ptr, cols, vals))
}

/// The CPU's state and full hit matrix after `iters` observed iterations (phase).
fn cpu(n: usize, j: &[f32], norm: &[f32], seed: u64, iters: u32) -> (Vec<f32>, Vec<u32>) {
    let mut x: Vec<f32> = (0..n as u64).map(|i| initial_state(seed, i)).collect();
    let mut hits = vec![0u32; n * n];
    let mut words = vec![0u64; n];
    for t in 0..iters {
        let f: Vec<f32> = x.iter().map(|&v| transfer(v)).collect();
        let next: Vec<f32> = (0..n).map(|i| update_neuron(&j[i * n..(i + 1) * n], norm[i], &f)).collect();
        for i in 0..n {
            words[i] |= (phase_bit(next[i], x[i]) as u64) << (t % 64);
        }
        if t % 64 == 63 || t + 1 == iters {
            for a in 0..n {
                for b in 0..n {
                    hits[a * n + b] += phase_hits(words[a], words[b], t % 64 + 1);
                }
            }
            words.iter_mut().for_each(|w| *w = 0);
        }
        x = next;
    }
    (x, hits)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn lane_rows_uploaded_alone_and_the_early_stop_equal_the_cpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for n in [33usize, 300, 1000] {
        let (j, norm, (ptr, cols, vals)) = coupling(n);
        let rows = HostLaneRows { ptr: &ptr, cols: &cols, vals: &vals, norm: &norm };
        let dev = gpu.ocnn_lane_rows(&rows).unwrap();
        // The rows built on the device from J are the same rows.
        let built = gpu.ocnn(n, &j, &norm).unwrap().with_lane_rows_built().unwrap();
        assert_eq!(built.lane_rows().unwrap().unwrap(), (ptr.clone(), cols.clone(), vals.clone()), "n={n}: rows");
        let run = dev.run(5, 0, 200, SyncMode::Phase, Decomposition::LaneRows).unwrap();
        let (x, hits) = cpu(n, &j, &norm, 5, 200);
        assert_eq!(bits(&run.state), bits(&x), "n={n}: state");
        assert_eq!(run.hits, hits, "n={n}: hits");
        assert_eq!(run.observed, 200);
        if n == 300 {
            // Past 16 blocks of 64 iterations: the phase words are added to the hits twice.
            let long = dev.run(5, 0, 1100, SyncMode::Phase, Decomposition::LaneRows).unwrap();
            let (x, hits) = cpu(n, &j, &norm, 5, 1100);
            assert_eq!((bits(&long.state), long.hits), (bits(&x), hits), "n={n}: 1 100 iterations");
        }
        // Only lane rows: the dense decompositions refuse.
        assert!(dev.run(5, 0, 10, SyncMode::Phase, Decomposition::XThreads).is_err());
        // The early stop's hook: asked after 64 and 128 observed iterations with the hits so
        // far; stopping at the second check leaves the CPU's state and hits of 128 iterations.
        let mut asked = Vec::new();
        let mut check = |o: u32, h: &[u32]| {
            asked.push((o, h.to_vec()));
            o == 128
        };
        let stop = dev.run_until(5, 0, 200, SyncMode::Phase, Decomposition::LaneRows, Some(&mut check)).unwrap();
        let (x128, hits128) = cpu(n, &j, &norm, 5, 128);
        assert_eq!(asked.iter().map(|a| a.0).collect::<Vec<_>>(), [64, 128]);
        assert_eq!(asked[1].1, hits128);
        assert_eq!((stop.observed, bits(&stop.state), stop.hits), (128, bits(&x128), hits128), "n={n}: early stop");
        println!("n={n:<5} lane rows uploaded alone = CPU bit for bit; early stop at 128 = CPU's 128 iterations");
    }
    // Inconsistent rows are refused before any upload.
    let bad = HostLaneRows { ptr: &[0, 32], cols: &[5; 32], vals: &[0.0; 32], norm: &[1.0] };
    assert!(gpu.ocnn_lane_rows(&bad).is_err());
}
