//! The one reader (`neurobits::io::read`): every NPY dtype, byte order and memory order reads as
//! the same values as a CSV of them; NPZ, text variants, gzip, standard input, labels; hostile
//! and malformed files end in one-line errors naming the file; the older entry points
//! (`flyhash::data`, `ocnn::points`) give bit-identical values to what they gave before.

use neurobits::flyhash::data::Matrix;
use neurobits::io::read::{self, npz_names, read_labels, Format, ReadOptions, Table};
use std::io::Write;
use std::path::{Path, PathBuf};

fn opts(format: Format) -> ReadOptions {
    ReadOptions { format, ..ReadOptions::default() }
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// An NPY v1 file, header padded to 64 bytes as numpy writes it.
fn npy_of(descr: &str, fortran: bool, shape: &str, body: &[u8]) -> Vec<u8> {
    let f = if fortran { "True" } else { "False" };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}");
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    b.extend(body);
    b
}

/// One value of dtype `descr` (`<i4`, `>f2`, `|b1` …), parsed from its exact decimal text.
fn encode(descr: &str, s: &str) -> Vec<u8> {
    let n: usize = descr[2..].parse().unwrap();
    let mut le = match &descr[1..2] {
        "f" if n == 2 => npyz::half::f16::from_f32(s.parse().unwrap()).to_bits().to_le_bytes().to_vec(),
        "f" if n == 4 => s.parse::<f32>().unwrap().to_le_bytes().to_vec(),
        "f" => s.parse::<f64>().unwrap().to_le_bytes().to_vec(),
        "i" => s.parse::<i64>().unwrap().to_le_bytes()[..n].to_vec(),
        "u" => s.parse::<u64>().unwrap().to_le_bytes()[..n].to_vec(),
        _ => vec![s.parse::<u8>().unwrap()],
    };
    if descr.starts_with('>') {
        le.reverse();
    }
    le
}

fn bits32(t: &Table<f32>) -> (usize, usize, Vec<u32>) {
    (t.rows, t.cols, t.data.iter().map(|v| v.to_bits()).collect())
}

fn mbits(m: &Matrix) -> (usize, usize, Vec<u32>) {
    (m.rows, m.cols, m.data.iter().map(|v| v.to_bits()).collect())
}

fn bits64(t: &Table<f64>) -> (usize, usize, Vec<u64>) {
    (t.rows, t.cols, t.data.iter().map(|v| v.to_bits()).collect())
}

/// Values exact in each dtype (the extremes included), 2 × 3 row-major.
const CASES: [(&str, [&str; 6]); 12] = [
    ("f2", ["0.5", "-1.25", "3", "100", "0.0625", "-2048"]),
    ("f4", ["0.375", "-1.25", "16777216", "-0.0078125", "3", "100"]),
    ("f8", ["0.1", "16777217", "-1.25", "123456789.125", "1e-300", "-7"]),
    ("i1", ["-128", "127", "0", "-1", "5", "-7"]),
    ("i2", ["-32768", "32767", "1", "-1", "300", "-7"]),
    ("i4", ["-2147483648", "2147483647", "16777217", "-1", "5", "-7"]),
    ("i8", ["-9223372036854775808", "9223372036854775807", "16777217", "-1", "5", "9007199254740993"]),
    ("u1", ["0", "255", "1", "2", "200", "7"]),
    ("u2", ["0", "65535", "1", "2", "300", "7"]),
    ("u4", ["4294967295", "16777217", "1", "2", "300", "7"]),
    ("u8", ["18446744073709551615", "16777217", "1", "0", "9007199254740993", "7"]),
    ("b1", ["1", "0", "1", "1", "0", "0"]),
];

#[test]
fn every_npy_dtype_order_and_layout_reads_as_its_csv() {
    let mut seen = 0;
    for (ty, vals) in CASES {
        let csv = format!("{}\n{}\n", vals[..3].join(","), vals[3..].join(","));
        let want32 = bits32(&read::parse(csv.as_bytes(), "c.csv", &ReadOptions::default()).unwrap());
        let want64 = bits64(&read::parse(csv.as_bytes(), "c.csv", &ReadOptions::default()).unwrap());
        let orders: &[&str] = if ty.ends_with('1') { &["|"] } else { &["<", ">"] };
        for end in orders {
            let descr = format!("{end}{ty}");
            for fortran in [false, true] {
                // Fortran order stores column after column.
                let order: [usize; 6] = if fortran { [0, 3, 1, 4, 2, 5] } else { [0, 1, 2, 3, 4, 5] };
                let body: Vec<u8> = order.iter().flat_map(|&i| encode(&descr, vals[i])).collect();
                let b = npy_of(&descr, fortran, "(2, 3)", &body);
                let what = format!("{descr} fortran={fortran}");
                let got =
                    read::parse::<f32>(&b, "x.npy", &ReadOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(bits32(&got), want32, "{what} as f32");
                assert_eq!(bits64(&read::parse(&b, "x.npy", &opts(Format::Npy)).unwrap()), want64, "{what} as f64");
                // The FlyHash wrapper is the same reader.
                assert_eq!(mbits(&neurobits::flyhash::data::npy(&b, "x").unwrap()), want32, "{what}");
                seen += 1;
            }
        }
    }
    assert_eq!(seen, (3 + 9 * 2) * 2, "every case ran");
}

#[test]
fn one_dimensional_npy_is_one_row_or_a_label_column() {
    let b = npy_of("<i8", false, "(4,)", &[3i64, 1, 4, 1].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    let t: Table<f32> = read::parse(&b, "y.npy", &ReadOptions::default()).unwrap();
    assert_eq!((t.rows, t.cols, t.data), (1, 4, vec![3.0, 1.0, 4.0, 1.0]));
    assert_eq!(read::parse_labels(&b, "y.npy", &ReadOptions::default()).unwrap(), [3, 1, 4, 1]);
    let col = npy_of("|u1", false, "(3, 1)", &[2, 0, 9]);
    assert_eq!(read::parse_labels(&col, "y.npy", &ReadOptions::default()).unwrap(), [2, 0, 9]);
    let square = npy_of("|u1", false, "(2, 2)", &[2, 0, 9, 1]);
    let e = read::parse_labels(&square, "y.npy", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "y.npy: labels must be one column or one row, found 2 x 2");
}

fn npz(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (i, (name, bytes)) in members.iter().enumerate() {
        // numpy's savez stores, savez_compressed deflates: one of each.
        let method = if i % 2 == 0 { zip::CompressionMethod::Stored } else { zip::CompressionMethod::Deflated };
        w.start_file(*name, SimpleFileOptions::default().compression_method(method)).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn npz_members_by_name_alone_or_listed() {
    let d = tempfile::tempdir().unwrap();
    let x = npy_of(
        "<f8",
        false,
        "(2, 2)",
        &[1.0f64, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    let y = npy_of("<i4", false, "(2,)", &[7i32, 8].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    let two = write(d.path(), "two.npz", npz(&[("x.npy", x.clone()), ("y.npy", y.clone())]));
    assert_eq!(npz_names(&two).unwrap(), ["x", "y"]);
    let named = |a: &str| ReadOptions { array: Some(a.into()), ..ReadOptions::default() };
    let t: Table<f64> = read::read(&two, &named("x")).unwrap();
    assert_eq!((t.rows, t.cols, t.data), (2, 2, vec![1.0, 2.0, 3.0, 4.0]));
    assert_eq!(read_labels(&two, &named("y.npy")).unwrap(), [7, 8]);
    let e = read::read::<f32>(&two, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.ends_with("two.npz: this NPZ file holds 2 arrays (x, y): name the one to read"), "{e}");
    let e = read::read::<f32>(&two, &named("z")).unwrap_err().to_string();
    assert!(e.ends_with("two.npz: no array 'z' in this NPZ file (it holds: x, y)"), "{e}");
    // One member, deflated, under a name that says nothing: read by its content.
    let one = write(d.path(), "one.bin", npz(&[("pad.txt", b"not an array".to_vec()), ("y.npy", y)]));
    assert_eq!(read_labels(&one, &ReadOptions::default()).unwrap(), [7, 8]);
    // A broken member names the archive and the member.
    let bad = write(d.path(), "bad.npz", npz(&[("x.npy", x[..x.len() - 3].to_vec())]));
    let e = read::read::<f32>(&bad, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.ends_with("bad.npz (array x): NPY data is 29 bytes, shape 2x2 needs 32"), "{e}");
}

#[test]
fn text_variants_read_alike() {
    let d = tempfile::tempdir().unwrap();
    let want = vec![1.0f64, 2.5, -3.0, 4.0];
    let auto = ReadOptions::default();
    for (name, text) in [
        ("header.csv", "x,y\n1,2.5\n-3,4\n"),
        ("spaces.csv", "1, 2.5\n-3, 4\n"),
        ("tabs.tsv", "x\ty\n1\t2.5\n-3\t4\n"),
        ("semi.csv", "x;y\n1;2.5\n-3;4\n"),
        ("quoted.csv", "\"x\",\"y\"\r\n\"1\",\"2.5\"\r\n\"-3\",\"4\"\r\n"),
        ("fcps.data", "# comment\n% comment, with a comma\n   1   2.5\n\n  -3\t  4\n"),
    ] {
        let t: Table<f64> = read::read(&write(d.path(), name, text), &auto).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((t.rows, t.cols, &t.data), (2, 2, &want), "{name}");
    }
    // The delimiter given: semicolons read, a wrong one says so instead of "the file is empty".
    let semi = write(d.path(), "s.csv", "1;2.5\n-3;4\n");
    let with = |d: u8| ReadOptions { delimiter: Some(d), ..ReadOptions::default() };
    assert_eq!(read::read::<f64>(&semi, &with(b';')).unwrap().data, want);
    let e = read::read::<f64>(&semi, &with(b',')).unwrap_err().to_string();
    assert!(e.ends_with("s.csv:2: field 1: '-3;4' is not a number (it contains ';': is the delimiter right?)"), "{e}");
    let one = write(d.path(), "one.csv", "1;2;3\n");
    let e = read::read::<f64>(&one, &with(b',')).unwrap_err().to_string();
    assert!(e.contains("one.csv: no data rows: the only row (line 1, '1;2;3') has no number"), "{e}");
    assert_eq!(read::read::<f64>(&one, &ReadOptions::default()).unwrap().data, [1.0, 2.0, 3.0]);
    let e = read::read::<f64>(&write(d.path(), "e.csv", ""), &auto).unwrap_err().to_string();
    assert!(e.ends_with("e.csv: no data (the file is empty)"), "{e}");
    assert!(read::read::<f64>(&semi, &with(b'.')).is_err(), "a delimiter inside numbers");
}

#[test]
fn skip_rows_drops_debris_after_the_header() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "lsun.data", "x y\n2 3\n0.5\n9 9 9\n1 2\n3 4\n");
    let t: Table<f64> = read::read(&p, &ReadOptions { skip_rows: 3, ..ReadOptions::default() }).unwrap();
    assert_eq!((t.rows, t.cols, t.data), (2, 2, vec![1.0, 2.0, 3.0, 4.0]));
    let e = read::read::<f64>(&p, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.ends_with("lsun.data:3: expected 2 fields, found 1"), "{e}");
    let b = npy_of("|u1", false, "(3, 1)", &[5, 6, 7]);
    let t: Table<f32> = read::parse(&b, "x", &ReadOptions { skip_rows: 1, ..ReadOptions::default() }).unwrap();
    assert_eq!((t.rows, t.data), (2, vec![6.0, 7.0]));
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_is_undone_for_every_format() {
    let d = tempfile::tempdir().unwrap();
    let npy = npy_of(">f4", false, "(1, 2)", &[1.5f32, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<_>>());
    for (name, bytes) in [("a.csv.gz", gzip(b"a,b\n1.5,-2\n")), ("a.npy.gz", gzip(&npy)), ("a", gzip(b"1.5 -2\n"))] {
        let t: Table<f32> = read::read(&write(d.path(), name, bytes), &ReadOptions::default()).unwrap();
        assert_eq!(t.data, [1.5, -2.0], "{name}");
    }
    let e = read::read::<f32>(&write(d.path(), "c.gz", &gzip(b"1,2\n")[..12]), &ReadOptions::default());
    assert!(e.unwrap_err().to_string().contains("c.gz: corrupt gzip data"));
}

/// IDX of every element type: `as` casts of the big-endian values, labels from a 1-D file.
#[test]
fn idx_files_and_labels() {
    let idx = |ty: u8, dims: &[u32], body: Vec<u8>| {
        let mut b = vec![0, 0, ty, dims.len() as u8];
        dims.iter().for_each(|d| b.extend(d.to_be_bytes()));
        b.extend(body);
        b
    };
    let cases: [(u8, Vec<u8>); 6] = [
        (0x08, vec![0, 255]),
        (0x09, vec![0x80, 0x7f]),
        (0x0B, [-300i16, 300].iter().flat_map(|v| v.to_be_bytes()).collect()),
        (0x0C, [16_777_217i32, -1].iter().flat_map(|v| v.to_be_bytes()).collect()),
        (0x0D, [0.1f32, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect()),
        (0x0E, [0.1f64, 1e-300].iter().flat_map(|v| v.to_be_bytes()).collect()),
    ];
    let want: [[f32; 2]; 6] = [
        [0.0, 255.0],
        [-128.0, 127.0],
        [-300.0, 300.0],
        [16_777_217i32 as f32, -1.0],
        [0.1, -2.0],
        [0.1f64 as f32, 0.0],
    ];
    for ((ty, body), want) in cases.into_iter().zip(want) {
        let b = idx(ty, &[1, 2], body);
        let t: Table<f32> = read::parse(&b, "x", &ReadOptions::default()).unwrap();
        assert_eq!(bits32(&t), (1, 2, want.iter().map(|v| v.to_bits()).collect()), "type {ty:#x}");
        assert_eq!(mbits(&neurobits::flyhash::data::idx(&b, "x").unwrap()), bits32(&t));
    }
    let d = tempfile::tempdir().unwrap();
    let labels = idx(0x08, &[5], vec![3, 1, 4, 1, 5]);
    let p = write(d.path(), "t-labels-idx1-ubyte.gz", gzip(&labels));
    assert_eq!(read_labels(&p, &ReadOptions::default()).unwrap(), [3, 1, 4, 1, 5]);
    let t: Table<f32> = read::read(&p, &opts(Format::Idx)).unwrap();
    assert_eq!((t.rows, t.cols), (5, 1));
}

#[test]
fn labels_from_text_and_their_errors() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "y.csv", "label\n0\n2\n1.0\n");
    assert_eq!(read_labels(&p, &ReadOptions::default()).unwrap(), [0, 2, 1]);
    let e = read_labels(&write(d.path(), "y.csv", "label\n0\n2.5\n"), &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().ends_with("y.csv:3: field 1: '2.5' is not an integer"), "{e}");
    let f8 = npy_of("<f8", false, "(3,)", &[1.0f64, 2.5, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    let e = read::parse_labels(&f8, "y.npy", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "y.npy: row 2: label 2.5 is not an integer");
    let col =
        npy_of("<f4", false, "(2, 1)", &[1.0f32, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    let e = read::parse_labels(&col, "y.npy", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "y.npy: row 2: label NaN is not an integer");
}

#[test]
fn malformed_and_hostile_files_are_one_line_errors() {
    let body: Vec<u8> = [1.0f32; 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let e = |b: &[u8]| read::parse::<f32>(b, "h.npy", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e(&npy_of("<f4", false, "(2, 3)", &body[..22])), "h.npy: NPY data is 22 bytes, shape 2x3 needs 24");
    assert_eq!(e(&npy_of("<f4", false, "(2, 3)", &body)[..40]), "h.npy: truncated NPY header");
    // Shapes that would need terabytes, or overflow: refused before any allocation.
    assert!(e(&npy_of("<f4", false, "(1000000, 1000000)", &body)).contains("needs 4000000000000"));
    assert!(e(&npy_of("<f8", false, "(4000000000, 4000000000)", &body)).contains("absurd NPY shape"));
    assert!(e(&npy_of("|b1", false, "(2,)", &[1, 2])).contains("corrupt NPY data"));
    assert!(e(&npy_of("<c8", false, "(1,)", &[0; 8])).contains("unsupported NPY dtype"));
    assert!(e(&npy_of("<f4", false, "(1, 1, 1)", &[0; 4])).contains("1-D or 2-D"));
    assert_eq!(e(b"not numpy"), "h.npy: not an NPY file (bad magic)", "a .npy name without the magic");
    let e = read::parse::<f32>(b"PK\x03\x04 junk", "z", &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.starts_with("z: corrupt NPZ (zip) file"), "{e}");
    let e = read::parse::<f32>(b"1,2\n3,4,5\n", "r.csv", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "r.csv:2: expected 2 fields, found 3");
    let e = read::parse::<f32>(b"1,2\n3,nan\n", "n.csv", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "n.csv:2: field 2: nan is not a finite number");
    let e = read::parse::<f32>(&[0xff, 0xfe, 0], "b", &ReadOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "b: not NPY, NPZ or IDX, and not text: byte 1 is not UTF-8");
    let e = read::read::<f32>(Path::new("/nonexistent/x.csv"), &ReadOptions::default()).unwrap_err();
    assert!(e.is_io() && e.to_string().starts_with("/nonexistent/x.csv: "), "{e}");
}

#[test]
fn formats_parse_and_serialize_by_name() {
    for f in ["auto", "npy", "npz", "csv", "text", "idx"] {
        let format: Format = f.parse().unwrap();
        assert_eq!(serde_json::to_string(&format).unwrap(), format!("\"{f}\""));
        assert_eq!(serde_json::from_str::<Format>(&format!("\"{f}\"")).unwrap(), format);
    }
    assert_eq!(
        "xls".parse::<Format>().unwrap_err().to_string(),
        "format = xls: must be one of auto, npy, npz, csv, text, idx"
    );
    let o: ReadOptions = serde_json::from_str(r#"{"format": "csv", "skip_rows": 3}"#).unwrap();
    assert_eq!((o.format, o.skip_rows, o.delimiter, o.array), (Format::Csv, 3, None, None));
}

/// Text becomes `f32` through `f32::from_str`, never through `f64` (which would round twice):
/// this decimal lies just above the midpoint between 1 and the next `f32`.
#[test]
fn f32_text_is_rounded_once() {
    let t: Table<f32> = read::parse(b"1.0000000596046447753906250001\n", "x", &ReadOptions::default()).unwrap();
    assert_eq!(t.data[0].to_bits(), 0x3f80_0001);
    assert_eq!(("1.0000000596046447753906250001".parse::<f64>().unwrap() as f32).to_bits(), 0x3f80_0000);
}

/// `flyhash::data::read` (what FlyHash, FlyNN and the cortical network read through) gives the
/// values the old CSV and IDX readers gave: `f32::from_str` of each field, `x as f32` of each byte.
#[test]
fn flyhash_reads_are_bit_identical() {
    let d = tempfile::tempdir().unwrap();
    let text = "a,b,c\n0.1,16777217,-0.3\n1e-45,3.4028235e38,7\n";
    let p = write(d.path(), "x.csv", text);
    let old: Vec<u32> =
        text.lines().skip(1).flat_map(|l| l.split(',')).map(|f| f.trim().parse::<f32>().unwrap().to_bits()).collect();
    let m = neurobits::flyhash::data::read(&p).unwrap();
    let new: Table<f32> = read::read(&p, &ReadOptions::default()).unwrap();
    assert_eq!(mbits(&m), (2, 3, old.clone()));
    assert_eq!(bits32(&new), (2, 3, old));
    let dir = Path::new(neurobits::flyhash::data::FASHION_MNIST);
    let images = dir.join("t10k-images-idx3-ubyte.gz");
    if !images.exists() {
        eprintln!("Fashion-MNIST missing: its IDX check skipped");
        return;
    }
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(&images).unwrap()), &mut raw)
        .unwrap();
    let old: Vec<u32> = raw[16..].iter().map(|&x| (x as f32).to_bits()).collect();
    let m = neurobits::flyhash::data::read(&images).unwrap();
    assert_eq!((m.rows, m.cols), (10_000, 784));
    assert!(m.data.iter().map(|v| v.to_bits()).eq(old.iter().copied()));
    let labels = read_labels(&dir.join("t10k-labels-idx1-ubyte.gz"), &ReadOptions::default()).unwrap();
    assert_eq!(labels.len(), 10_000);
    assert!(labels.iter().all(|l| (0..10).contains(l)));
}

/// The point reader before it went through `io::read`: per line, commas or whitespace.
fn old_points(text: &str) -> (usize, Vec<f64>) {
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('%'));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .map(|f| f.parse().unwrap())
                .collect()
        })
        .collect();
    (rows.len(), rows.concat())
}

#[test]
fn fcps_points_are_read_as_before() {
    use neurobits::ocnn::points;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fcps");
    let mut files = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        let (n, coords) = old_points(&std::fs::read_to_string(&path).unwrap());
        let p = points::load(&path).unwrap();
        assert_eq!((p.n, p.coords.len()), (n, coords.len()), "{}", path.display());
        assert!(p.coords.iter().zip(&coords).all(|(a, b)| a.to_bits() == b.to_bits()), "{}", path.display());
        files += 1;
    }
    assert_eq!(files, 10);
    let lsun = dir.join("Lsun.data");
    let skipped = points::load_with(&lsun, &ReadOptions { skip_rows: 3, ..ReadOptions::default() }).unwrap();
    assert_eq!(skipped, points::load(&lsun).unwrap().skip(3));
    assert_eq!(skipped.n, 400);
    // The same points from NPY and from a CSV with a header.
    let d = tempfile::tempdir().unwrap();
    let body: Vec<u8> = skipped.coords.iter().flat_map(|v| v.to_le_bytes()).collect();
    let npy = write(d.path(), "lsun.npy", npy_of("<f8", false, "(400, 2)", &body));
    assert_eq!(points::load(&npy).unwrap(), skipped);
    let csv: String = skipped.coords.chunks(2).map(|c| format!("{:?},{:?}\n", c[0], c[1])).collect();
    assert_eq!(points::load(&write(d.path(), "l.csv", format!("x,y\n{csv}"))).unwrap(), skipped);
    // Rows separated by spaces and rows by commas in one file, as the point reader always allowed.
    let mixed = points::load(&write(d.path(), "mixed.txt", "# two\n0 0.5\n10,10.5\n1\t2\n")).unwrap();
    assert_eq!((mixed.n, mixed.coords), (3, vec![0.0, 0.5, 10.0, 10.5, 1.0, 2.0]));
    let e = points::load(&write(d.path(), "one.csv", "1,2\n")).unwrap_err().to_string();
    assert!(e.ends_with("one.csv: clustering needs at least 2 points, found 1"), "{e}");
}

/// Standard input (`-`): this test runs itself as a child with the data on its standard input.
#[test]
fn standard_input_is_read_to_its_end() {
    if let Ok(mode) = std::env::var("NEUROBITS_READ_CHILD") {
        let r = if mode == "labels" {
            read_labels(Path::new("-"), &ReadOptions::default()).map(|l| format!("{l:?}"))
        } else {
            read::read::<f64>(Path::new("-"), &ReadOptions::default())
                .map(|t| format!("{}x{} {:?}", t.rows, t.cols, t.data))
        };
        println!("CHILD {}", r.unwrap_or_else(|e| e.to_string()));
        return;
    }
    let run = |mode: &str, input: &[u8]| {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["standard_input_is_read_to_its_end", "--exact", "--nocapture", "--test-threads=1"])
            .env("NEUROBITS_READ_CHILD", mode)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(input).unwrap();
        let out = String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap();
        out.lines()
            // The harness prints the test's name on the same line, before it.
            .find_map(|l| l.split_once("CHILD ").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("no child output: {out}"))
            .to_string()
    };
    assert_eq!(run("table", b"x y\n1 2\n3 4\n"), "2x2 [1.0, 2.0, 3.0, 4.0]");
    assert_eq!(run("table", &gzip(b"1;2\n")), "1x2 [1.0, 2.0]");
    assert_eq!(run("labels", &npy_of("<i2", false, "(2,)", &[5, 0, 6, 0])), "[5, 6]");
    assert_eq!(run("table", b"1 2\n3\n"), "standard input:2: expected 2 fields, found 1");
}
