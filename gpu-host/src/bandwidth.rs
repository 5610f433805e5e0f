use cudarc::driver::sys::CUevent_flags;

use crate::{Gpu, GpuError};

impl Gpu {
    /// Device-to-device copy bandwidth in bytes per second, counting bytes read and written:
    /// the best of a few copies of a `bytes`-sized buffer.
    pub fn copy_bandwidth(&self, bytes: usize) -> Result<f64, GpuError> {
        let st = &self.stream;
        self.ensure_fits(2 * bytes as u64)?;
        let src = st.alloc_zeros::<u8>(bytes)?;
        let mut dst = st.alloc_zeros::<u8>(bytes)?;
        let mut best = f64::MAX;
        for _ in 0..5 {
            let a = st.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            st.memcpy_dtod(&src, &mut dst)?;
            let b = st.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            best = best.min(a.elapsed_ms(&b)? as f64 / 1e3);
        }
        Ok(2.0 * bytes as f64 / best)
    }
}
