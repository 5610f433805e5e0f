//! The paper's GPU method, as the speed reference: sum-of-sum with a dense `f32` `W` (γ on the
//! diagonal) and `S = W·V` through cuBLAS `sgemm`, then the per-cluster selection kernel (the
//! core's `select_max` over `f32` scores), for the whole batch until nothing changes or `t_max`.

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::CudaSlice;
use neurobits_core::{
    gbnn::{Network, ERASED},
    Word,
};
use std::time::Instant;

use neurobits_core::gbnn::kernels::{DenseSelect, Shape};

use crate::launch::{launch, rd, wr, KernelTimer};
use crate::{Gpu, GpuError};

/// Dense `W` resident on the GPU with a cuBLAS handle.
pub struct DenseGpu<'g> {
    gpu: &'g Gpu,
    net_geom: neurobits_core::gbnn::Geometry,
    blas: CudaBlas,
    w: CudaSlice<f32>,
}

impl<'g> DenseGpu<'g> {
    /// Expands `net` into a dense `n × n` `f32` matrix on the device.
    pub fn new(gpu: &'g Gpu, net: &Network, gamma: u32) -> Result<Self, GpuError> {
        let g = *net.geometry();
        if g.words_per_cluster() > 32 {
            return Err(GpuError::Input("the dense GPU baseline supports L <= 2048".into()));
        }
        if !std::panic::catch_unwind(|| unsafe { cudarc::cublas::sys::is_culib_present() }).unwrap_or(false) {
            return Err(GpuError::NoCublas);
        }
        let n = g.neurons();
        gpu.ensure_fits((n * n * 4) as u64)?;
        let w = net.dense_weights(gamma);
        let blas = CudaBlas::new(gpu.stream.clone()).map_err(|e| GpuError::Cuda(format!("{e:?}")))?;
        let w = gpu.stream.clone_htod(&w)?;
        Ok(DenseGpu { gpu, net_geom: g, blas, w })
    }

    /// Retrieves `K` probes; returns bit-packed states, GPU kernel milliseconds (sgemm and
    /// selection) and total milliseconds including transfers.
    pub fn retrieve(&self, probes: &[u16], max_iter: u32) -> Result<(Vec<Word>, f64, f64), GpuError> {
        let start = Instant::now();
        let g = &self.net_geom;
        let (n, c, l) = (g.neurons(), g.clusters(), g.neurons_per_cluster());
        let k = probes.len() / c;
        let st = &self.gpu.stream;
        self.gpu.ensure_fits((2 * n * k * 4 + k * g.row_words() * 8) as u64)?;
        let mut v0 = vec![0f32; n * k];
        let mut s0 = vec![0u64; k * g.row_words()];
        for (p, pr) in probes.chunks(c).enumerate() {
            for (cl, &sym) in pr.iter().enumerate() {
                if sym != ERASED {
                    v0[p * n + cl * l + sym as usize] = 1.0;
                    let (wi, bit) = g.bit(cl, sym as usize);
                    s0[p * g.row_words() + wi] |= bit;
                }
            }
        }
        let mut v = st.clone_htod(&v0)?;
        let mut states = st.clone_htod(&s0)?;
        let mut scores = st.alloc_zeros::<f32>(n * k)?;
        let mut changed = st.alloc_zeros::<u32>(1)?;
        let mut timer = KernelTimer::default();
        let mut gemm_ms = 0.0;
        let cfg = GemmConfig {
            transa: cublasOperation_t::CUBLAS_OP_N,
            transb: cublasOperation_t::CUBLAS_OP_N,
            m: n as i32,
            n: k as i32,
            k: n as i32,
            alpha: 1.0f32,
            lda: n as i32,
            ldb: n as i32,
            beta: 0.0f32,
            ldc: n as i32,
        };
        for _ in 0..max_iter {
            let a = st.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
            // SAFETY: W is n×n, V and S are n×k, column-major, as configured.
            unsafe { self.blas.gemm(cfg, &self.w, &v, &mut scores) }.map_err(|e| GpuError::Cuda(format!("{e:?}")))?;
            let b = st.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
            gemm_ms += a.elapsed_ms(&b)? as f64;
            st.memset_zeros(&mut changed)?;
            let gpu = self.gpu;
            let a = DenseSelect {
                shape: Shape::of(g),
                k: k as u32,
                s: rd(gpu, &scores),
                v: wr(gpu, &mut v),
                states: wr(gpu, &mut states),
                changed: wr(gpu, &mut changed),
            };
            // SAFETY: S and V are n×K f32, the states K rows, `changed` one u32.
            unsafe { launch(gpu, &mut timer, k as u64 * c as u64, a)? };
            if st.clone_dtoh(&changed)?[0] == 0 {
                break;
            }
        }
        let out = st.clone_dtoh(&states)?;
        let kernel_ms = gemm_ms + timer.total_ms()?;
        Ok((out, kernel_ms, start.elapsed().as_secs_f64() * 1e3))
    }
}
