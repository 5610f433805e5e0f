//! Store messages in a GBNN, save it, load it back and complete erased probes, on the device of
//! your choice: `cargo run -p neurobits --release --example gbnn_store_retrieve -- [cpu|gpu|auto]`.

use neurobits::device::Target;
use neurobits::gbnn::model::{Gbnn, GbnnConfig};
use neurobits::gbnn::RuleArg;
use neurobits::model::Model;
use neurobits_core::prng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device: Target = std::env::args().nth(1).unwrap_or_else(|| "cpu".into()).parse()?;
    // 5000 random messages of 8 symbols in 0..128 from the portable PRNG (seed 1).
    let (c, l, k) = (8, 128, 5000);
    let key = prng::stream_key(1, 1);
    let messages: Vec<i64> = (0..k * c).map(|i| (prng::draw(key, i as u64) % l as u64) as i64).collect();
    let mut memory = Gbnn::new(GbnnConfig { clusters: c, neurons: l, rule: RuleArg::Joint, ..Default::default() });
    memory.fit(&messages)?;

    let dir = std::env::temp_dir().join(format!("neurobits-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("memory.nbm");
    memory.save(&path)?;
    let memory = Gbnn::load(&path)?.with_device(device);

    // The first 1000 messages with their first four symbols erased (-1).
    let probes: Vec<i64> =
        messages[..1000 * c].chunks(c).flat_map(|m| (0..c).map(|j| if j < 4 { -1 } else { m[j] })).collect();
    let out = memory.retrieve(&probes)?;
    let exact = out.symbols.chunks(c).zip(messages.chunks(c)).filter(|(got, want)| got == want).count();
    println!("joint on {device:?}: {exact} of 1000 probes retrieved exactly");
    assert!(exact > 900);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
