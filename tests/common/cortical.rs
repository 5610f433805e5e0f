//! The cortical network's configuration A (spec §11.6) and its seed-1 digests (spec §11.5),
//! shared by the CPU, GPU and firmware tests.
#![allow(dead_code)]

use neurobits::cortical::{ScheduleArg, TrainConfig, VariantArg};
use neurobits::device::DeviceChoice;
use std::path::PathBuf;

pub const DIGITS: &str = "data/digits/digits.csv.gz";
pub const A_WEIGHTS: &str = "f51cb83e12e8f1fbd65974907f3399c7cb37ebf43f42e444e662f0c2f950854f";
pub const A_WINNERS: &str = "aa6b76a50627c9311260dbbb8527707dee41fd9f84826e7c86665ee8d278e180";

/// The digits file, which `make setup` extracts.
pub fn digits() -> PathBuf {
    let p = PathBuf::from(DIGITS);
    assert!(p.exists(), "{DIGITS} is missing: run `make setup` (it extracts it from the scikit-learn wheel)");
    p
}

/// Configuration A (3 levels × 16 minicolumns, 1 digit per class, 60 epochs, exposure 4) on `device`.
pub fn config_a(seed: u64, schedule: ScheduleArg, variant: VariantArg, device: DeviceChoice) -> TrainConfig {
    TrainConfig {
        data: digits(),
        levels: 3,
        minicolumns: 16,
        train_per_class: 1,
        test_per_class: 50,
        upsample: 1,
        epochs: 60,
        exposure: 4,
        seed,
        beta: 0.5,
        variant,
        schedule,
        device,
        single_thread: false,
        json: None,
        out: None,
    }
}
