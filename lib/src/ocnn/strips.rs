//! The scale's 2-D Delaunay triangulation on several cores, for large sets: spade's bulk load is
//! single-threaded (0.9 s of the 3 s whole OCNN run at 10⁶ points on an H200 host).
//!
//! The unique points, in x order, are cut into vertical strips, each triangulated by spade on its
//! own core. A strip's triangle whose circumcircle stays strictly between its neighbouring strips'
//! nearest x is a triangle of the whole set's triangulation (no other point can lie in that
//! circle); the others are *uncertain*. Every global triangle is either such a certain one or
//! has all three vertices among the uncertain triangles' vertices and the strips' hull vertices
//! (a vertex whose star is all certain keeps that star globally), so the triangles of the
//! triangulation of those vertices whose circumcircle holds none of *all* the points complete
//! the set. Floating point only chooses which triangles are certain; what is kept is then proved
//! with exact predicates: the union must be a triangulation of the convex hull (counter-clockwise
//! triangles, each edge in one or two of opposite sense, one convex boundary cycle winding once,
//! every vertex used) whose every inner edge is locally Delaunay — which makes it *the* Delaunay
//! triangulation. Anything else (and any quadruple or hull triple near [`NEAR_COCIRCULAR`],
//! whatever order of its points) hands the set back to the single spade triangulation, which then
//! decides exactly as before; so the edges are always the serial path's.

use rayon::prelude::*;
use robust::{incircle, orient2d, Coord};
use spade::{DelaunayTriangulation, Point2, Triangulation};

// A strip's vertex is named by its index in the x-sorted unique points.
use super::planar::{magnitude, Row, NEAR_COCIRCULAR};

/// What the strips decided.
pub(super) enum Strips {
    /// The Delaunay edges (rows, `i < j`, deduplicated, sorted).
    Edges(Vec<(u32, u32)>),
    /// Not proved here (a near-degenerate spot or an unexpected structure): the serial path decides.
    Serial,
}

fn coord(p: [f64; 2]) -> Coord<f64> {
    Coord { x: p[0], y: p[1] }
}

/// The circumcircle of `a, b, c`: centre and radius (floating point, used only to choose).
fn circle(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> ([f64; 2], f64) {
    let (bx, by, cx, cy) = (b[0] - a[0], b[1] - a[1], c[0] - a[0], c[1] - a[1]);
    let d = 2.0 * (bx * cy - by * cx);
    let (b2, c2) = (bx * bx + by * by, cx * cx + cy * cy);
    let (ux, uy) = ((cy * b2 - by * c2) / d, (bx * c2 - cx * b2) / d);
    ([a[0] + ux, a[1] + uy], (ux * ux + uy * uy).sqrt())
}

/// A slack on the floating-point circles: a triangle this near its strip's edge counts as
/// uncertain (it only costs a triangle more in the second pass).
fn slack(r: f64) -> f64 {
    1e-6 * r + 1e-12
}

/// A triangle, counter-clockwise, its smallest vertex first (one key per triangle).
fn canonical(pos: &[[f64; 2]], t: [u32; 3]) -> Option<[u32; 3]> {
    let o = orient2d(coord(pos[t[0] as usize]), coord(pos[t[1] as usize]), coord(pos[t[2] as usize]));
    let t = if o > 0.0 {
        t
    } else if o < 0.0 {
        [t[0], t[2], t[1]]
    } else {
        return None;
    };
    let m = (0..3).min_by_key(|&k| t[k])?;
    Some([t[m], t[(m + 1) % 3], t[(m + 2) % 3]])
}

/// The edges of the unique points `at` (already validated for spade; `rows[v]`: the first input
/// row at unique point `v`'s position) in `strips` strips.
pub(super) fn edges(pos: &[[f64; 2]], rows: &[u32], strips: usize) -> Strips {
    let n = pos.len();
    // Strip bounds, never between two points of the same x.
    let mut bounds = vec![0usize];
    for s in 1..strips {
        let mut b = (n * s / strips).max(bounds[bounds.len() - 1] + 1);
        while b < n && pos[b][0] == pos[b - 1][0] {
            b += 1;
        }
        if b + 3 > n {
            break;
        }
        bounds.push(b);
    }
    bounds.push(n);
    if bounds.len() < 3 || bounds.windows(2).any(|w| w[1] - w[0] < 3) {
        return Strips::Serial;
    }
    let parts: Vec<Option<Strip>> = (0..bounds.len() - 1).into_par_iter().map(|s| strip(pos, &bounds, s)).collect();
    let Some(parts) = parts.into_iter().collect::<Option<Vec<_>>>() else { return Strips::Serial };
    let (mut tris, mut unsure): (Vec<[u32; 3]>, Vec<u32>) = (Vec::new(), Vec::new());
    for (t, u) in parts {
        tris.extend(t);
        unsure.extend(u);
    }
    unsure.par_sort_unstable();
    unsure.dedup();
    if unsure.len() > n / 2 {
        return Strips::Serial; // the strips decided too little to be worth it
    }
    let Some(more) = second_pass(pos, &unsure) else { return Strips::Serial };
    // The second pass finds again the certain triangles whose three vertices are uncertain.
    let mut in_unsure = vec![false; n];
    unsure.iter().for_each(|&v| in_unsure[v as usize] = true);
    let again: std::collections::HashSet<[u32; 3]> =
        tris.iter().filter(|t| t.iter().all(|&v| in_unsure[v as usize])).copied().collect();
    tris.extend(more.into_iter().filter(|t| !again.contains(t)));
    match proved_edges(pos, &tris) {
        Some(e) => {
            let mut out: Vec<(u32, u32)> = e
                .into_par_iter()
                .map(|(a, b)| {
                    let (a, b) = (rows[a as usize], rows[b as usize]);
                    (a.min(b), a.max(b))
                })
                .collect();
            out.par_sort_unstable();
            Strips::Edges(out)
        }
        None => Strips::Serial,
    }
}

/// A strip's certain triangles and uncertain vertices.
type Strip = (Vec<[u32; 3]>, Vec<u32>);

/// Strip `s`'s certain triangles and its uncertain vertices (those of its other triangles and of
/// its hull); `None` when spade refuses it.
fn strip(pos: &[[f64; 2]], bounds: &[usize], s: usize) -> Option<Strip> {
    let (b0, b1) = (bounds[s], bounds[s + 1]);
    let lo = if s > 0 { pos[b0 - 1][0] } else { f64::NEG_INFINITY };
    let hi = if b1 < pos.len() { pos[b1][0] } else { f64::INFINITY };
    let verts = (b0..b1).map(|v| Row { at: Point2::new(pos[v][0], pos[v][1]), i: v as u32 }).collect();
    let t = DelaunayTriangulation::<Row>::bulk_load(verts).ok()?;
    let (mut certain, mut unsure) = (Vec::new(), Vec::new());
    if t.num_inner_faces() == 0 {
        return Some((certain, (b0 as u32..b1 as u32).collect())); // a strip on one line
    }
    for f in t.inner_faces() {
        let v = f.vertices().map(|h| h.data().i);
        let (c, r) = circle(pos[v[0] as usize], pos[v[1] as usize], pos[v[2] as usize]);
        let m = slack(r);
        if c[0] - r - m > lo && c[0] + r + m < hi && r.is_finite() {
            certain.push(canonical(pos, v)?);
        } else {
            unsure.extend(v);
        }
    }
    unsure.extend(t.convex_hull().map(|e| e.from().data().i));
    Some((certain, unsure))
}

/// The triangles of the triangulation of the `unsure` points whose circumcircle holds none of
/// the points `pos` (found through a uniform grid).
fn second_pass(pos: &[[f64; 2]], unsure: &[u32]) -> Option<Vec<[u32; 3]>> {
    let verts = unsure.iter().map(|&v| Row { at: Point2::new(pos[v as usize][0], pos[v as usize][1]), i: v }).collect();
    let t = DelaunayTriangulation::<Row>::bulk_load(verts).ok()?;
    let grid = Grid::new(pos);
    let faces: Vec<[u32; 3]> = t.inner_faces().map(|f| f.vertices().map(|h| h.data().i)).collect();
    // A face spade made but `orient2d` calls flat fails the whole pass (it cannot happen).
    let kept: Option<Vec<Option<[u32; 3]>>> =
        faces.into_par_iter().map(|v| canonical(pos, v).map(|t| grid.empty(pos, t).then_some(t))).collect();
    Some(kept?.into_iter().flatten().collect())
}

/// The points in square cells, for the emptiness tests.
struct Grid {
    lo: [f64; 2],
    cell: f64,
    side: usize,
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Grid {
    fn new(pos: &[[f64; 2]]) -> Grid {
        let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
        for p in pos {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        let side = ((pos.len() as f64 / 2.0).sqrt() as usize).clamp(1, 1 << 12);
        let cell = ((hi[0] - lo[0]).max(hi[1] - lo[1]) / side as f64).max(f64::MIN_POSITIVE);
        let mut g = Grid { lo, cell, side, start: vec![0; side * side + 1], items: vec![0; pos.len()] };
        let at: Vec<usize> = pos.par_iter().map(|p| g.index(g.cell_of(p[0], 0), g.cell_of(p[1], 1))).collect();
        for &c in &at {
            g.start[c + 1] += 1;
        }
        for c in 0..side * side {
            g.start[c + 1] += g.start[c];
        }
        let mut fill = g.start.clone();
        for (v, &c) in at.iter().enumerate() {
            g.items[fill[c] as usize] = v as u32;
            fill[c] += 1;
        }
        g
    }

    fn cell_of(&self, x: f64, d: usize) -> usize {
        (((x - self.lo[d]) / self.cell).max(0.0) as usize).min(self.side - 1)
    }

    fn index(&self, cx: usize, cy: usize) -> usize {
        cy * self.side + cx
    }

    /// No point strictly inside or on the circle of the counter-clockwise triangle `t` but its own.
    fn empty(&self, pos: &[[f64; 2]], t: [u32; 3]) -> bool {
        let [a, b, c] = t.map(|v| coord(pos[v as usize]));
        let (centre, r) = circle(pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        if !r.is_finite() {
            return false;
        }
        let r = r + slack(r);
        let inside = |cx: usize, cy: usize| {
            let c0 = self.index(cx, cy);
            self.items[self.start[c0] as usize..self.start[c0 + 1] as usize]
                .iter()
                .any(|&q| !t.contains(&q) && incircle(a, b, c, coord(pos[q as usize])) >= 0.0)
        };
        // The centre's cell first: a wrong, wide circle is refuted there at once.
        let (mx, my) = (self.cell_of(centre[0], 0), self.cell_of(centre[1], 1));
        if inside(mx, my) {
            return false;
        }
        let (x0, x1) = (self.cell_of(centre[0] - r, 0), self.cell_of(centre[0] + r, 0));
        let (y0, y1) = (self.cell_of(centre[1] - r, 1), self.cell_of(centre[1] + r, 1));
        !(y0..=y1).any(|cy| (x0..=x1).any(|cx| (cx, cy) != (mx, my) && inside(cx, cy)))
    }
}

/// The edges (unique-point indices) of `tris` when they form the Delaunay triangulation of all
/// `pos` with no near-degenerate spot; else `None`.
fn proved_edges(pos: &[[f64; 2]], tris: &[[u32; 3]]) -> Option<Vec<(u32, u32)>> {
    let p = |v: u32| coord(pos[v as usize]);
    let n = pos.len();
    // Every directed edge `a → b` with its triangle's third vertex, filed under its smaller end
    // by a counting sort (a global sort of 3T entries took most of the time).
    let mut start = vec![0u32; n + 1];
    let mut used = vec![false; n];
    for t in tris {
        for k in 0..3 {
            start[t[k].min(t[(k + 1) % 3]) as usize + 1] += 1;
            used[t[k] as usize] = true;
        }
    }
    if used.contains(&false) {
        return None;
    }
    for v in 0..n {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut half = vec![(0u32, 0u32, 0u32); 3 * tris.len()];
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let at = &mut fill[a.min(b) as usize];
            half[*at as usize] = (a, b, t[(k + 2) % 3]);
            *at += 1;
        }
    }
    // Per vertex, its edges to higher vertices: one directed edge (hull) or two opposite ones
    // (inner, checked), in parallel blocks of vertices.
    const BLOCK: usize = 4096;
    type Found = (Vec<(u32, u32)>, Vec<(u32, u32)>);
    let blocks: Option<Vec<Found>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|blk| {
            let (mut hull, mut edges) = (Vec::new(), Vec::new());
            for v in blk * BLOCK..n.min(blk * BLOCK + BLOCK) {
                let mut mine = half[start[v] as usize..start[v + 1] as usize].to_vec();
                mine.sort_unstable_by_key(|&(a, b, _)| (a.max(b), a > b));
                let mut i = 0;
                while i < mine.len() {
                    let (a, b, c) = mine[i];
                    edges.push((v as u32, a.max(b)));
                    match mine.get(i + 1) {
                        Some(&(b2, a2, o)) if (a2, b2) == (a, b) => {
                            let (pa, pb, pc, po) = (p(a), p(b), p(c), p(o));
                            let det = incircle(pa, pb, pc, po);
                            let near = NEAR_COCIRCULAR * magnitude(pa, pb, pc, po).max(magnitude(pb, pa, po, pc));
                            if !(det < 0.0 && det.abs() > near) {
                                return None; // not Delaunay, or too near co-circular to decide here
                            }
                            i += 2;
                        }
                        Some(&(x, y, _)) if x.max(y) == a.max(b) => return None, // 3 triangles or same sense
                        _ => {
                            hull.push((a, b)); // a hull edge, directed with the inside on its left
                            i += 1;
                        }
                    }
                }
            }
            Some((hull, edges))
        })
        .collect();
    let (hulls, edges): (Vec<_>, Vec<_>) = blocks?.into_iter().unzip();
    let (hull, edges): (Vec<_>, Vec<_>) = (hulls.concat(), edges.concat());
    // The hull: one cycle through every hull edge, convex, winding once.
    let mut next = std::collections::HashMap::with_capacity(hull.len());
    for &(a, b) in &hull {
        if next.insert(a, b).is_some() {
            return None;
        }
    }
    let first = hull.first()?.0;
    let (mut at, mut steps, mut turn) = (first, 0usize, 0f64);
    loop {
        let b = *next.get(&at)?;
        let c = *next.get(&b)?;
        let (pa, pb, pc) = (p(at), p(b), p(c));
        let size =
            |x: Coord<f64>, z: Coord<f64>| ((x.x - z.x) * (pb.y - z.y)).abs() + ((x.y - z.y) * (pb.x - z.x)).abs();
        let o = orient2d(pa, pb, pc);
        if o <= 0.0 || o <= NEAR_COCIRCULAR * size(pa, pc).max(size(pc, pa)) {
            return None;
        }
        let (u, w) = ([pb.x - pa.x, pb.y - pa.y], [pc.x - pb.x, pc.y - pb.y]);
        turn += (u[0] * w[1] - u[1] * w[0]).atan2(u[0] * w[0] + u[1] * w[1]);
        steps += 1;
        at = b;
        if at == first || steps > hull.len() {
            break;
        }
    }
    let once = (turn - std::f64::consts::TAU).abs() < 1.0;
    let euler = tris.len() + hull.len() + 2 == 2 * pos.len();
    (at == first && steps == hull.len() && once && euler).then_some(edges)
}
