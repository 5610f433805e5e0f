//! The kernels as built: PTX text for `sm_90` (or `$NEUROBITS_PTX_ARCH`) and their entry names.

use neurobits_core::kernel::Kernel;

/// PTX of `gpu-device/`, embedded at build time.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/neurobits_gpu_device.ptx"));

/// Every kernel entry point the host launches (the names of [`Kernel::ALL`]).
///
/// ```
/// assert!(neurobits_gpu_host::ptx::entry_points().any(|n| n == "gbnn_store"));
/// ```
pub fn entry_points() -> impl Iterator<Item = &'static str> {
    Kernel::ALL.iter().map(|k| k.name())
}
