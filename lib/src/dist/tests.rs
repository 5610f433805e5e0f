//! Ranks as threads of one test process, each with its own TCP connection.

use super::*;
use std::net::TcpListener;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

/// Runs `f(group)` on `size` ranks (threads), rank 0 on a listener bound to a free port.
fn ranks<R: Send + 'static>(size: usize, f: impl Fn(Group) -> R + Send + Sync + Clone + 'static) -> Vec<R> {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let mut hs = Vec::new();
    for rank in 1..size {
        let (f, addr) = (f.clone(), addr.clone());
        hs.push(std::thread::spawn(move || {
            let w = World { rank, size, local_rank: rank, launcher: "test", job: 0 };
            f(Group::peer(w, &addr, T).unwrap())
        }));
    }
    let mut out = vec![f(Group::root(l, size, 0, T).unwrap())];
    out.extend(hs.into_iter().map(|h| h.join().unwrap()));
    out
}

#[test]
fn collectives_agree_on_every_rank() {
    let out = ranks(4, |mut g| {
        let r = g.world().rank;
        let mine = vec![r as u8; r + 1];
        let gathered = g.gather(&mine).unwrap();
        let mut b = if r == 0 { b"from rank 0".to_vec() } else { Vec::new() };
        g.broadcast(&mut b).unwrap();
        let all = g.all_gather(&mine).unwrap();
        let max = g.all_reduce_max(10 * r as u64 + 7).unwrap();
        g.barrier().unwrap();
        (gathered, b, all, max)
    });
    let expect: Vec<Vec<u8>> = (0..4).map(|r| vec![r as u8; r + 1]).collect();
    for (r, (gathered, b, all, max)) in out.into_iter().enumerate() {
        assert_eq!(gathered, (r == 0).then(|| expect.clone()), "rank {r}");
        assert_eq!(b, b"from rank 0");
        assert_eq!(all, expect);
        assert_eq!(max, 37);
    }
}

#[test]
fn a_single_group_sends_nothing() {
    let mut g = Group::single();
    assert_eq!(g.gather(b"x").unwrap(), Some(vec![b"x".to_vec()]));
    assert_eq!(g.all_gather(b"y").unwrap(), vec![b"y".to_vec()]);
    assert_eq!(g.all_reduce_max(5).unwrap(), 5);
}

#[test]
fn a_peer_that_exits_is_one_error_at_once() {
    let out = ranks(3, |mut g| {
        if g.world().rank == 2 {
            return None; // drops its connection without a word
        }
        let t = Instant::now();
        let e = g.gather(b"x").err();
        Some((e.map(|e| (e.to_string(), e.is_io())), t.elapsed()))
    });
    let (e, took) = out[0].clone().unwrap();
    let (msg, io) = e.expect("rank 0 must fail");
    assert!(msg.starts_with("rank 2: connection lost"), "{msg}");
    assert!(io && took < Duration::from_secs(5), "{msg} after {took:?}");
}

#[test]
fn a_silent_peer_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let h = std::thread::spawn(move || {
        let g = Group::peer(World { rank: 1, size: 2, local_rank: 1, launcher: "test", job: 0 }, &addr, T).unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        drop(g);
    });
    let mut g = Group::root(l, 2, 0, Duration::from_millis(300)).unwrap();
    let e = g.gather(b"x").unwrap_err().to_string();
    assert!(e.contains("rank 1: no answer within"), "{e}");
    h.join().unwrap();
}

#[test]
fn a_missing_rank_or_a_missing_root_is_named() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let h = std::thread::spawn(move || {
        Group::peer(World { rank: 1, size: 3, local_rank: 1, launcher: "t", job: 0 }, &addr, T)
    });
    let e = Group::root(l, 3, 0, Duration::from_millis(400)).unwrap_err().to_string();
    assert!(e.contains("rank(s) 2 did not connect within"), "{e}");
    // Rank 1 was accepted before rank 0 gave up; its connection is then closed.
    let _ = h.join().unwrap();
    // Nobody listens on a port just freed.
    let free = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let w = World { rank: 1, size: 2, local_rank: 1, launcher: "t", job: 0 };
    let e = Group::peer(w, &free, Duration::from_millis(300)).unwrap_err().to_string();
    assert!(e.starts_with(&format!("rank 0 at {free}: not reachable within")), "{e}");
}

#[test]
fn ranks_of_another_job_are_turned_away_and_the_wait_goes_on() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let w = |size, job| World { rank: 1, size, local_rank: 1, launcher: "t", job };
    let h = std::thread::spawn(move || {
        // Another size, another job key, a stray connection that says nothing: each turned away.
        let e1 = Group::peer(w(4, 7), &addr, T).unwrap_err().to_string();
        let e2 = Group::peer(w(2, 8), &addr, T).unwrap_err().to_string();
        drop(std::net::TcpStream::connect(&addr).unwrap());
        let ours = Group::peer(w(2, 7), &addr, T).map(|g| g.world().rank);
        (e1, e2, ours)
    });
    let g = Group::root(l, 2, 7, T).unwrap();
    assert_eq!(g.world().size, 2);
    let (e1, e2, ours) = h.join().unwrap();
    for e in [e1, e2] {
        assert!(e.contains("rank 0 there belongs to another job, or rank 1 of"), "{e}");
    }
    assert_eq!(ours.unwrap(), 1);
}

#[test]
fn the_job_key_comes_from_the_launcher_and_moves_the_default_port() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    };
    let a = env(&[("OMPI_MCA_ess_base_jobid", "2015166465")]);
    let b = env(&[("OMPI_MCA_ess_base_jobid", "2015166466")]);
    assert!(job_key(&a) != 0 && job_key(&a) != job_key(&b));
    assert_eq!(job_key(&env(&[])), 0);
    assert_ne!(master_from_vars(a).unwrap(), master_from_vars(b).unwrap());
    assert_eq!(master_from_vars(env(&[])).unwrap(), "127.0.0.1:29517");
    let slurm = env(&[("SLURM_JOB_ID", "5"), ("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")]);
    let key = job_key(&slurm);
    assert_eq!(World::from_vars(slurm).unwrap().job, key);
}

#[test]
fn launchers_are_read_in_order_and_checked() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    };
    let both = env(&[
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("SLURM_PROCID", "5"),
        ("SLURM_NTASKS", "8"),
    ]);
    assert_eq!(World::from_vars(both).unwrap(), World { rank: 1, size: 2, local_rank: 1, launcher: "openmpi", job: 0 });
    let torch = env(&[("RANK", "2"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "0")]);
    assert_eq!(
        World::from_vars(torch).unwrap(),
        World { rank: 2, size: 4, local_rank: 0, launcher: "torchrun", job: 0 }
    );
    let pmi = env(&[("PMI_RANK", "0"), ("PMI_SIZE", "3")]);
    assert_eq!(World::from_vars(pmi).unwrap().launcher, "pmi");
    let e = World::from_vars(env(&[("RANK", "4"), ("WORLD_SIZE", "4")])).unwrap_err().to_string();
    assert_eq!(e, "the environment: RANK = 4 with WORLD_SIZE = 4: no such rank");
    let e = World::from_vars(env(&[("RANK", "x"), ("WORLD_SIZE", "4")])).unwrap_err().to_string();
    assert_eq!(e, "the environment: RANK = \"x\": not a rank");
    assert_eq!(master_from_vars(env(&[("NEUROBITS_MASTER", "h:1"), ("MASTER_ADDR", "g")])).unwrap(), "h:1");
    assert_eq!(master_from_vars(env(&[("MASTER_PORT", "7")])).unwrap(), "127.0.0.1:7");
    assert!(master_from_vars(env(&[("MASTER_PORT", "70000")])).is_err());
    assert!(master_from_vars(env(&[("NEUROBITS_MASTER", "h")])).is_err());
}

#[test]
fn shares_cover_every_item_once() {
    for n in [0usize, 1, 5, 64, 1001] {
        for size in 1..9 {
            let mut next = 0;
            for rank in 0..size {
                let s = World { rank, size, local_rank: rank, launcher: "t", job: 0 }.share(n);
                assert_eq!(s.start, next);
                assert!(s.len() == n / size || s.len() == n / size + 1);
                next = s.end;
            }
            assert_eq!(next, n);
        }
    }
}

#[test]
fn a_watchdog_dropped_in_time_does_nothing() {
    let t = Instant::now();
    drop(Watchdog::arm("quick work", Duration::from_secs(30)));
    assert!(t.elapsed() < Duration::from_secs(1), "dropping waits for the deadline: {:?}", t.elapsed());
}

/// The child of `a_watchdog_past_its_deadline_ends_the_process`: work that never finishes.
#[test]
fn watchdog_child() {
    if std::env::var_os("NEUROBITS_WATCHDOG_CHILD").is_none() {
        return; // run by the test below only
    }
    let _w = Watchdog::arm("stuck work", Duration::from_millis(200));
    std::thread::sleep(Duration::from_secs(30));
}

#[test]
fn a_watchdog_past_its_deadline_ends_the_process() {
    let t = Instant::now();
    let o = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "dist::tests::watchdog_child", "--nocapture"])
        .env("NEUROBITS_WATCHDOG_CHILD", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("error: stuck work: not finished within 0.2 s (NEUROBITS_DIST_TIMEOUT)"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10));
}
