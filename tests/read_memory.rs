//! What the text reader allocates for one very long line: the values, not a slice per field
//! (once 16 bytes per field of 2 bytes: 8x the line), and never past the memory budget. A
//! counting allocator measures the peak; this file is its own test binary so that nothing else
//! allocates meanwhile, and its one test sets the process's budget freely.

use neurobits::io::read::{parse, ReadOptions, Table};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = NOW.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        NOW.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let now = NOW.fetch_add(new, Relaxed) + new;
        PEAK.fetch_max(now, Relaxed);
        NOW.fetch_sub(l.size(), Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Peak bytes allocated by `f` beyond what was allocated before it.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = NOW.load(Relaxed);
    PEAK.store(base, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed) - base)
}

#[test]
fn a_long_line_costs_its_values_and_the_budget_bounds_it() {
    let fields = 2_000_000;
    let line = "7,".repeat(fields - 1) + "7\n";
    let n = line.len();
    for delimiter in [None, Some(b',')] {
        let opts = ReadOptions { delimiter, ..ReadOptions::default() };
        let (t, peak) = peak_of(|| parse::<f32>(line.as_bytes(), "long.csv", &opts).unwrap());
        let t: Table<f32> = t;
        assert_eq!((t.rows, t.cols), (1, fields));
        // f32 values: 4 bytes per 2-byte field = 2x the line, reserved once from the first row.
        assert!(peak <= 21 * n / 10, "f32: peak {peak} bytes for a {n}-byte line");
        drop(t);
        let (t, peak) = peak_of(|| parse::<f64>(line.as_bytes(), "long.csv", &opts).unwrap());
        assert_eq!(t.data.len(), fields);
        assert!(peak <= 41 * n / 10, "f64: peak {peak} bytes for a {n}-byte line");
    }
    // Whitespace runs too (the OCNN's point files).
    let spaced = "1 ".repeat(fields);
    let (t, peak) = peak_of(|| parse::<f32>(spaced.as_bytes(), "spaced.txt", &ReadOptions::default()).unwrap());
    assert_eq!(t.cols, fields);
    assert!(peak <= 21 * spaced.len() / 10, "whitespace: peak {peak}");
    // The values plus the text must fit the budget: refused, naming the file, before growing.
    neurobits::budget::set_max(Some(3 * n as u64 / 2), "--max-memory");
    let e = parse::<f32>(line.as_bytes(), "long.csv", &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, neurobits::Error::Memory { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with("long.csv: the values and the text needs 11.4 MiB, "), "{msg}");
    assert!(msg.contains("more than the memory budget of 5.7 MiB (--max-memory 5.7 MiB"), "{msg}");
    neurobits::budget::set_max(None, "--max-memory");
}
