//! CPU-side checks of the GPU build (these run in CI, which has no GPU).

use neurobits_gpu_host::ptx::{ENTRY_POINTS, PTX};
use neurobits_gpu_host::{Gpu, GpuError};

#[test]
fn ptx_has_every_entry_point() {
    for name in ENTRY_POINTS {
        assert!(PTX.contains(&format!(".visible .entry {name}(")), "kernel {name} missing from the PTX");
    }
    assert_eq!(PTX.matches(".visible .entry").count(), ENTRY_POINTS.len(), "unexpected extra kernels");
}

#[test]
fn ptx_targets_the_configured_architecture() {
    let arch = std::env::var("NEUROBITS_PTX_ARCH").unwrap_or_else(|_| "sm_90".into());
    assert!(PTX.contains(&format!(".target {arch}")), "PTX not built for {arch}");
    // Formatting machinery would bloat the kernels (see gpu-toolchain notes); it must stay out.
    assert!(PTX.len() < 400_000, "PTX is {} bytes", PTX.len());
}

/// Assembles the PTX with `ptxas` (path in `$PTXAS`, installed by `make setup`), so invalid PTX
/// fails CI. Without `$PTXAS` the test is skipped, unless `NEUROBITS_REQUIRE_PTXAS=1` (as in
/// `make test`), where a missing ptxas is a failure.
#[test]
fn ptx_assembles_with_ptxas() {
    let Ok(ptxas) = std::env::var("PTXAS") else {
        assert!(std::env::var("NEUROBITS_REQUIRE_PTXAS").is_err(), "PTXAS is not set");
        eprintln!("PTXAS not set: skipped");
        return;
    };
    let dir = tempfile_dir();
    let src = dir.join("k.ptx");
    std::fs::write(&src, PTX).unwrap();
    let arch = std::env::var("NEUROBITS_PTX_ARCH").unwrap_or_else(|_| "sm_90".into());
    let out = std::process::Command::new(&ptxas)
        .args(["-arch", &arch, "-v", "-o"])
        .arg(dir.join("k.cubin"))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {ptxas}: {e}"));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ptxas rejected the PTX:\n{log}");
    for name in ENTRY_POINTS {
        assert!(log.contains(&format!("entry function '{name}'")), "ptxas did not compile {name}:\n{log}");
    }
    std::fs::remove_dir_all(dir).ok();
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("neurobits-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn opening_without_a_gpu_is_an_error_not_a_panic() {
    match Gpu::open(0) {
        Ok(gpu) => assert!(!gpu.name().is_empty()),
        Err(e) => {
            assert!(matches!(e, GpuError::NoDriver | GpuError::NoDevice(_)), "{e:?}");
            assert_eq!(e.to_string().lines().count(), 1);
        }
    }
    assert!(matches!(Gpu::open(4096), Err(GpuError::NoDriver | GpuError::NoDevice(4096))));
}
