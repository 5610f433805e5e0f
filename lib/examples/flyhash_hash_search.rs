//! Hash vectors with FlyHash and search the codes by Hamming distance, without the CLI:
//! `cargo run --release --example flyhash_hash_search -- [cpu|gpu|auto]`.

use anyhow::Result;
use clap::ValueEnum;
use neurobits::device::{Device, DeviceChoice};
use neurobits::flyhash::commands::hash_matrix;
use neurobits::flyhash::cpu::{projection, Wta};
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::search::top_r;
use neurobits_core::flyhash::FlyParams;

fn main() -> Result<()> {
    // `cpu` (default), `gpu` or `auto`, as `--device` takes them.
    let arg = std::env::args().nth(1).unwrap_or_else(|| "cpu".into());
    let choice = DeviceChoice::from_str(&arg, true).map_err(anyhow::Error::msg)?;
    // 200 vectors of 64 values in 4 well-separated groups (one hot block of 16 per group).
    let (rows, cols) = (200, 64);
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            let hot = c / 16 == r % 4;
            (hot as u8 as f32) * 10.0 + ((r * 31 + c * 7) % 5) as f32
        })
        .collect();
    let x = Matrix { rows, cols, data };

    // Code length 1024, 8 inputs per projection row, 32 winners, projection seed 1.
    let p = FlyParams::new(cols as u32, 1024, 8, 32, 1)?;
    let proj = projection(&p);
    let device = Device::open(choice)?;
    let codes = hash_matrix(&p, &proj, &x, Wta::Exact, &device)?;
    assert!(codes.chunks(p.code_words()).all(|c| c.iter().map(|w| w.count_ones()).sum::<u32>() == 32));

    // The 5 nearest codes of the first vector: its own group (r % 4 == 0).
    let hits = top_r(&codes, &codes[..p.code_words()], p.code_words(), 5);
    println!("nearest to vector 0 on {}: {:?}", device.name(), hits[0]);
    assert!(hits[0].iter().all(|&(i, _)| i % 4 == 0));
    Ok(())
}
