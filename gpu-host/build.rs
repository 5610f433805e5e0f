//! Compiles `gpu-device/` to PTX with rustc's nvptx64 backend and leaves it in OUT_DIR.
//!
//! The nested cargo gets its own target dir (sharing ours deadlocks on the lock), builds `core`
//! itself (`-Zbuild-std=core`, hence `RUSTC_BOOTSTRAP=1` for that build only), and an explicit
//! `CARGO_ENCODED_RUSTFLAGS`: cargo sets it for build scripts and it would otherwise leak the
//! outer flags (or none, giving sm_30 PTX). Override the GPU with `NEUROBITS_PTX_ARCH=sm_80` etc.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let device = root.join("gpu-device");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let arch = env::var("NEUROBITS_PTX_ARCH").unwrap_or_else(|_| "sm_90".into());
    println!("cargo:rerun-if-env-changed=NEUROBITS_PTX_ARCH");
    for p in ["gpu-device/src", "gpu-device/Cargo.toml", "gpu-device/Cargo.lock", "core/src", "core/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }

    let target_dir = out.join("ptx-target");
    // The kernels always build with the pinned toolchain (rust-toolchain.toml), whatever builds
    // the host: a nightly outer build (cargo fuzz) has neither the nvptx linker nor its rust-src.
    let pinned = std::fs::read_to_string(root.join("rust-toolchain.toml")).ok().and_then(|t| {
        t.lines().find_map(|l| {
            l.trim().strip_prefix("channel").map(|v| v.trim_start_matches([' ', '=']).trim_matches('"').to_string())
        })
    });
    let rustup = Command::new("rustup").arg("--version").output().is_ok_and(|o| o.status.success());
    let mut cmd = match pinned {
        Some(channel) if rustup => {
            let mut c = Command::new("rustup");
            c.args(["run", &channel, "cargo"]);
            c
        }
        _ => Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into())),
    };
    println!("cargo:rerun-if-changed={}", root.join("rust-toolchain.toml").display());
    cmd.current_dir(&device)
        .args(["build", "--release", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core", "--manifest-path"])
        .arg(device.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={arch}"));
    for (k, _) in env::vars() {
        let leaks = [
            "RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET",
            "RUSTC_WORKSPACE_WRAPPER",
            "RUSTC_WRAPPER",
            "RUSTUP_TOOLCHAIN",
            "RUSTC",
            "RUSTDOC",
            "CARGO",
        ];
        if leaks.contains(&k.as_str()) || k.starts_with("CARGO_PROFILE_") || k.starts_with("CARGO_CFG_") {
            cmd.env_remove(&k);
        }
    }
    let status = cmd.status().expect("cannot run cargo for the PTX build");
    assert!(status.success(), "building gpu-device for nvptx64-nvidia-cuda failed (see above)");
    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/neurobits_gpu_device.ptx");
    let ptx = std::fs::read_to_string(&ptx).expect("PTX output missing");
    std::fs::write(out.join("neurobits_gpu_device.ptx"), with_launch_bounds(ptx)).expect("cannot write the PTX");
}

/// Launch bounds that rustc's nvptx backend cannot express (CUDA C's `__launch_bounds__`):
/// `(kernel, threads per block, blocks per SM)`. ptxas then keeps the registers low enough for
/// that many blocks of that size on one SM; a launch with more threads fails instead of running.
/// Measured on an H100 (results/flyhash/fly-fmnist-h100-bounds.log, `ptxas -v` for the registers):
/// - `fly_pixel_act`: 512 threads (PIXEL_ACT_THREADS) and two of its 110 KiB tiles per SM;
///   unbounded, ptxas took 68 registers, room for one block only.
/// - `fly_pixel_wta`: 48 registers allowed two blocks per SM; bounded to three (40 registers,
///   4 bytes spilled outside the loops), the host's parts grow from 8 to 6 per 60 000 images
///   and the pixel path takes 9.80 instead of 9.91 ms. Four blocks (32 registers) spilled
///   52 bytes and the select took 4.31 instead of 4.09 ms.
/// - `gbnn_joint_first`: 48 registers, five blocks of 256 per SM; bounded to six (40 registers,
///   12 bytes spilled outside the loop) Scenario 3's first pass took 19.85 instead of 19.99 ms
///   (results/gbnn/bench-s3-h100-steps.log). `gbnn_step_joint` bounded to two blocks (123 instead
///   of 136 registers) did not change (10.38 against 10.37 ms), so it has no bound.
/// - `gbnn_joint_warp`: unbounded it took 142 registers, three blocks of 128 per SM; bounded to
///   five (96 registers, 44 bytes spilled), Scenario 2 took 0.069 instead of 0.085 ms (8 lanes
///   per probe). Six (80 registers, 156 bytes spilled) took 0.082-0.084 ms against 0.062-0.064
///   for five, and `.maxnreg 88` with blocks of 64 (22 warps per SM) was slower too. Five blocks
///   also fill the SM's shared memory (results/gbnn/bench-s2-h100-warp.log).
/// - `fly_hamming_keys_mma` (four 256-bit steps loaded per round): unbounded it took 72
///   registers, one block of 512 per SM, and the key kernel 22.6 ms; bounded to two blocks (64
///   registers, 48 bytes spilled) 9.41 ms; two steps per round (56 registers, two blocks
///   unbounded) 11.8 ms, one step 11.6 ms (10⁶ codes of 25 088 bits, 100 queries, one H100,
///   results/flyhash/search-h100-tensor-cores/).
const LAUNCH_BOUNDS: &[(&str, u32, u32)] = &[
    ("fly_pixel_act", 512, 2),
    ("fly_pixel_wta", 512, 3),
    ("gbnn_joint_first", 256, 6),
    ("gbnn_joint_warp", 128, 5),
    ("fly_hamming_keys_mma", 512, 2),
];

/// `ptx` with the [`LAUNCH_BOUNDS`] directives between each entry's parameters and its body.
fn with_launch_bounds(mut ptx: String) -> String {
    for &(name, threads, blocks) in LAUNCH_BOUNDS {
        let entry = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no kernel {name} in the PTX"));
        let body = entry + ptx[entry..].find("\n{").expect("an entry has a body");
        ptx.insert_str(body, &format!("\n.maxntid {threads}, 1, 1\n.minnctapersm {blocks}"));
    }
    ptx
}
