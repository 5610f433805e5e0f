//! `ocnn bench --prepare`: the host's preparation before the first kernel, stage by stage, with
//! the way before (Qhull, the dense `n × n` weights, lane rows from them, uploading `J`) and the
//! way now (spade in 2-D, lane rows straight from the points, uploading the rows) side by side.
//! Stages are timed one after the other on the same points; nothing here touches a GPU, so the
//! upload is given as the bytes each way must move.

use anyhow::Result;
use std::time::Instant;

/// Wall and CPU seconds (all threads of the process, user and system) since it started: on a
/// shared machine the CPU seconds are what a stage costs, the wall seconds what it took.
struct Clock(Instant, f64);

impl Clock {
    fn start() -> Self {
        Clock(Instant::now(), cpu_seconds())
    }
    /// `[wall, cpu]` seconds.
    fn read(&self) -> [f64; 2] {
        [self.0.elapsed().as_secs_f64(), cpu_seconds() - self.1]
    }
}

/// The process's CPU seconds so far (`getrusage`).
fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the struct it is given; RUSAGE_SELF is always valid.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

use super::{points::Points, scale, weights};

/// One size's preparation: `[wall, CPU]` seconds per stage, and bytes to upload.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Profile {
    /// Points.
    pub n: usize,
    /// Sparse cutoff R, if any.
    pub cutoff: Option<f64>,
    /// Rayon threads.
    pub threads: usize,
    /// Delaunay edges by Qhull (before).
    pub qhull_s: [f64; 2],
    /// Delaunay edges by spade (now; `None`: not unique, Qhull decides).
    pub spade_s: Option<[f64; 2]>,
    /// Whether both gave the same edges.
    pub same_edges: bool,
    /// The scale from the edges (the mean of neighbour means).
    pub scale_from_edges_s: [f64; 2],
    /// Dense: the `n × n` weights and norms (before). Sparse: the CSR rows.
    pub weights_s: [f64; 2],
    /// Dense: lane rows from the `n × n` weights (before, the CPU's; the GPU built them on the
    /// device from the uploaded `J`).
    pub lane_rows_from_j_s: Option<[f64; 2]>,
    /// Dense: lane rows straight from the points (now, CPU and GPU).
    pub lane_rows_from_points_s: Option<[f64; 2]>,
    /// Bytes uploaded before: `J` and norms (dense), the CSR arrays (sparse).
    pub upload_bytes_before: u64,
    /// Bytes uploaded now: the lane rows (u32 columns) and norms (dense), the CSR arrays (sparse).
    pub upload_bytes_now: u64,
    /// Nonzero weights (dense) or coupled entries (sparse).
    pub entries: usize,
    /// Before, all host stages: Qhull, scale, weights (dense: `J`).
    pub before_s: [f64; 2],
    /// Now, all host stages: spade (or Qhull), scale, lane rows from the points / CSR rows.
    pub now_s: [f64; 2],
}

/// Times the preparation of `p` (f32), dense or with `cutoff`.
pub fn profile(p: &Points, cutoff: Option<f64>) -> Result<Profile> {
    let add = |a: [f64; 2], b: [f64; 2]| [a[0] + b[0], a[1] + b[1]];
    let t = Clock::start();
    let old = scale::qhull_edges(p)?;
    let qhull_s = t.read();
    let t = Clock::start();
    let new = if p.dim == 2 { super::planar::edges(p) } else { None };
    let spade_s = new.as_ref().map(|_| t.read());
    let same_edges = new.as_ref().is_none_or(|e| *e == old);
    let t = Clock::start();
    let a = scale::scale(p)?;
    // `scale` triangulates again: its own time less the triangulation's.
    let triangulation_now = spade_s.unwrap_or(qhull_s);
    let whole = t.read();
    let scale_from_edges_s = [0, 1].map(|k| (whole[k] - triangulation_now[k]).max(0.0));
    let f32s = |k: usize| k as u64 * 4;
    if let Some(r) = cutoff {
        let t = Clock::start();
        let w = weights::sparse::<f32>(p, a, r)?;
        let weights_s = t.read();
        let bytes = f32s(w.cols.len()) * 2 + (3 * p.n as u64 + 2) * 8 + f32s(p.n);
        return Ok(Profile {
            n: p.n,
            cutoff,
            threads: rayon::current_num_threads(),
            qhull_s,
            spade_s,
            same_edges,
            scale_from_edges_s,
            weights_s,
            lane_rows_from_j_s: None,
            lane_rows_from_points_s: None,
            upload_bytes_before: bytes,
            upload_bytes_now: bytes,
            entries: w.cols.len(),
            before_s: add(add(qhull_s, scale_from_edges_s), weights_s),
            now_s: add(add(triangulation_now, scale_from_edges_s), weights_s),
        });
    }
    let t = Clock::start();
    let dense = weights::dense::<f32>(p, a)?;
    let weights_s = t.read();
    let t = Clock::start();
    let from_j = dense.lane_rows();
    let lane_rows_from_j_s = t.read();
    let entries = dense.j.iter().filter(|&&w| w != 0.0).count();
    drop(dense);
    let t = Clock::start();
    let rows = weights::lane_rows::<f32, u32>(p, a, None)?;
    let lane_rows_from_points_s = t.read();
    anyhow::ensure!(
        rows.ptr == from_j.ptr && rows.cols == from_j.cols && rows.vals == from_j.vals && rows.norm == from_j.norm,
        "lane rows from the points differ from those of J"
    );
    Ok(Profile {
        n: p.n,
        cutoff,
        threads: rayon::current_num_threads(),
        qhull_s,
        spade_s,
        same_edges,
        scale_from_edges_s,
        weights_s,
        lane_rows_from_j_s: Some(lane_rows_from_j_s),
        lane_rows_from_points_s: Some(lane_rows_from_points_s),
        upload_bytes_before: f32s(p.n * p.n + p.n),
        upload_bytes_now: f32s(rows.cols.len()) * 2 + (p.n as u64 + 1) * 8 + f32s(p.n),
        entries,
        before_s: add(add(qhull_s, scale_from_edges_s), weights_s),
        now_s: add(add(triangulation_now, scale_from_edges_s), lane_rows_from_points_s),
    })
}
