//! A FlyHash index: build it from vectors, save it, add more vectors to the file without
//! rewriting it, load it and search: `cargo run -p neurobits --release --example flyhash_index
//! -- [cpu|gpu|auto]`.

use neurobits::device::Target;
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::index::FlyIndex;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::model::Model;

/// `rows` vectors of 64 values in 4 groups (one hot block of 16 per group), from `first` on.
fn vectors(first: usize, rows: usize) -> Matrix {
    let cols = 64;
    let data = (0..rows * cols)
        .map(|i| {
            let (r, c) = (first + i / cols, i % cols);
            ((c / 16 == r % 4) as u8 as f32) * 10.0 + ((r * 31 + c * 7) % 5) as f32
        })
        .collect();
    Matrix { rows, cols, data }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device: Target = std::env::args().nth(1).unwrap_or_else(|| "cpu".into()).parse()?;
    // Codes of 1024 bits with 32 winners; each projection row samples 8 inputs.
    let config =
        FlyHashConfig { code_bits: Some(1024), ones_per_row: Some(8), winners: Some(32), ..Default::default() };
    let mut index = FlyIndex::new(config, 64)?.with_device(device);
    index.add(&vectors(0, 100))?;

    let dir = std::env::temp_dir().join(format!("neurobits-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("vectors.nbi");
    index.save(&path)?;
    let ids = FlyIndex::append(&path, &vectors(100, 100), device)?;
    println!("appended ids {ids:?}");

    let index = FlyIndex::load(&path)?.with_device(device);
    let hits = index.search(&vectors(0, 1), 5)?;
    println!("nearest to vector 0 on {device:?}: ids {:?}, distances {:?}", hits.ids, hits.distances);
    assert_eq!(index.len(), 200);
    assert!(hits.ids.iter().all(|&i| i % 4 == 0), "its own group");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
