//! The exact FlyHash index searched by several processes: threads as ranks through the library,
//! then the CLI under `mpirun -np 2|3` and as two children started with `RANK`/`WORLD_SIZE` by
//! hand, each output equal byte for byte to one process's; and the failures (a rank with other
//! options, a rank that never comes) as one line and an exit, never a hang.

use neurobits::dist::{Group, World};
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::index::FlyIndex;
use neurobits::flyhash::index_dist;
use neurobits::flyhash::model::FlyHashConfig;
use neurobits::model::Model;
use neurobits_core::prng::{below, draw};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn nb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neurobits"))
}

/// Small integer values: many codes tie, so the merge's tie-break is exercised.
fn vectors(rows: usize, d: usize, seed: u64) -> Matrix {
    let data = (0..rows * d).map(|i| below(draw(seed, i as u64), 4) as f32).collect();
    Matrix { rows, cols: d, data }
}

fn csv(x: &Matrix) -> String {
    x.data.chunks(x.cols).map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",") + "\n").collect()
}

/// An index of three blocks (build, then two appends) of 150 + 40 + 7 codes.
fn index_file(dir: &Path) -> (std::path::PathBuf, FlyIndex) {
    let cfg = FlyHashConfig { code_bits: Some(96), winners: Some(6), ..Default::default() };
    let mut index = FlyIndex::new(cfg, 24).unwrap();
    index.add(&vectors(150, 24, 1)).unwrap();
    let path = dir.join("idx.nbi");
    index.save(&path).unwrap();
    for (n, seed) in [(40, 2), (7, 3)] {
        let x = vectors(n, 24, seed);
        FlyIndex::append(&path, &x, neurobits::device::Target::CPU).unwrap();
        index.add(&x).unwrap();
    }
    (path, index)
}

fn free_port() -> String {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string()
}

#[test]
fn every_rank_count_finds_what_one_process_finds() {
    let d = tempfile::tempdir().unwrap();
    let (path, index) = index_file(d.path());
    let q = vectors(23, 24, 9);
    for k in [1, 10, 250] {
        let one = index.search(&q, k).unwrap();
        for size in [1, 2, 3, 5, 8] {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = l.local_addr().unwrap().to_string();
            let peers: Vec<_> = (1..size)
                .map(|rank| {
                    let (addr, path) = (addr.clone(), path.clone());
                    std::thread::spawn(move || {
                        let w = World { rank, size, local_rank: rank, launcher: "test", job: 0 };
                        let mut g = Group::peer(w, &addr, Duration::from_secs(20)).unwrap();
                        index_dist::search(&path, None, k, neurobits::device::Target::CPU, &mut g).unwrap()
                    })
                })
                .collect();
            let mut g =
                if size == 1 { Group::single() } else { Group::root(l, size, 0, Duration::from_secs(20)).unwrap() };
            let got = index_dist::search(&path, Some(&q), k, neurobits::device::Target::CPU, &mut g).unwrap();
            assert_eq!(got.as_ref(), Some(&one), "k = {k}, {size} ranks");
            assert!(peers.into_iter().all(|h| h.join().unwrap().is_none()));
        }
    }
}

#[test]
fn a_rank_reads_its_share_only_and_checks_whole_blocks() {
    let d = tempfile::tempdir().unwrap();
    let (path, index) = index_file(d.path());
    let w = |rank, size| World { rank, size, local_rank: rank, launcher: "test", job: 0 };
    let s = index_dist::read_share(&path, &w(1, 2)).unwrap();
    assert_eq!((s.ids.clone(), s.total), (99..197, 197));
    assert_eq!(s.codes, index.codes()[99 * 2..]);
    // A flipped byte in the last block's codes: the rank that reads that block whole says so.
    let mut b = std::fs::read(&path).unwrap();
    let at = b.len() - 32 - 8;
    b[at] ^= 1;
    std::fs::write(&path, &b).unwrap();
    let e = index_dist::read_share(&path, &w(0, 1)).unwrap_err().to_string();
    assert!(e.contains("checksum mismatch: the file is corrupted"), "{e}");
}

fn cli_files(dir: &Path) -> (String, String, String) {
    let (path, _) = index_file(dir);
    let q = dir.join("q.csv");
    std::fs::write(&q, csv(&vectors(31, 24, 5))).unwrap();
    let one = dir.join("one.csv");
    let o = nb()
        .args(["flyhash", "index", "search", "--index", p(&path), "-i", p(&q), "-k", "12", "-o", p(&one)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (p(&path).into(), p(&q).into(), std::fs::read_to_string(one).unwrap())
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

fn ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

#[test]
fn mpirun_ranks_write_what_one_process_writes() {
    let d = tempfile::tempdir().unwrap();
    let (index, q, one) = cli_files(d.path());
    for np in ["2", "3"] {
        let out = d.path().join(format!("np{np}.csv"));
        // mpirun is part of the test's tools (make setup installs openmpi-bin): missing, it fails.
        let o = Command::new("mpirun")
            .args(["-np", np, "--oversubscribe", "-x", "NEUROBITS_MASTER"])
            .arg(env!("CARGO_BIN_EXE_neurobits"))
            .args([
                "flyhash",
                "index",
                "search",
                "--distributed",
                "--index",
                &index,
                "-i",
                &q,
                "-k",
                "12",
                "-o",
                p(&out),
            ])
            .env("NEUROBITS_MASTER", free_port())
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .expect("mpirun (OpenMPI, `make setup` installs openmpi-bin)");
        ok(&o, &format!("mpirun -np {np}"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), one, "mpirun -np {np}");
    }
    // Queries on standard input (mpirun gives it to rank 0) and hits on standard output (rank 0
    // alone writes).
    let o = Command::new("mpirun")
        .args(["-np", "2", "--oversubscribe", "-x", "NEUROBITS_MASTER"])
        .arg(env!("CARGO_BIN_EXE_neurobits"))
        .args(["flyhash", "index", "search", "--distributed", "--index", &index, "-i", "-", "-k", "12", "-o", "-"])
        .env("NEUROBITS_MASTER", free_port())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(std::fs::File::open(&q).unwrap())
        .output()
        .unwrap();
    ok(&o, "mpirun -np 2, standard input and output");
    assert_eq!(String::from_utf8_lossy(&o.stdout), one);
}

/// Starts `size` ranks by hand (`RANK`, `WORLD_SIZE`, `NEUROBITS_MASTER`), `args(rank)` each.
fn by_hand(size: usize, timeout: &str, args: impl Fn(usize) -> Vec<String>) -> Vec<Output> {
    let master = free_port();
    let kids: Vec<_> = (0..size)
        .map(|r| {
            nb().args(args(r))
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", size.to_string())
                .env("NEUROBITS_MASTER", &master)
                .env("NEUROBITS_DIST_TIMEOUT", timeout)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    kids.into_iter().map(|k| k.wait_with_output().unwrap()).collect()
}

#[test]
fn ranks_started_by_hand_write_what_one_process_writes() {
    let d = tempfile::tempdir().unwrap();
    let (index, q, one) = cli_files(d.path());
    let out = d.path().join("env.csv");
    let args = |_| {
        ["flyhash", "index", "search", "--distributed", "--index", &index, "-i", &q, "-k", "12", "-o", p(&out)]
            .map(String::from)
            .to_vec()
    };
    for (r, o) in by_hand(2, "60", args).iter().enumerate() {
        ok(o, &format!("rank {r}"));
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), one);
}

#[test]
fn a_rank_with_other_options_or_no_peer_ends_the_job_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let (index, q, _) = cli_files(d.path());
    let out = d.path().join("bad.csv");
    let t = Instant::now();
    let args = |r: usize| {
        let k = if r == 1 { "5" } else { "12" };
        ["flyhash", "index", "search", "--distributed", "--index", &index, "-i", &q, "-k", k, "-o", p(&out)]
            .map(String::from)
            .to_vec()
    };
    let o = by_hand(2, "60", args);
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).trim_end().to_string();
    assert_eq!(o[1].status.code(), Some(2), "{}", err(&o[1]));
    assert!(err(&o[1]).contains("rank 1 sees 197 codes and k = 5, rank 0 197 codes and k = 12"), "{}", err(&o[1]));
    assert_eq!(o[0].status.code(), Some(1), "{}", err(&o[0]));
    assert!(err(&o[0]).contains("rank 1: connection lost"), "{}", err(&o[0]));
    assert!(o.iter().all(|o| err(o).lines().count() == 1));
    assert!(!out.exists() && t.elapsed() < Duration::from_secs(30));
    // Rank 0 of two, alone: it gives up at its deadline.
    let args = |_| {
        ["flyhash", "index", "search", "--distributed", "--index", &index, "-i", &q, "-o", p(&out)]
            .map(String::from)
            .to_vec()
    };
    let master = free_port();
    let o = nb()
        .args(args(0))
        .env("RANK", "0")
        .env("WORLD_SIZE", "2")
        .env("NEUROBITS_MASTER", &master)
        .env("NEUROBITS_DIST_TIMEOUT", "0.5")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("rank(s) 1 did not connect within"), "{}", err(&o));
    assert!(!out.exists());
}

#[test]
fn the_distributed_gbnn_bench_without_a_gpu_stops_every_rank_in_one_line() {
    let args = |_| {
        "gbnn bench-gpus --distributed --clusters 4 --neurons 8 --stored 10 --probes 10 --erased 1"
            .split(' ')
            .map(String::from)
            .collect()
    };
    for (r, o) in by_hand(2, "20", args).iter().enumerate() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "rank {r}: {err}");
        assert!(err.trim_end().lines().count() == 1 && err.starts_with("error: no CUDA"), "rank {r}: {err}");
    }
}

/// On the GPU machine (`make gpu-test`): ranks as threads, each searching its share on its own GPU
/// (`--device gpu` means the local rank's GPU; one GPU serves both where there is one), equal to
/// one process on the CPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn ranks_on_their_gpus_find_what_the_cpu_finds() {
    assert!(neurobits_gpu_host::Gpu::count() >= 1, "a CUDA GPU");
    let d = tempfile::tempdir().unwrap();
    let (path, index) = index_file(d.path());
    let q = vectors(41, 24, 11);
    for k in [1, 10, 250] {
        let one = index.search(&q, k).unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let path1 = path.clone();
        let peer = std::thread::spawn(move || {
            let w = World { rank: 1, size: 2, local_rank: 1, launcher: "test", job: 0 };
            let mut g = Group::peer(w, &addr, Duration::from_secs(60)).unwrap();
            index_dist::search(&path1, None, k, neurobits::device::Target::Gpu(0), &mut g).unwrap()
        });
        let mut g = Group::root(l, 2, 0, Duration::from_secs(60)).unwrap();
        let got = index_dist::search(&path, Some(&q), k, neurobits::device::Target::Gpu(0), &mut g).unwrap();
        assert!(peer.join().unwrap().is_none());
        assert_eq!(got.as_ref(), Some(&one), "k = {k}: 2 ranks on GPUs differ from one process on the CPU");
        println!("k = {k}: 2 ranks on their GPUs = one process on the CPU");
    }
}
