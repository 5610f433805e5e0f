//! Store messages in a GBNN and retrieve erased ones, on the device of your choice, without the
//! CLI: `cargo run --release --example gbnn_store_retrieve -- [cpu|gpu|auto]`.
//!
//! The network is made resident once (`Device::gbnn`: W is uploaded to the GPU when there is one)
//! and then answers batches; the CPU and GPU give identical states.

use anyhow::Result;
use clap::ValueEnum;
use neurobits::device::{Device, DeviceChoice};
use neurobits_core::gbnn::workload::ProbePlan;
use neurobits_core::gbnn::{Network, Params, Rule};

fn main() -> Result<()> {
    // `cpu` (default), `gpu` or `auto`, as `--device` takes them.
    let arg = std::env::args().nth(1).unwrap_or_else(|| "cpu".into());
    let choice = DeviceChoice::from_str(&arg, true).map_err(anyhow::Error::msg)?;
    // 8 clusters of 128 neurons; 5000 random messages from the portable PRNG (seed 1).
    let mut net = Network::new(8, 128)?;
    net.store_random(1, 5000);
    let g = *net.geometry();

    // 1000 distinct stored messages with 4 clusters erased.
    let plan = ProbePlan::new(g, 1, net.stored(), 2, 1000, 4)?;
    let (mut probes, mut truth) = (vec![0u16; 1000 * 8], vec![0u16; 1000 * 8]);
    for p in 0..1000 {
        plan.probe(p, &mut probes[p as usize * 8..][..8]);
        plan.truth(p, &mut truth[p as usize * 8..][..8]);
    }

    let device = Device::open(choice)?;
    let resident = device.gbnn(&net)?;
    let batch = resident.retrieve(&probes, Rule::Joint, &Params::default())?;
    let rates = neurobits::gbnn::rates(&g, &batch.states, &truth);
    println!("joint on {}: {:.1} % of 1000 probes retrieved exactly", resident.name(), 100.0 * rates.strict);
    assert!(rates.strict > 0.9);
    Ok(())
}
