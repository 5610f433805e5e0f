//! The cortical network (the defaults: competitive rule) trained on sklearn's 8x8 digits except
//! the last 50 of each class, saved, loaded, and applied to those held-out 500: `cargo run -p neurobits
//! --release --example cortical_fit_predict -- [cpu|gpu|auto]` (the digits come from `make
//! setup`).

use neurobits::cortical::{data::Dataset, model::Cortical, Config};
use neurobits::device::Target;
use neurobits::flyhash::data::Matrix;
use neurobits::model::Model;
use std::path::Path;

fn images(ds: &Dataset, ids: &[usize]) -> (Matrix, Vec<i64>) {
    let data = ids.iter().flat_map(|&i| ds.image(i).iter().map(|&p| p as f32)).collect();
    (Matrix { rows: ids.len(), cols: ds.side * ds.side, data }, ids.iter().map(|&i| ds.labels[i] as i64).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device: Target = std::env::args().nth(1).unwrap_or_else(|| "cpu".into()).parse()?;
    let file = [
        Path::new("data/digits/digits.csv.gz").to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/digits/digits.csv.gz"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| "data/digits/digits.csv.gz".into());
    let ds = Dataset::read(&file)?;
    let (train, _, test) = ds.holdout(None, 0, 50);
    let ((x, y), (xt, yt)) = (images(&ds, &train), images(&ds, &test));

    let mut net = Cortical::new(Config::default()).with_device(device);
    net.fit(&x, &y)?;
    let path = std::env::temp_dir().join(format!("neurobits-cortical-{}.nbm", std::process::id()));
    net.save(&path)?;
    let net = Cortical::load(&path)?;
    std::fs::remove_file(&path)?;
    let (accuracy, nmi) = net.score(&xt, &yt)?;
    println!("cortical network trained on {device:?}: held-out accuracy {accuracy:.3}, NMI {nmi:.3}");
    assert!(accuracy > 0.7, "well above chance (0.1) and the random-weights network");
    Ok(())
}
