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
    std::fs::copy(&ptx, out.join("neurobits_gpu_device.ptx")).expect("PTX output missing");
}
