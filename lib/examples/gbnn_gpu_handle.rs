//! A long-lived process answering GBNN batches on a GPU: `GbnnGpu` owns its device, W is
//! uploaded once, each batch is one call, and the results come back compact into the memory of
//! the previous batch's results. `cargo run --release --example gbnn_gpu_handle` (needs a CUDA GPU;
//! without one it says so and exits with code 2).

use neurobits_core::gbnn::batch::retrieve_batch_decoded;
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{Network, Params, Rule, Stats};
use neurobits_gpu_host::gbnn::GbnnGpu;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("gbnn_gpu_handle: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // Scenario 2 of the paper: 16 clusters of 512 neurons, 50 000 stored messages.
    let mut net = Network::new(16, 512)?;
    net.store_random(1, 50_000);
    let g = *net.geometry();
    let t = Instant::now();
    let handle = GbnnGpu::open(0, &net)?; // context, PTX and W upload: paid once
    println!("opened the GPU and uploaded W in {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    let params = Params::default();
    let mut results: Vec<Decoded> = Vec::new();
    for batch in 0..5u64 {
        // Each "request": 20 000 distinct stored messages with 7 clusters erased.
        let plan = ProbePlan::new(g, 1, net.stored(), 10 + batch, 20_000, 7)?;
        let mut probes = vec![0u16; 20_000 * 16];
        for (p, probe) in probes.chunks_mut(16).enumerate() {
            plan.probe(p as u64, probe);
        }
        let out = handle.retrieve_decoded_in(&probes, Rule::Joint, &params, results)?;
        let exact = out.decoded.iter().filter(|d| d.count() == 1).count();
        println!(
            "batch {batch}: {:.2} ms end to end, {:.3} ms of kernels, {exact} of {} clusters answered",
            out.total_ms,
            out.kernel_ms,
            out.decoded.len()
        );
        // The CPU gives the same answers.
        let mut cpu = vec![Decoded::default(); out.decoded.len()];
        let mut stats = vec![Stats::default(); 20_000];
        retrieve_batch_decoded(&g, net.weights(), &probes, Rule::Joint, &params, &mut cpu, &mut stats)?;
        assert!(cpu == out.decoded, "GPU and CPU results differ");
        results = out.decoded; // given back to the next call
    }
    Ok(())
}
