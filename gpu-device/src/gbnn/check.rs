//! The probe check on the device: a batch's first chunk, uploaded while the host would have read
//! it, is checked where it already lies (the host's check of it held the first launch back by
//! 1–3 ms per GPU on a 4-GPU host, its threads sharing one pool).

use super::*;
use neurobits_core::gbnn::mode::check_probe;

kernel! {
    /// One thread per probe: the core's `check_probe` (the host's check, the same rules) and the
    /// probe's erased clusters. A refused probe lowers `found[0]` to its index (the host then
    /// checks the chunk itself for the identical error); the others raise `found[1]` to their
    /// erased count.
    fn gbnn_probe_check(a: ProbeCheck {
        shape: Shape,
        k: u32,
        rule: u32,
        mode: u32,
        probes: DevPtr<u16>,
        found: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let p = gid();
        if p >= a.k as usize {
            return;
        }
        let (Some(rule), Some(mode)) = (Rule::from_u32(a.rule), Mode::from_u32(a.mode)) else { abort() };
        let symbols = from_raw_parts(a.probes.0.add(p * g.clusters()), g.clusters());
        if check_probe(&g, symbols, rule, mode).is_err() {
            AtomicU32::from_ptr(a.found.0).fetch_min(p as u32, Relaxed);
        } else {
            AtomicU32::from_ptr(a.found.0.add(1)).fetch_max(g.erased_mask(symbols).count_ones(), Relaxed);
        }
    }
}
