// Puts memory.x where cortex-m-rt's link.x finds it, and writes the pixels of the cortical
// network's configuration A training list (the first sklearn digit of each class, 8x8, 0..16)
// for the firmware, which runs the LGN and the training itself.
use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");

    let digits = "../data/digits/digits.csv.gz";
    println!("cargo:rerun-if-changed={digits}");
    let csv = Command::new("gzip").args(["-dc", digits]).output().expect("gzip runs");
    assert!(csv.status.success(), "{digits} is missing or corrupt: run `make setup`");
    let text = String::from_utf8(csv.stdout).expect("digits CSV is text");
    let mut first = vec![None; 10];
    for line in text.lines() {
        let v: Vec<u8> = line.split(',').map(|x| x.trim().parse::<f64>().expect("a number") as u8).collect();
        let label = v[64] as usize;
        if first[label].is_none() {
            first[label] = Some(v[..64].to_vec());
        }
    }
    let pixels: Vec<String> =
        first.into_iter().flat_map(|p| p.expect("every class present")).map(|p| p.to_string()).collect();
    fs::write(out.join("digits_a.rs"), format!("[{}]", pixels.join(", "))).unwrap();
}
