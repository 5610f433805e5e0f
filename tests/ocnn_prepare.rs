//! The OCNN's preparation: spade's 2-D Delaunay edges are Qhull's on the FCPS sets and the test
//! sets (so the scale `a` keeps its bits), degenerate inputs, and the lane rows built from the
//! points are those of the dense weights, entry for entry.

use neurobits::ocnn::{bench::random_points, planar, points, scale, weights};
use neurobits_core::ocnn::{LaneColumn, Quot16, Quot8, Real};
use std::path::Path;

/// An FCPS set of `data/fcps` (`make setup`); a missing set fails the test.
fn fcps(name: &str, skip: usize) -> points::Points {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps").join(name);
    points::load(&path).unwrap_or_else(|e| panic!("{e}: `make setup` fetches the FCPS sets")).skip(skip)
}

#[test]
fn spade_gives_qhulls_edges_on_the_fcps_and_test_sets() {
    let mut sets = vec![
        ("Lsun", fcps("Lsun.data", 3)),
        ("Target", fcps("Target.data", 0)),
        ("TwoDiamonds", fcps("TwoDiamonds.data", 0)),
        ("WingNut", fcps("WingNut.data", 0)),
        ("EngyTime", fcps("EngyTime.data", 0)),
    ];
    for (n, seed) in [(33, 9), (333, 6), (1000, 7), (4000, 1), (16_000, 1)] {
        sets.push(("random", random_points(n, 2, seed)));
    }
    let mut to_qhull = Vec::new();
    for (name, p) in &sets {
        let qhull = scale::qhull_edges(p).unwrap();
        // The scale's triangulation (spade where unique, else Qhull) has Qhull's edges.
        let now = scale::delaunay_edges(p).unwrap();
        let only =
            |a: &[(u32, u32)], b: &[(u32, u32)]| a.iter().filter(|e| !b.contains(e)).copied().collect::<Vec<_>>();
        assert!(
            now == qhull,
            "{name} n={}: only now {:?}, only Qhull {:?}",
            p.n,
            only(&now, &qhull),
            only(&qhull, &now)
        );
        if let Some(e) = planar::edges(p) {
            assert_eq!(e, qhull, "{name} n={}: spade", p.n);
        } else {
            to_qhull.push(*name);
        }
    }
    // Target (collinear corner triples on its hull) and the grid-like TwoDiamonds and WingNut
    // are left to Qhull; the random sets all go through spade.
    assert_eq!(to_qhull, ["Target", "TwoDiamonds", "WingNut"], "the sets whose edges spade leaves to Qhull");
}

#[test]
fn degenerate_planar_inputs() {
    let parse = |t: &str| points::parse(t, "mem").unwrap();
    // Duplicates: the first row is the vertex, the copies have no edge, and `a` is Qhull's.
    let mut p = random_points(500, 2, 4);
    p.coords.extend_from_within(..20);
    p.n += 10;
    let e = planar::edges(&p).unwrap();
    assert!(e.iter().all(|&(i, j)| i < 500 && j < 500), "copies have no edge");
    let via_qhull = |p: &points::Points| {
        // The scale over Qhull's edges, as `scale` computes it.
        let (mut sum, mut count) = (vec![0f64; p.n], vec![0u32; p.n]);
        for (i, j) in scale::qhull_edges(p).unwrap() {
            let d = scale::distance(p.point(i as usize), p.point(j as usize));
            for k in [i as usize, j as usize] {
                sum[k] += d;
                count[k] += 1;
            }
        }
        let (t, w) = sum
            .iter()
            .zip(&count)
            .filter(|(_, &c)| c > 0)
            .fold((0f64, 0usize), |(t, w), (s, &c)| (t + s / c as f64, w + 1));
        t / w as f64
    };
    assert_eq!(scale::scale(&p).unwrap().to_bits(), via_qhull(&p).to_bits(), "a with duplicates");
    // All points on one line: no triangulation, an error as before (`--scale` pins `a`).
    let line = parse("0 0\n3 3\n1 1\n2 2\n");
    assert!(planar::edges(&line).is_none());
    assert!(scale::scale(&line).is_err());
    // All points equal, too few points: errors, as before.
    assert!(scale::scale(&parse("1 1\n1 1\n1 1\n1 1\n")).is_err());
    assert!(scale::scale(&parse("0 0\n1 1\n")).is_err());
    // Co-circular (a square): not unique, so Qhull decides.
    assert!(planar::edges(&parse("0 0\n1 0\n0 1\n1 1\n")).is_none());
}

/// Lane rows from the points equal the lane rows of the dense weights entry for entry, norms
/// included: f32 and f64, 1-D to 4-D (the grid and the brute-force search), with and without a
/// cutoff, in all three column forms.
#[test]
fn lane_rows_from_the_points_equal_those_of_the_dense_weights() {
    fn same<T: Real + Send + Sync, C: LaneColumn + PartialEq + std::fmt::Debug>(p: &points::Points, cut: Option<f64>) {
        let a = scale::knn_scale(p, 10).unwrap();
        let dense = weights::dense_cut::<T>(p, a, cut).unwrap();
        let want = dense.lane_rows_as::<C>();
        let got = weights::lane_rows::<T, C>(p, a, cut).unwrap();
        let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
        assert_eq!((got.ptr, got.cols), (want.ptr, want.cols), "dim {} cut {cut:?}", p.dim);
        assert_eq!(bits(&got.vals), bits(&want.vals));
        assert_eq!(bits(&got.norm), bits(&dense.norm));
    }
    for dim in 1..=4 {
        // Far pairs underflow, near ones do not.
        let p = random_points(400, dim, 20 + dim as u64);
        for cut in [None, Some(2.5)] {
            same::<f32, u32>(&p, cut);
            same::<f32, Quot8>(&p, cut);
            same::<f64, Quot16>(&p, cut);
            same::<f64, u32>(&p, cut);
        }
    }
}

#[test]
fn a_point_with_no_coupling_left_is_refused_as_before() {
    let p = points::parse("0 0\n0 1\n1 0\n1000 1000\n", "mem").unwrap();
    let err = weights::lane_rows::<f32, u32>(&p, 1.0, None).err().unwrap().to_string();
    assert!(err.contains("point 3 has no coupling left"), "{err}");
    let dense = weights::dense::<f32>(&p, 1.0).err().unwrap().to_string();
    assert_eq!(err, dense);
}
