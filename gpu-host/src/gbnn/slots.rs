//! The caller's memory as slots a retrieval writes: decoded results and statistics go straight
//! into a vector's spare capacity (reused memory takes no page faults, nothing is written twice),
//! and the batch's size checks.

use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::Geometry;
use std::mem::MaybeUninit;

use crate::GpuError;

/// `out` as slots to be written: the retrieval writes decoded values only, never
/// uninitialised bytes, so `out` stays a valid slice whatever happens.
pub(super) fn as_slots(out: &mut [Decoded]) -> &mut [MaybeUninit<Decoded>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the callers only write initialised `Decoded`s.
    unsafe { &mut *(out as *mut [Decoded] as *mut [MaybeUninit<Decoded>]) }
}

/// `K` for a batch of `K·C` symbols; a ragged batch is an input error.
pub(super) fn probe_count(g: &Geometry, probes: &[u16]) -> Result<usize, GpuError> {
    let c = g.clusters();
    if !probes.len().is_multiple_of(c) {
        return Err(GpuError::Input(format!("{} symbols is not a whole number of {c}-symbol probes", probes.len())));
    }
    Ok(probes.len() / c)
}

/// That a batch of `k` probes of `c` clusters has a result slot per cluster and a statistics
/// slot per probe.
pub(super) fn check_slots(k: usize, c: usize, results: usize, stats: usize) -> Result<(), GpuError> {
    if results != k * c || stats != k {
        return Err(GpuError::Input(format!(
            "{results} result and {stats} statistics slots for {k} probes of {c} clusters"
        )));
    }
    Ok(())
}

/// `buffer`'s memory, cleared, holding the `n` values (decoded results, statistics) that
/// `write` puts into its spare capacity (`write` must write all `n`, or fail); with `write`'s
/// other result. Reused memory takes no page faults, and nothing is written twice.
pub(super) fn fill<E, T>(
    buffer: Vec<E>,
    n: usize,
    write: impl FnOnce(&mut [MaybeUninit<E>]) -> Result<T, GpuError>,
) -> Result<(Vec<E>, T), GpuError> {
    let mut v = buffer;
    v.clear();
    v.reserve(n);
    let r = write(&mut v.spare_capacity_mut()[..n])?;
    // SAFETY: `write` succeeded, so it wrote all `n` values.
    unsafe { v.set_len(n) };
    Ok((v, r))
}

/// The first `dst.len()` decoded values of `out` into `dst`.
pub(super) fn download_decoded(
    gpu: &crate::Gpu,
    out: &cudarc::driver::CudaSlice<u32>,
    dst: &mut [MaybeUninit<Decoded>],
) -> Result<(), GpuError> {
    // A direct copy into the caller's memory: measured faster here than the pinned staging
    // buffer (whose extra host copy costs more than it saves at these sizes; 128 MB: 14 ms
    // against 28–42 ms on an H200 host).
    use cudarc::driver::DevicePtr;
    let (src, _sync) = out.device_ptr(&gpu.stream);
    gpu.stream.synchronize()?;
    let n = dst.len().min(out.len());
    // SAFETY: `dst` holds `n` u32-sized slots (`Decoded` is `repr(transparent)` over `u32`) and
    // `out` at least `n` values; the stream is synchronized, so the kernels have written them.
    unsafe { cudarc::driver::sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, n * 4) }.result()?;
    if n < dst.len() {
        return Err(GpuError::Input("more result slots than results".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_writes_into_the_buffer_it_was_given_and_keeps_nothing_on_an_error() {
        let buffer = Vec::<u32>::with_capacity(8);
        let at = buffer.as_ptr();
        let (v, r) = fill(buffer, 5, |s| {
            for (i, x) in s.iter_mut().enumerate() {
                x.write(2 * i as u32);
            }
            Ok(7)
        })
        .unwrap();
        assert_eq!((v.as_slice(), r), (&[0, 2, 4, 6, 8][..], 7));
        assert_eq!(v.as_ptr(), at, "the given memory is reused");
        let refused = fill(vec![1u32; 3], 4, |_| Err::<(), _>(GpuError::Input("refused".into())));
        assert!(matches!(refused, Err(GpuError::Input(m)) if m == "refused"));
    }

    #[test]
    fn a_ragged_batch_is_an_input_error() {
        let g = Geometry::new(4, 8).unwrap();
        assert_eq!(probe_count(&g, &[0; 12]).unwrap(), 3);
        assert!(matches!(probe_count(&g, &[0; 10]), Err(GpuError::Input(_))));
    }
}
