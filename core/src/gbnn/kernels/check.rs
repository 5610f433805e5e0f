//! The argument struct of the probe check on the device.

use super::Shape;
use crate::kernel::{kernel_struct, DevMut, DevPtr};

kernel_struct! {
    /// `gbnn_probe_check`: the host's probe check on the device, one thread per probe (the
    /// core's [`crate::gbnn::mode::check_probe`] and [`crate::gbnn::Geometry::erased_mask`]): a batch's
    /// first chunk, already uploaded, is checked without the host reading it.
    ProbeCheck => GbnnProbeCheck {
        /// Network shape.
        shape: Shape,
        /// Probes.
        k: u32,
        /// The rule, as `Rule as u32`.
        rule: u32,
        /// The mode, as `Mode as u32`.
        mode: u32,
        /// `K · C` symbols.
        probes: DevPtr<u16>,
        /// Two words, set by the host to `[u32::MAX, 0]` before the launch: the lowest refused
        /// probe (atomic minimum), and the most erased clusters of any probe (atomic maximum).
        found: DevMut<u32>,
    }
}
