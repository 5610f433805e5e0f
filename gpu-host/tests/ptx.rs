//! CPU-side checks of the GPU build (these run in CI, which has no GPU).

use neurobits_core::flyhash::kernels as fk;
use neurobits_core::gbnn::kernels as gk;
use neurobits_core::kernel::{Kernel, KernelArgs};
use neurobits_core::ocnn::kernels as ok;
use neurobits_gpu_host::ptx::{entry_points, PTX};
use neurobits_gpu_host::{Gpu, GpuError};

#[test]
fn ptx_has_every_entry_point() {
    for name in entry_points() {
        assert!(PTX.contains(&format!(".visible .entry {name}(")), "kernel {name} missing from the PTX");
    }
    assert_eq!(PTX.matches(".visible .entry").count(), Kernel::ALL.len(), "unexpected extra kernels");
}

/// The launch bounds that `build.rs` writes into the PTX match how the host launches those
/// kernels: a launch with more threads than `.maxntid` would fail on the device, and a lost bound
/// would let ptxas take registers for fewer blocks per SM (measured slower; see `build.rs`).
#[test]
fn launch_bounds_match_the_launches() {
    for (name, threads, blocks) in [
        ("fly_pixel_act", fk::PIXEL_ACT_THREADS, 2),
        ("fly_pixel_wta", fk::PIXEL_WTA_THREADS, 3),
        ("gbnn_joint_first", neurobits_gpu_host::BLOCK, 6),
        ("gbnn_joint_warp", gk::JointWarp::WARPS * 32, 5),
        ("fly_hamming_keys_mma", fk::HAMMING_THREADS, 2),
    ] {
        let head = format!(".visible .entry {name}(");
        let at = PTX.find(&head).unwrap_or_else(|| panic!("{name} missing"));
        let between = &PTX[at..at + PTX[at..].find("\n{").expect("an entry has a body")];
        let bounds = format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}");
        assert!(between.contains(&bounds), "{name}: expected `{bounds}` before its body");
    }
    assert_eq!(PTX.matches(".maxntid").count(), 5, "a kernel with bounds this test does not check");
}

/// The `.param` sizes of `A::KERNEL`'s entry in the PTX, in order.
fn params_of<A: KernelArgs>() -> Vec<usize> {
    let name = A::KERNEL.name();
    let head = format!(".visible .entry {name}(");
    let at = PTX.find(&head).unwrap_or_else(|| panic!("{name} missing")) + head.len();
    let decl = &PTX[at..at + PTX[at..].find(')').expect("closing parenthesis")];
    decl.lines()
        .filter(|l| l.contains(".param"))
        .map(|l| match l.split('[').nth(1) {
            Some(n) => n.split(']').next().and_then(|n| n.parse().ok()).expect("array size"),
            // `.param .u32 name`: the type's width.
            None => {
                let ty = l.split_whitespace().nth(1).expect("param type");
                ty.trim_start_matches(|c: char| !c.is_ascii_digit()).parse::<usize>().expect("type width") / 8
            }
        })
        .collect()
}

fn check<A: KernelArgs>(seen: &mut Vec<Kernel>) {
    // SAFETY: argument structs are plain data (integers, floats, nullable device pointers).
    let args: A = unsafe { std::mem::zeroed() };
    let host = args.param_ptrs().sizes().to_vec();
    assert_eq!(host.len(), A::PARAMS);
    assert_eq!(params_of::<A>(), host, "{}: PTX parameters differ from the host struct's fields", A::KERNEL.name());
    seen.push(A::KERNEL);
}

/// Every kernel's parameters are its argument struct's fields, in number and size: host and
/// device agree on every byte passed.
#[test]
fn every_kernel_takes_exactly_its_argument_struct() {
    let mut seen = Vec::new();
    check::<gk::Store>(&mut seen);
    check::<gk::Init>(&mut seen);
    check::<gk::StepWord>(&mut seen);
    check::<gk::ProbeIndex>(&mut seen);
    check::<gk::ProbeCheck>(&mut seen);
    check::<gk::JointFirst>(&mut seen);
    check::<gk::StepJoint>(&mut seen);
    check::<gk::StepSos>(&mut seen);
    check::<gk::StepGlobal>(&mut seen);
    check::<gk::Compact>(&mut seen);
    check::<gk::DenseSelect>(&mut seen);
    check::<gk::Decode>(&mut seen);
    check::<gk::Pack>(&mut seen);
    check::<gk::Unpack>(&mut seen);
    check::<gk::JointWarp>(&mut seen);
    check::<fk::Projection>(&mut seen);
    check::<fk::Activation>(&mut seen);
    check::<fk::RadixInit>(&mut seen);
    check::<fk::RadixHist>(&mut seen);
    check::<fk::RadixPick>(&mut seen);
    check::<fk::TieCount>(&mut seen);
    check::<fk::Select>(&mut seen);
    check::<fk::Bisect64>(&mut seen);
    check::<fk::Hamming>(&mut seen);
    check::<fk::TopR>(&mut seen);
    check::<fk::PixelAct>(&mut seen);
    check::<fk::PixelWta>(&mut seen);
    check::<fk::HammingKeys>(&mut seen);
    check::<fk::HammingKeysMma>(&mut seen);
    check::<fk::HammingSelect>(&mut seen);
    check::<fk::CodesWordMajor>(&mut seen);
    check::<fk::FloatSample>(&mut seen);
    check::<fk::FloatInterval>(&mut seen);
    check::<fk::FloatHash>(&mut seen);
    check::<fk::FloatResolve>(&mut seen);
    check::<fk::Gather>(&mut seen);
    check::<fk::UnpackPixels>(&mut seen);
    check::<fk::AnnDist>(&mut seen);
    check::<fk::AnnTopR>(&mut seen);
    check::<fk::FlynnTrain>(&mut seen);
    check::<fk::FlynnClassify>(&mut seen);
    check::<ok::TransferF32>(&mut seen);
    check::<ok::StepF32>(&mut seen);
    check::<ok::TransferF64>(&mut seen);
    check::<ok::StepF64>(&mut seen);
    check::<ok::PhaseBitsF32>(&mut seen);
    check::<ok::PhaseBitsF64>(&mut seen);
    check::<ok::PhaseHits>(&mut seen);
    check::<ok::FragmentaryHitsF32>(&mut seen);
    check::<ok::FragmentaryHitsF64>(&mut seen);
    check::<ok::StepSparseF32>(&mut seen);
    check::<ok::StepSparseF64>(&mut seen);
    check::<ok::StepGroupedF32>(&mut seen);
    check::<ok::GroupFillF32>(&mut seen);
    check::<ok::StepGroupedF64>(&mut seen);
    check::<ok::GroupFillF64>(&mut seen);
    check::<ok::SparsePhaseHits>(&mut seen);
    check::<ok::SparseFragmentaryHitsF32>(&mut seen);
    check::<ok::SparseFragmentaryHitsF64>(&mut seen);
    check::<ok::StepPerNeuronF32>(&mut seen);
    check::<ok::LanesYF32>(&mut seen);
    check::<ok::CombineYF32>(&mut seen);
    check::<ok::StepPerNeuronF64>(&mut seen);
    check::<ok::LanesYF64>(&mut seen);
    check::<ok::CombineYF64>(&mut seen);
    check::<ok::StepLaneRowsF32>(&mut seen);
    check::<ok::StepLaneRowsF64>(&mut seen);
    check::<ok::LaneWidthF32>(&mut seen);
    check::<ok::LaneFillF32>(&mut seen);
    check::<ok::LaneWidthF64>(&mut seen);
    check::<ok::LaneFillF64>(&mut seen);
    check::<ok::LanePointsWidthF32>(&mut seen);
    check::<ok::LanePointsFillF32>(&mut seen);
    check::<ok::LanePointsWidthF64>(&mut seen);
    check::<ok::LanePointsFillF64>(&mut seen);
    check::<ok::LaneQuot16>(&mut seen);
    check::<ok::StepLaneStatesF32>(&mut seen);
    check::<ok::StepLaneStatesF64>(&mut seen);
    check::<ok::ForestBest>(&mut seen);
    check::<ok::ForestHook>(&mut seen);
    check::<ok::ForestJump>(&mut seen);
    check::<neurobits_core::cortical::kernels::Columns>(&mut seen);
    check::<neurobits_core::cortical::kernels::Queue>(&mut seen);
    check::<neurobits_core::cortical::kernels::Init>(&mut seen);
    for k in Kernel::ALL {
        assert!(seen.contains(k), "{} has no size check", k.name());
    }
}

#[test]
fn ptx_targets_the_configured_architecture() {
    let arch = std::env::var("NEUROBITS_PTX_ARCH").unwrap_or_else(|_| "sm_90".into());
    assert!(PTX.contains(&format!(".target {arch}")), "PTX not built for {arch}");
    // Formatting machinery would bloat the kernels (see gpu-toolchain notes); it must stay out.
    // 84 entries take ~1.02 MB (gbnn_step_global, the sparse mode's, ~38 kB of it: both scores
    // inlined in both of its passes; the approximate index's two ~60 kB: three distances
    // unrolled by 16 lanes, and the radix select; the grouped sparse OCNN step's ~40 kB per
    // type: 32 lanes unrolled so that their sums stay in registers; the OCNN lane rows from the
    // points, ~8 kB each: the core's `exp` inlined); formatting would add megabytes.
    assert!(PTX.len() < 1_100_000, "PTX is {} bytes", PTX.len());
}

/// Assembles the PTX with `ptxas` (path in `$PTXAS`, installed by `make setup`), so invalid PTX
/// fails CI. A missing `$PTXAS` is a failure: run the tests through `make test`, or set
/// `NEUROBITS_SKIP_PTXAS=1` to skip this one test knowingly.
#[test]
fn ptx_assembles_with_ptxas() {
    let Some(ptxas) = std::env::var("PTXAS").ok().filter(|p| !p.is_empty()) else {
        assert!(
            std::env::var_os("NEUROBITS_SKIP_PTXAS").is_some(),
            "PTXAS is not set: run `make test` (or set NEUROBITS_SKIP_PTXAS=1)"
        );
        eprintln!("NEUROBITS_SKIP_PTXAS set: ptxas check skipped");
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
    for name in entry_points() {
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

/// The PTX of entry point `name`, from its head to its closing brace.
fn entry(name: &str) -> &'static str {
    let head = format!(".visible .entry {name}(");
    let at = PTX.find(&head).unwrap_or_else(|| panic!("{name} missing"));
    &PTX[at..at + PTX[at..].find("\n}").expect("end of entry")]
}

/// Every float multiply, add, subtract and divide of `body` rounds to nearest explicitly (`.rn`,
/// which ptxas never fuses).
fn assert_rounds_to_nearest(name: &str, body: &str) {
    for line in body.lines().map(str::trim) {
        for op in ["mul.f", "add.f", "sub.f", "div.f", "mul.ftz", "add.ftz", "div.approx", "div.full"] {
            assert!(!line.starts_with(op), "{name}: `{line}` does not round to nearest explicitly");
        }
    }
}

/// The OCNN update, the FlyHash `f32` sums and the approximate index's Euclidean re-ranking are bit-exact only without contraction: no
/// `fma`/`mad` in their kernels, and every float multiply, add and divide rounds to nearest
/// explicitly (`.rn`, which ptxas never fuses).
#[test]
fn float_kernels_have_no_fma_and_round_to_nearest() {
    for name in [
        "fly_activation",
        "fly_float_sample",
        "fly_float_hash",
        "fly_ann_dist",
        "ocnn_transfer_f32",
        "ocnn_step_f32",
        "ocnn_transfer_f64",
        "ocnn_step_f64",
        "ocnn_step_per_neuron_f32",
        "ocnn_step_per_neuron_f64",
        "ocnn_lanes_y_f32",
        "ocnn_lanes_y_f64",
        "ocnn_combine_y_f32",
        "ocnn_combine_y_f64",
        "ocnn_step_sparse_f32",
        "ocnn_step_sparse_f64",
        "ocnn_step_lane_rows_f32",
        "ocnn_step_lane_rows_f64",
        "ocnn_step_lane_states_f32",
        "ocnn_step_lane_states_f64",
    ] {
        let body = entry(name);
        for bad in ["fma.", "mad.f", "mad.rn"] {
            assert!(!body.contains(bad), "{name} contains {bad}");
        }
        assert_rounds_to_nearest(name, body);
        assert!(body.contains(".rn.f"), "{name}: no .rn arithmetic found");
    }
}

/// The lane rows built from the points compute each weight with the core's `exp`, whose eight
/// multiply-adds are fused on purpose (`fma.rn.f64`, where glibc's FMA build fuses them: the
/// host's bits); nothing else is fused — the squared distance's products and sums round on
/// their own — and every other float operation rounds to nearest explicitly.
#[test]
fn lane_rows_from_points_fuse_only_the_exps_multiply_adds() {
    for name in [
        "ocnn_lane_points_width_f32",
        "ocnn_lane_points_fill_f32",
        "ocnn_lane_points_width_f64",
        "ocnn_lane_points_fill_f64",
    ] {
        let body = entry(name);
        assert_eq!(body.matches("fma.rn.f64").count(), 8, "{name}: the exp's eight fused multiply-adds");
        assert_eq!(body.matches("fma.").count(), 8, "{name}: another fused operation");
        assert!(!body.contains("mad."), "{name} contains mad");
        assert_rounds_to_nearest(name, body);
    }
}

/// The work queue publishes a winner with `fence.acq_rel.gpu` before raising the parent's flag,
/// and waits with an acquire fence after seeing it (spec §11.2 (d)): without them the parent
/// could read a stale child winner.
#[test]
fn cortical_work_queue_fences_its_ready_flags() {
    let start = PTX.find(".entry cortical_queue").expect("cortical_queue in the PTX");
    let body = &PTX[start..];
    let body = &body[..body.find("\n}").unwrap_or(body.len())];
    assert!(body.matches("fence.acq_rel.gpu").count() >= 2, "fences missing");
    assert!(body.contains("atom.global.add.u32"), "flag/queue atomics missing");
}
