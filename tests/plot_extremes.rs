//! Plots of extreme values: NaN, ±inf, 1e300, subnormals and all-equal series end, within
//! seconds, in a whole SVG (values clamped or left out, with a note in the title), never a hang,
//! a panic or coordinates that are not numbers.

use neurobits::plot::{bar_chart_log, line_chart, scatter, Bars, Labels, Series};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on a thread and fails if it takes more than 20 s (a hang) or panics.
fn within_time(what: String, f: impl FnOnce() -> anyhow::Result<()> + Send + 'static) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still plotting after 20 s"),
        Err(_) => panic!("{what}: panicked"),
    }
}

/// A whole SVG whose numbers are all numbers.
fn check_svg(p: &Path) {
    let s = std::fs::read_to_string(p).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{}: not a whole SVG", p.display());
    for bad in ["NaN", "inf"] {
        // Coordinates are plain integers or decimals; the note in the title may say "±1e30".
        let in_attrs = s.split('"').skip(1).step_by(2).any(|a| a.contains(bad));
        assert!(!in_attrs, "{}: an attribute holds '{bad}'", p.display());
    }
}

fn cases() -> Vec<(&'static str, Vec<f64>)> {
    let sub = f64::MIN_POSITIVE / 1e5;
    vec![
        ("nan", vec![1.0, f64::NAN, 3.0]),
        ("all-nan", vec![f64::NAN, f64::NAN]),
        ("inf", vec![1.0, f64::INFINITY, f64::NEG_INFINITY]),
        ("huge", vec![1e300, -1e300, 1.7e308]),
        ("huge-equal", vec![1e300, 1e300, 1e300]),
        ("equal", vec![5.0, 5.0, 5.0]),
        ("zeros", vec![0.0, 0.0]),
        ("subnormal", vec![sub, 2.0 * sub, sub]),
        ("subnormal-equal", vec![sub, sub]),
        ("tiny-and-huge", vec![1e-300, 1e300]),
        ("negative", vec![-1e-320, -5.0, -1e20]),
        ("one", vec![42.0]),
    ]
}

#[test]
fn line_charts_of_extreme_values_are_whole_svgs() {
    let d = tempfile::tempdir().unwrap();
    for (name, ys) in cases() {
        for log in [false, true] {
            for x_too in [false, true] {
                let p: PathBuf = d.path().join(format!("{name}-{log}-{x_too}.svg"));
                let pts: Vec<(f64, f64)> =
                    ys.iter().enumerate().map(|(i, &y)| (if x_too { y } else { i as f64 }, y)).collect();
                let intervals = pts.iter().map(|&(_, y)| (y - 1.0, y * 2.0)).collect();
                let series = vec![
                    Series { label: "a".into(), points: pts.clone(), intervals },
                    Series::new("b", pts.iter().map(|&(x, y)| (x, y * 0.5)).collect()),
                ];
                let q = p.clone();
                let r = within_time(format!("{name} log={log} x={x_too}"), move || {
                    line_chart(&q, &Labels { title: "t", x: "x", y: "y" }, &series, log)
                });
                match r {
                    Ok(()) => check_svg(&p),
                    // Nothing drawable (all NaN, or nothing positive on a log axis): one line, no file.
                    Err(e) => {
                        assert!(e.to_string().starts_with("nothing to plot for"), "{name}: {e}");
                        assert!(!p.exists());
                    }
                }
            }
        }
    }
}

#[test]
fn dot_charts_and_scatters_of_extreme_values_are_whole_svgs() {
    let d = tempfile::tempdir().unwrap();
    for (name, vs) in cases() {
        let p = d.path().join(format!("bars-{name}.svg"));
        let groups = vec![Bars {
            label: "g".into(),
            values: vs.iter().enumerate().map(|(i, &v)| (format!("c{i}"), Some(v))).collect(),
        }];
        let q = p.clone();
        match within_time(format!("bars {name}"), move || bar_chart_log(&q, "t", "y", &groups)) {
            Ok(()) => check_svg(&p),
            Err(e) => assert!(e.to_string().starts_with("nothing to plot for"), "{name}: {e}"),
        }
        let p = d.path().join(format!("scatter-{name}.svg"));
        let xy: Vec<(f64, f64)> = vs.iter().map(|&v| (v, v)).collect();
        let cl: Vec<u32> = (0..xy.len() as u32).map(|i| i % 2).collect();
        let q = p.clone();
        let r = within_time(format!("scatter {name}"), move || {
            scatter(&q, &Labels { title: "t", x: "x", y: "y" }, &xy, &cl)
        });
        match r {
            Ok(()) => check_svg(&p),
            Err(e) => assert!(e.to_string().starts_with("nothing to plot for"), "{name}: {e}"),
        }
    }
}
