//! The dense coupling's lane rows built on the GPU from the points (`ocnn::coupling::lane_rows_gpu`:
//! the core's `coupling_weight` and `exp` on `fma.rn.f64`) equal the host's
//! `weights::lane_rows` entry for entry — offsets, columns, weights and norms, bit for bit — in
//! f32 and f64, 2-D to 6-D, with copies of points, and refuse an uncoupled point as the host
//! does. Needs a CUDA GPU (`make gpu-test`); the FCPS sets come from `make setup`.

#[path = "common/ocnn_points.rs"]
mod common;
use common::{fcps, random};
use neurobits::ocnn::{coupling, points, scale, weights};
use neurobits_gpu_host::ocnn::GpuReal;
use neurobits_gpu_host::Gpu;

/// Device rows = host rows for `p` at scale `a`; returns the entries compared.
fn same_rows<T: GpuReal + Send + Sync + std::fmt::Debug>(g: &Gpu, name: &str, p: &points::Points, a: f64) -> usize {
    let host = weights::lane_rows::<T, u32>(p, a, None).unwrap_or_else(|e| panic!("{name}: host: {e}"));
    let dev = coupling::lane_rows_gpu::<T>(g, p, a).unwrap_or_else(|e| panic!("{name}: device: {e}"));
    let (ptr, cols, vals) = dev.lane_rows().expect("download").expect("lane rows");
    assert_eq!(ptr, host.ptr, "{name}: offsets");
    assert_eq!(cols, host.cols, "{name}: columns");
    let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&vals), bits(&host.vals), "{name}: weights");
    assert_eq!(bits(&dev.norms().expect("norms")), bits(&host.norm), "{name}: norms");
    cols.len()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn lane_rows_from_the_points_equal_the_hosts() {
    let g = Gpu::open(0).expect("a CUDA GPU");
    let mut dup = random(600, 2, 3);
    dup.coords.extend_from_within(0..100 * 2); // 100 points twice: weights of exactly 1
    dup.n += 100;
    let sets = [
        ("Lsun 2-D", fcps("Lsun.data").skip(3)),
        ("Hepta 3-D", fcps("Hepta.data")),
        ("Chainlink 3-D", fcps("Chainlink.data")),
        ("random 2-D n=16000 (the bench's)", random(16000, 2, 1)),
        ("random 6-D n=1500", random(1500, 6, 2)),
        ("2-D with copies", dup),
    ];
    for (name, p) in &sets {
        let a = scale::scale(p).unwrap_or_else(|e| panic!("{name}: scale: {e}"));
        for f in [1.0, 0.37] {
            let e32 = same_rows::<f32>(&g, name, p, a * f);
            let e64 = same_rows::<f64>(&g, name, p, a * f);
            println!("{name}, a x {f}: f32 {e32} entries, f64 {e64} entries: device = host");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_uncoupled_point_is_refused_as_on_the_host() {
    let g = Gpu::open(0).expect("a CUDA GPU");
    let mut p = random(300, 2, 4);
    p.coords.extend([1e6, 1e6]);
    p.n += 1;
    let a = 1.0;
    let host = weights::lane_rows::<f32, u32>(&p, a, None).err().expect("host refuses");
    let dev = coupling::lane_rows_gpu::<f32>(&g, &p, a).err().expect("device refuses");
    let points = |e: &anyhow::Error| e.downcast_ref::<weights::Uncoupled>().expect("Uncoupled").points.clone();
    assert_eq!(points(&dev), points(&host));
    assert!(points(&dev).contains(&300));
}
