//! FlyNN on the GPU: the class memories trained and kept on the device, codes classified there.

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::kernels as k;
use neurobits_core::Word;

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// FlyNN class memories resident on the device (`classes · m` saturating counts).
pub struct FlynnGpu<'g> {
    gpu: &'g Gpu,
    m: usize,
    classes: usize,
    counts: CudaSlice<u16>,
}

impl Gpu {
    /// Trains FlyNN's memories on `labels.len()` codes of `m` bits (labels below `classes`);
    /// returns them and the kernel milliseconds.
    pub fn flynn_train(
        &self,
        codes: &[Word],
        labels: &[u8],
        classes: usize,
        m: usize,
    ) -> Result<(FlynnGpu<'_>, f64), GpuError> {
        let words = m.div_ceil(64);
        if m == 0
            || classes == 0
            || codes.len() != labels.len() * words
            || labels.iter().any(|&l| l as usize >= classes)
        {
            return Err(GpuError::Input("FlyNN training codes, labels and classes do not match".into()));
        }
        let mut order: Vec<u32> = (0..labels.len() as u32).collect();
        order.sort_by_key(|&j| labels[j as usize]);
        let mut starts = vec![0u32; classes + 1];
        for &l in labels {
            starts[l as usize + 1] += 1;
        }
        for c in 0..classes {
            starts[c + 1] += starts[c];
        }
        self.ensure_fits(codes.len() as u64 * 8 + (classes * m) as u64 * 2 + labels.len() as u64 * 4)?;
        let st = &self.stream;
        let (dc, dorder, dstarts) = (st.clone_htod(codes)?, st.clone_htod(&order)?, st.clone_htod(&starts)?);
        // SAFETY: the kernel writes every (class, bit) count.
        let mut counts = unsafe { st.alloc::<u16>(classes * m)? };
        let mut t = KernelTimer::default();
        let a = k::FlynnTrain {
            m: m as u32,
            classes: classes as u32,
            words: words as u32,
            codes: rd(self, &dc),
            order: rd(self, &dorder),
            starts: rd(self, &dstarts),
            counts: wr(self, &mut counts),
        };
        // SAFETY: one thread per (class, bit) over the buffers sized above.
        unsafe { launch(self, &mut t, (classes * m) as u64, a)? };
        let ms = t.total_ms()?;
        Ok((FlynnGpu { gpu: self, m, classes, counts }, ms))
    }
}

impl FlynnGpu<'_> {
    /// The memories (`classes · m` counts, class-major).
    pub fn counts(&self) -> Result<Vec<u16>, GpuError> {
        Ok(self.gpu.stream.clone_dtoh(&self.counts)?)
    }

    /// The class of each code (`m`-bit codes); returns them and the kernel milliseconds.
    /// `weights`: the table of `neurobits_core::flyhash::flynn_weights` (`FLYNN_WEIGHTS` long).
    pub fn classify(&self, codes: &[Word], weights: &[u64]) -> Result<(Vec<u32>, f64), GpuError> {
        if weights.len() != neurobits_core::flyhash::FLYNN_WEIGHTS {
            return Err(GpuError::Input("FlyNN weight table of the wrong length".into()));
        }
        let (g, words) = (self.gpu, self.m.div_ceil(64));
        if !codes.len().is_multiple_of(words) {
            return Err(GpuError::Input("FlyNN codes do not match the code length".into()));
        }
        let n = codes.len() / words;
        g.ensure_fits(codes.len() as u64 * 8 + n as u64 * 4)?;
        let (dc, dw) = (g.stream.clone_htod(codes)?, g.stream.clone_htod(weights)?);
        let mut out = g.stream.alloc_zeros::<u32>(n.max(1))?;
        let mut t = KernelTimer::default();
        let a = k::FlynnClassify {
            m: self.m as u32,
            classes: self.classes as u32,
            words: words as u32,
            n: n as u32,
            codes: rd(g, &dc),
            counts: rd(g, &self.counts),
            weights: rd(g, &dw),
            out: wr(g, &mut out),
        };
        // SAFETY: one thread per code over the buffers sized above.
        unsafe { launch(g, &mut t, n as u64, a)? };
        let mut v = g.stream.clone_dtoh(&out)?;
        v.truncate(n);
        Ok((v, t.total_ms()?))
    }
}
