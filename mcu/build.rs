// Puts the board's memory map (memory/<target>.x, as memory.x) where the runtime's link.x finds
// it, tells the firmware its board (cfg `board`), and writes the pixels of the cortical
// network's configuration A training list (the first sklearn digit of each class, 8x8, 0..16)
// for the self-test, which runs the LGN and the training itself.
use std::{env, fs, path::PathBuf, process::Command};

const BOARDS: [(&str, &str); 5] = [
    ("thumbv6m-none-eabi", "microbit"),
    ("thumbv7m-none-eabi", "lm3s6965evb"),
    ("thumbv7em-none-eabihf", "mps2-an386"),
    ("thumbv8m.main-none-eabihf", "mps2-an505"),
    ("riscv32imac-unknown-none-elf", "sifive_e"),
];

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let target = env::var("TARGET").unwrap();
    let board = BOARDS.iter().find(|(t, _)| *t == target).map(|(_, b)| *b);
    let board = board.unwrap_or_else(|| panic!("no board for target {target}: add it to build.rs and memory/"));
    let map = format!("memory/{target}.x");
    fs::copy(&map, out.join("memory.x")).unwrap_or_else(|e| panic!("{map}: {e}"));
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={map}");
    println!("cargo:rustc-check-cfg=cfg(board, values(\"microbit\", \"lm3s6965evb\", \"mps2-an386\", \"mps2-an505\", \"sifive_e\"))");
    println!("cargo:rustc-cfg=board=\"{board}\"");
    // The runtimes' linker scripts (here rather than in .cargo/config.toml, so that a crate
    // nested below, such as board-example/, does not inherit them twice).
    if board == "sifive_e" {
        println!("cargo:rustc-link-arg-bins=-Tmemory.x");
    }
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rustc-link-arg-bins=-Tdefmt.x");

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
