//! The probe check before a batch's first launch: every probe checked (a bad symbol would make a
//! kernel write out of bounds) and measured (most erased clusters) in one pass on rayon's pool,
//! or, for a pipelined batch's first chunk already queued to the device, by a kernel there
//! ([`DeviceNetwork::check_preloaded`]).

use cudarc::driver::DevicePtr;
use neurobits_core::gbnn::kernels::{ProbeCheck, Shape};
use neurobits_core::gbnn::mode::check_probe;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::{Geometry, Mode, Rule};
use std::time::Instant;

use super::chunk::Chunk;
use super::slots::probe_count;
use super::DeviceNetwork;
use crate::launch::{launch_shaped, ms_since, profile_note, rd, wr, BLOCK};
use crate::GpuError;

/// What the launches need to know about a batch, found in one pass over its probes.
pub(super) struct Scan {
    /// Probes.
    pub k: usize,
    /// Most erased clusters of any probe.
    pub e_max: u32,
    /// Most erased clusters of any probe owned by one of the shards.
    pub eo_max: u32,
}

/// The most erased clusters of any probe of `part`, and of any probe within one of `shards`,
/// after checking every probe for `rule` in `mode`.
#[inline(always)]
fn scan_part(g: &Geometry, part: &[u16], shards: &[Shard], (rule, mode): (Rule, Mode)) -> Result<(u32, u32), GpuError> {
    let (mut e_max, mut eo_max) = (0, 0);
    for p in part.chunks(g.clusters()) {
        check_probe(g, p, rule, mode).map_err(|e| GpuError::Input(e.to_string()))?;
        let e = g.erased_mask(p);
        e_max = e_max.max(e.count_ones());
        eo_max = shards.iter().map(|s| (e & s.mask()).count_ones()).fold(eo_max, u32::max);
    }
    Ok((e_max, eo_max))
}

/// [`scan_part`] compiled for AVX2: the core's checks vectorise (under half of the baseline
/// x86-64 time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn scan_part_avx2(
    g: &Geometry,
    part: &[u16],
    shards: &[Shard],
    how: (Rule, Mode),
) -> Result<(u32, u32), GpuError> {
    scan_part(g, part, shards, how)
}

/// [`scan_part`] with the instructions this CPU has.
fn scan_dispatch(g: &Geometry, part: &[u16], shards: &[Shard], how: (Rule, Mode)) -> Result<(u32, u32), GpuError> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has AVX2 and POPCNT (checked just above).
        return unsafe { scan_part_avx2(g, part, shards, how) };
    }
    scan_part(g, part, shards, how)
}

/// Checks every probe for `rule` in `mode` (a bad symbol would make a kernel write out of
/// bounds; a rule the mode does not define is refused) and measures the batch, in parts of at
/// least 2^13 probes on rayon's pool, four per pool thread (load balance): one core takes
/// milliseconds over a million probes (7 ns a probe of 32 clusters), and threads spawned per
/// call cost as much again on a host whose GPUs' threads all scan at once (3–5 ms for 250 000
/// probes per GPU on 4 H200s with 8 spawned threads each). A pipelined batch checks only its
/// first chunk before its first launch, the others on its copy thread while the chunk before
/// runs (`super::pipeline`).
pub(super) fn scan_probes(g: &Geometry, probes: &[u16], shards: &[Shard], how: (Rule, Mode)) -> Result<Scan, GpuError> {
    use rayon::prelude::*;
    let (c, k) = (g.clusters(), probe_count(g, probes)?);
    let per = k.div_ceil(4 * rayon::current_num_threads()).max(1 << 13) * c;
    let t0 = Instant::now();
    let timed = |part: &[u16]| {
        let t = Instant::now();
        let r = scan_dispatch(g, part, shards, how);
        (r, (t - t0).as_secs_f64() * 1e3, ms_since(t))
    };
    let runs: Vec<_> =
        if probes.len() <= per { vec![timed(probes)] } else { probes.par_chunks(per).map(timed).collect() };
    // Under NEUROBITS_GPU_PROFILE: when the parts started and how long the slowest took (a
    // late start is a busy pool, a long part a slow core).
    profile_note(|| {
        let last_start = runs.iter().map(|r| r.1).fold(0.0, f64::max);
        let longest = runs.iter().map(|r| r.2).fold(0.0, f64::max);
        format!(
            "probe scan: {} parts, the last started at {last_start:.2} ms, the longest took {longest:.2} ms",
            runs.len()
        )
    });
    let found = runs.into_iter().map(|r| r.0).collect::<Result<Vec<_>, _>>()?;
    let e_max = found.iter().map(|f| f.0).max().unwrap_or(0);
    let eo_max = found.iter().map(|f| f.1).max().unwrap_or(0);
    Ok(Scan { k, e_max, eo_max })
}

impl DeviceNetwork<'_> {
    /// The most erased clusters of `part`, the probes queued into `ch.probes` before the check
    /// ([`DeviceNetwork::preload`]), checked where they lie: one `gbnn_probe_check` launch behind
    /// their upload and two words read back, instead of the host reading them (8 MB per 2^17
    /// probes of 32 clusters: 1–3 ms per GPU before the first launch on a 4-GPU host, whose
    /// GPUs' threads all scanned at once). A refused probe is checked again on the host, which
    /// returns the error [`scan_probes`] would have, word for word.
    pub(super) fn check_preloaded(&self, ch: &mut Chunk, part: &[u16], how: (Rule, Mode)) -> Result<u32, GpuError> {
        let (g, gpu) = (&self.geom, self.gpu());
        let st = &gpu.stream;
        let k = probe_count(g, part)?;
        if part.len() > ch.probes.len() || k == 0 {
            return Err(GpuError::Input(format!("{k} preloaded probes for a buffer of {}", ch.probes.len())));
        }
        st.memcpy_htod(&[u32::MAX, 0], &mut ch.found)?;
        let a = ProbeCheck {
            shape: Shape::of(g),
            k: k as u32,
            rule: how.0 as u32,
            mode: how.1 as u32,
            probes: rd(gpu, &ch.probes),
            found: wr(gpu, &mut ch.found),
        };
        let blocks = u32::try_from(k.div_ceil(BLOCK as usize)).map_err(|_| GpuError::Input(format!("{k} probes")))?;
        // SAFETY: `ch.probes` holds the chunk's `k` probes (queued before this launch on the same
        // stream), `ch.found` two words.
        unsafe { launch_shaped(gpu, None, (blocks, BLOCK, 0), a)? };
        self.note_device_check();
        let mut found = [0u32; 2];
        let (src, read) = ch.found.device_ptr(st);
        // SAFETY: `found` holds the two words copied; it is read only after the synchronisation.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut found, src, st.cu_stream()) }?;
        drop(read);
        st.synchronize()?;
        if found[0] != u32::MAX {
            scan_probes(g, part, &[self.shard], how)?;
            return Err(GpuError::Cuda(format!("probe {} refused on the device, accepted on the host", found[0])));
        }
        Ok(found[1])
    }
}
