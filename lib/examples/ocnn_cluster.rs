//! The OCNN clusters the FCPS Hepta set (or, without `make setup`, two synthetic groups), and
//! the clustering is saved and read back: `cargo run -p neurobits --release --example
//! ocnn_cluster -- [cpu|gpu|auto]`.

use neurobits::device::Target;
use neurobits::model::Model;
use neurobits::ocnn::{model::Ocnn, points, Config};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device: Target = std::env::args().nth(1).unwrap_or_else(|| "cpu".into()).parse()?;
    let hepta = [
        Path::new("data/fcps/Hepta.data").to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fcps/Hepta.data"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .unwrap_or_else(|| "data/fcps/Hepta.data".into());
    let p = if hepta.exists() {
        points::load(&hepta)?
    } else {
        points::parse("0 0\n0.1 0\n0 0.1\n5 5\n5.1 5\n5 5.1\n", "two groups")?
    };
    let mut ocnn = Ocnn::new(Config { iters: 300, ..Default::default() }).with_device(device);
    let labels = ocnn.fit_predict(&p)?;
    let r = ocnn.report()?;
    println!("{} points on {device:?}: {} clusters at threshold {} %", r.n, r.k, r.threshold_percent);

    let path = std::env::temp_dir().join(format!("neurobits-ocnn-{}.nbm", std::process::id()));
    ocnn.save(&path)?;
    assert_eq!(Ocnn::load(&path)?.labels()?, labels);
    std::fs::remove_file(&path)?;
    Ok(())
}
