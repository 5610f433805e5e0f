//! FlyNN: fit a classifier, save it, load it, predict; on Fashion-MNIST when `make setup` has
//! installed it, or in the folder given second (else on synthetic groups): `cargo run -p
//! neurobits --release --example flynn_fit_predict -- [cpu|gpu|auto] [FOLDER]`.

use neurobits::device::Target;
use neurobits::flyhash::classifier::{FlyNN, FlyNNConfig};
use neurobits::flyhash::data::{read, Matrix, FASHION_MNIST};
use neurobits::model::Model;
use std::path::Path;

fn labels(m: &Matrix) -> Vec<i64> {
    m.data.iter().map(|&v| v as i64).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device: Target = std::env::args().nth(1).unwrap_or_else(|| "cpu".into()).parse()?;
    let dir = std::env::args().nth(2).unwrap_or_else(|| FASHION_MNIST.into());
    let dir = Path::new(&dir);
    let ((x, y), (xt, yt)) = if dir.join("train-images-idx3-ubyte.gz").exists() {
        let f = |n: &str| read(&dir.join(n));
        (
            (f("train-images-idx3-ubyte.gz")?, labels(&f("train-labels-idx1-ubyte.gz")?)),
            (f("t10k-images-idx3-ubyte.gz")?, labels(&f("t10k-labels-idx1-ubyte.gz")?)),
        )
    } else {
        // Four groups of 32-value vectors, each around its own pattern.
        let make = |rows: usize, off: usize| {
            let data = (0..rows * 32).map(|i| ((((off + i / 32) % 4) * 7 + i % 32 * 3) % 17) as f32).collect();
            (Matrix { rows, cols: 32, data }, (0..rows).map(|r| ((off + r) % 4) as i64).collect())
        };
        (make(400, 0), make(100, 400))
    };
    let mut clf = FlyNN::new(FlyNNConfig::default()).with_device(device);
    clf.fit(&x, &y)?;

    let path = std::env::temp_dir().join(format!("neurobits-flynn-{}.nbm", std::process::id()));
    clf.save(&path)?;
    let clf = FlyNN::load(&path)?.with_device(device);
    std::fs::remove_file(&path)?;
    let accuracy = clf.score(&xt, &yt)?;
    println!("FlyNN on {device:?}: accuracy {accuracy:.4} on {} held-out vectors", xt.rows);
    assert!(accuracy > 0.5);
    Ok(())
}
