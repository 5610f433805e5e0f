//! The scale's 2-D triangulation in strips on several cores gives the edges of the whole
//! triangulation (or defers to it) on every kind of set: uniform, clustered, duplicated rows,
//! points sharing an x, grids (co-circular), FCPS; and on general data it proves them itself.

use neurobits::ocnn::{bench::random_points, planar, points::Points};
use neurobits_core::prng::{draw, stream_key};
use std::path::Path;

/// A uniform draw in [0, 1) for `(seed, i)`.
fn unit(seed: u64, i: u64) -> f64 {
    (draw(stream_key(seed, 41), i) >> 11) as f64 / (1u64 << 53) as f64
}

/// `n` points in `blobs` Gaussian-ish blobs (sums of uniforms) of different spreads.
fn blobs(n: usize, blobs: usize, seed: u64) -> Points {
    let mut coords = Vec::with_capacity(2 * n);
    for i in 0..n as u64 {
        let b = i % blobs as u64;
        let spread = 0.5 + b as f64;
        for d in 0..2u64 {
            let centre = 20.0 * unit(seed ^ 0x5eed, 2 * b + d);
            let s: f64 = (0..4).map(|k| unit(seed, 8 * i + 4 * d + k)).sum::<f64>() - 2.0;
            coords.push(centre + spread * s);
        }
    }
    Points { n, dim: 2, coords }
}

/// The strips' edges equal the whole triangulation's, whatever the strip count.
fn same_as_whole(p: &Points, what: &str) -> Option<Vec<(u32, u32)>> {
    let whole = planar::edges_with_strips(p, 1);
    for strips in [2, 3, 7, 16] {
        assert!(planar::edges_with_strips(p, strips) == whole, "{what}: {strips} strips differ from the whole");
    }
    whole
}

#[test]
fn strips_prove_the_whole_triangulation_on_general_sets() {
    for (n, seed) in [(3_000, 1), (12_000, 2), (40_000, 3)] {
        let p = random_points(n, 2, seed);
        let whole = same_as_whole(&p, "uniform").expect("uniform points have a unique triangulation");
        assert!(whole.len() > 2 * n, "{n} points: {} edges", whole.len());
        // Strips of a few thousand points decide by themselves (the whole set is not needed).
        for strips in [2, 5, 16].into_iter().filter(|s| n / s >= 2_500) {
            let own = planar::edges_in_strips_of(&p, strips);
            assert!(own.as_ref() == Some(&whole), "uniform {n}, {strips} strips: not proved or differ");
        }
        let c = blobs(n, 7, seed);
        let whole = same_as_whole(&c, "blobs").expect("blobs have a unique triangulation");
        if n / 8 >= 2_500 {
            assert!(planar::edges_in_strips_of(&c, 8) == Some(whole), "blobs {n}, 8 strips: not proved or differ");
        }
    }
}

#[test]
fn large_sets_take_the_strips_by_default() {
    let p = random_points(planar::STRIPS_FROM + 10, 2, 5);
    assert!(planar::edges(&p) == planar::edges_with_strips(&p, 1), "the default path differs from the whole");
}

#[test]
fn duplicates_shared_x_and_grids_as_the_whole_triangulation() {
    // Duplicated rows: each position named for its first row.
    let mut p = random_points(10_000, 2, 7);
    for i in 0..1_000 {
        let j = (i * 37) % 10_000;
        let row = p.coords[2 * j..2 * j + 2].to_vec();
        p.coords.extend(row);
        p.n += 1;
    }
    let e = same_as_whole(&p, "duplicates").expect("unique triangulation");
    assert!(e.iter().all(|&(_, j)| j < 10_000), "a duplicate row got an edge");
    // Twenty vertical lines of random heights: strips never split one x.
    let lines = Points {
        n: 8_000,
        dim: 2,
        coords: (0..8_000u64)
            .flat_map(|i| [(i % 20) as f64 + 1e-3 * unit(9, 2 * i), 100.0 * unit(9, 2 * i + 1)])
            .collect(),
    };
    same_as_whole(&lines, "near-vertical lines");
    let exact_lines = Points {
        n: 6_000,
        dim: 2,
        coords: (0..6_000u64).flat_map(|i| [(i % 12) as f64, 100.0 * unit(11, i)]).collect(),
    };
    same_as_whole(&exact_lines, "vertical lines");
    // A grid: co-circular squares everywhere, so no unique triangulation; Qhull decides.
    let grid =
        Points { n: 10_000, dim: 2, coords: (0..10_000).flat_map(|i| [(i % 100) as f64, (i / 100) as f64]).collect() };
    assert_eq!(same_as_whole(&grid, "grid"), None);
    // One line: no triangulation at all.
    let line = Points { n: 5_000, dim: 2, coords: (0..5_000).flat_map(|i| [i as f64, 2.0 * i as f64]).collect() };
    assert_eq!(same_as_whole(&line, "line"), None);
}

#[test]
fn strips_on_the_fcps_sets_as_the_whole_triangulation() {
    for (name, skip) in [("Lsun", 3), ("Target", 0), ("TwoDiamonds", 0), ("WingNut", 0), ("EngyTime", 0)] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps").join(format!("{name}.data"));
        let p = neurobits::ocnn::points::load(&path)
            .unwrap_or_else(|e| panic!("{e}: `make setup` fetches the FCPS sets"))
            .skip(skip);
        if p.dim == 2 {
            same_as_whole(&p, name);
        }
    }
}
