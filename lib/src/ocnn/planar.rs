//! The 2-D Delaunay triangulation of the scale, by `spade` (pure Rust, bulk loading in
//! `O(N log N)`, exact orientation and in-circle predicates through the `robust` crate): about
//! twenty times Qhull's speed at 16 000 points (`results/ocnn/prepare-*.json`).
//!
//! A Delaunay triangulation is unique exactly when no four points of it lie on one circle with an
//! empty interior; then the exact triangulation is spade's. Qhull's arithmetic is floating point:
//! where four points are *nearly* co-circular it merges the two triangles and splits the merged
//! facet its own way, and on a grid-like set (FCPS Lsun, coordinates in steps of 0.01) that
//! changes dozens of edges, so `a` too. To keep every scale of before bit for bit, [`edges`]
//! answers `None` — Qhull decides — as soon as one inner edge of spade's triangulation has its two
//! opposite points within a relative [`NEAR_COCIRCULAR`] of one circle (the in-circle determinant
//! against the sum of its terms' magnitudes, the roundoff it could carry), or three points in a row
//! on the convex hull are nearly collinear (Qhull may close them with a sliver triangle). Random
//! data never comes that close (probability about `3N · 10⁻⁹`).
//!
//! From [`STRIPS_FROM`] points on, the set is first cut into strips triangulated on several cores
//! (the `strips` module), whose union is proved to be the Delaunay triangulation with exact
//! predicates, or handed back to the one triangulation here: the edges are the same either way.

use rayon::prelude::*;
use robust::{incircle, orient2d, Coord};
use spade::handles::FixedVertexHandle;
use spade::{DelaunayTriangulation, HasPosition, Point2, Triangulation};

use super::points::Points;

/// The points as the `qhull` crate hands them to Qhull (`Qh::new_delaunay`), the same IEEE
/// operations: each axis centred on its mean (summed in row order) and divided by its half-range.
/// The crate triangulates these, not the points themselves, so the scale's triangulation has
/// always been the Delaunay triangulation of the per-axis normalised points; spade triangulates
/// the same ones so that the edges stay those of before (the manual's OCNN chapter discusses this).
fn normalised(p: &Points) -> Vec<[f64; 2]> {
    let mut centre = [0f64; 2];
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for i in 0..p.n {
        for d in 0..2 {
            let x = p.point(i)[d];
            centre[d] += x;
            lo[d] = if x < lo[d] { x } else { lo[d] };
            hi[d] = if x > hi[d] { x } else { hi[d] };
        }
    }
    centre.iter_mut().for_each(|c| *c /= p.n as f64);
    let width = [0, 1].map(|d| (hi[d] - lo[d]) / 2.0);
    (0..p.n).map(|i| [0, 1].map(|d| (p.point(i)[d] - centre[d]) / width[d])).collect()
}

/// The relative in-circle determinant under which four points count as co-circular for Qhull's
/// arithmetic (its merges act at about 10⁻¹³ of the coordinates; this is 10⁴ times wider).
pub const NEAR_COCIRCULAR: f64 = 1e-9;

/// A point with its index, so that edges name it: its row in the input here, its place among
/// the x-sorted unique points in the strips.
pub(super) struct Row {
    pub(super) at: Point2<f64>,
    pub(super) i: u32,
}

impl HasPosition for Row {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        self.at
    }
}

/// The Delaunay edges of 2-D points (pairs `i < j`, deduplicated, sorted), or `None` when spade
/// cannot decide them as Qhull would: a coordinate outside spade's range (`|x|` below 2⁻¹⁴² but
/// not 0, or above 2²⁰¹), or a triangulation that is not unique (four co-circular points).
///
/// "Not unique" includes nearly co-circular points and nearly collinear hull points
/// ([`NEAR_COCIRCULAR`]).
///
/// Duplicate points: the first row of each position is the vertex, the others have no edge (as
/// with Qhull, which keeps them as coplanar points). All points on one line: `None`, and Qhull's
/// error says there is no triangulation (as before).
///
/// ```
/// use neurobits::ocnn::{planar, points::parse};
/// let square_and_centre = parse("0 0\n2 0\n0 2\n2 2\n1 1\n", "mem").unwrap();
/// assert_eq!(planar::edges(&square_and_centre).unwrap().len(), 8);
/// // Four corners alone lie on one circle: two triangulations, so Qhull decides.
/// assert!(planar::edges(&parse("0 0\n2 0\n0 2\n2 2\n", "mem").unwrap()).is_none());
/// ```
///
/// Sets of [`STRIPS_FROM`] points or more are cut into strips triangulated on several cores
/// (the `strips` module: the same edges, proved, else the whole triangulation decides).
pub fn edges(p: &Points) -> Option<Vec<(u32, u32)>> {
    let strips = rayon::current_num_threads().min(p.n / STRIP_POINTS);
    edges_with_strips(p, if p.n >= STRIPS_FROM { strips } else { 1 })
}

/// [`edges`] with `strips` strips (fewer than 2: one triangulation of the whole set).
pub fn edges_with_strips(p: &Points, strips: usize) -> Option<Vec<(u32, u32)>> {
    assert_eq!(p.dim, 2, "planar::edges is for 2-D points");
    let at = normalised(p);
    let rows: Vec<Row> = (0..p.n).map(|i| Row { at: Point2::new(at[i][0], at[i][1]), i: i as u32 }).collect();
    if rows.iter().any(|r| spade::validate_vertex(r).is_err()) {
        return None;
    }
    if strips >= 2 {
        if let Some(e) = edges_in_strips(&at, strips) {
            return Some(e);
        }
    }
    serial(&at, rows)
}

/// Sets of at least this many points are triangulated in strips on several cores
/// (the `strips` module); smaller ones take longer to cut than to triangulate whole.
pub const STRIPS_FROM: usize = 1 << 16;
/// Points per strip at least.
const STRIP_POINTS: usize = 1 << 14;

/// [`edges`] of `p` cut into `strips` strips when the strips prove the triangulation, else `None`
/// (and [`edges`] triangulates the whole set): for tests of how often they do.
pub fn edges_in_strips_of(p: &Points, strips: usize) -> Option<Vec<(u32, u32)>> {
    edges_in_strips(&normalised(p), strips)
}

fn edges_in_strips(at: &[[f64; 2]], strips: usize) -> Option<Vec<(u32, u32)>> {
    // The unique positions in x order, each named for its first row (as the whole path names
    // them); `+ 0.0` makes −0 and 0, which spade takes for one position, one key.
    let mut order: Vec<([f64; 2], u32)> =
        at.par_iter().enumerate().map(|(i, a)| (a.map(|x| x + 0.0), i as u32)).collect();
    order.par_sort_unstable_by(|(a, i), (b, j)| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])).then(i.cmp(j)));
    order.dedup_by(|later, first| later.0 == first.0);
    let (pos, order): (Vec<[f64; 2]>, Vec<u32>) = order.into_iter().unzip();
    match super::strips::edges(&pos, &order, strips) {
        super::strips::Strips::Edges(e) => Some(e),
        super::strips::Strips::Serial => None,
    }
}

/// [`edges`] by one spade triangulation of all `rows` (`at`: their normalised positions).
fn serial(at: &[[f64; 2]], rows: Vec<Row>) -> Option<Vec<(u32, u32)>> {
    let p_n = at.len();
    let t = DelaunayTriangulation::<Row>::bulk_load(rows).ok()?;
    let coord = |v: &Row| Coord { x: v.at.x, y: v.at.y };
    if t.num_inner_faces() == 0 {
        return None; // all points on one line: no triangulation, Qhull says why (as before)
    }
    {
        // Three nearly collinear points in a row on the hull: Qhull may close them with a sliver
        // triangle, whose long side is an edge the exact triangulation lacks (FCPS Target's
        // corner triples).
        for e in t.convex_hull() {
            let [a, b, c] = [e.from(), e.to(), e.next().to()].map(|v| coord(v.data()));
            let size = ((a.x - c.x) * (b.y - c.y)).abs() + ((a.y - c.y) * (b.x - c.x)).abs();
            if orient2d(a, b, c).abs() <= NEAR_COCIRCULAR * size {
                return None;
            }
        }
    }
    // Duplicates: spade keeps one vertex per position, not necessarily the first row's (its bulk
    // load inserts in an order of its own); the vertex is named for the first row, as Qhull does.
    let first = (t.num_vertices() < p_n).then(|| first_rows(at));
    let row = |v: &Row| first.as_ref().map_or(v.i, |f| f[v.i as usize]);
    // Every inner edge checked and every edge named by its rows, from each vertex's out-edges to
    // vertices of higher handle (each edge once), in parallel blocks of vertices.
    const BLOCK: usize = 4096;
    let blocks: Option<Vec<Vec<(u32, u32)>>> = (0..t.num_vertices().div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut out = Vec::new();
            for k in b * BLOCK..t.num_vertices().min(b * BLOCK + BLOCK) {
                for d in t.vertex(FixedVertexHandle::from_index(k)).out_edges() {
                    if d.to().fix().index() < k {
                        continue;
                    }
                    if let (Some(c), Some(o)) = (d.opposite_vertex(), d.rev().opposite_vertex()) {
                        // `o` on (or nearly on) the circle through the edge and `c`: the other
                        // diagonal is Delaunay too, or as good as it for Qhull's floating point.
                        let [a, b] = d.vertices();
                        let [a, b, c, o] = [a.data(), b.data(), c.data(), o.data()].map(coord);
                        if incircle(a, b, c, o).abs() <= NEAR_COCIRCULAR * magnitude(a, b, c, o) {
                            return None;
                        }
                    }
                    let [a, b] = d.vertices().map(|v| row(v.data()));
                    out.push((a.min(b), a.max(b)));
                }
            }
            Some(out)
        })
        .collect();
    let mut out = blocks?.concat();
    out.par_sort_unstable();
    Some(out)
}

/// The first row of each row's position (of the normalised points, which spade compares), for
/// the rows that spade merged as duplicates.
fn first_rows(at: &[[f64; 2]]) -> Vec<u32> {
    // `+ 0.0` makes −0 and 0, which compare equal, one key.
    let key = |i: u32| at[i as usize].map(|x| (x + 0.0).to_bits());
    let mut order: Vec<u32> = (0..at.len() as u32).collect();
    order.par_sort_unstable_by_key(|&i| (key(i), i));
    let mut first = vec![0u32; at.len()];
    let mut head = 0;
    for (s, &i) in order.iter().enumerate() {
        if s == 0 || key(i) != key(order[s - 1]) {
            head = i;
        }
        first[i as usize] = head;
    }
    first
}

/// The sum of the magnitudes of the in-circle determinant's terms (what its roundoff scales with).
pub(super) fn magnitude(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>, d: Coord<f64>) -> f64 {
    let (adx, ady, bdx, bdy, cdx, cdy) = (a.x - d.x, a.y - d.y, b.x - d.x, b.y - d.y, c.x - d.x, c.y - d.y);
    let lift = |x: f64, y: f64| x * x + y * y;
    lift(adx, ady) * ((bdx * cdy).abs() + (cdx * bdy).abs())
        + lift(bdx, bdy) * ((cdx * ady).abs() + (adx * cdy).abs())
        + lift(cdx, cdy) * ((adx * bdy).abs() + (bdx * ady).abs())
}
