//! The kernels as built: PTX text for `sm_90` (or `$NEUROBITS_PTX_ARCH`) and their entry names.

/// PTX of `gpu-device/`, embedded at build time.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/neurobits_gpu_device.ptx"));

/// Every kernel entry point the host launches.
pub const ENTRY_POINTS: [&str; 20] = [
    "gbnn_store",
    "gbnn_init",
    "gbnn_step_word",
    "gbnn_probe_index",
    "gbnn_joint_first",
    "gbnn_occupancy",
    "gbnn_step_joint",
    "gbnn_step_sos",
    "gbnn_compact",
    "dense_select",
    "fly_projection",
    "fly_activation",
    "fly_radix_init",
    "fly_radix_hist",
    "fly_radix_pick",
    "fly_tie_count",
    "fly_select",
    "fly_wta_bisect64",
    "fly_hamming",
    "fly_top_r",
];
