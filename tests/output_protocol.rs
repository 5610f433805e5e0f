//! Property tests of the output protocol (`neurobits::io::atomic`, issue 31), randomised by a
//! seeded generator (the seed is printed; `NEUROBITS_PROP_SEED=N` replays one) and bounded in
//! time (a few seconds each):
//!
//! * a set of files over random member counts, sizes, modes and links (plain files of random
//!   modes, links written through, chains of links, links to files not there yet) is written
//!   whole with every mode and link kept, or, when any member is read-only, refused with
//!   nothing changed at all;
//! * 2 to 4 writers of one set at once leave exactly one writer's set;
//! * a random terminating signal at a random moment of a `gbnn generate` run leaves the old set
//!   or the whole new one, and no temporary file.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use neurobits::io::atomic::write_set;

/// splitmix64: small, seedable, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn seed(test: &str) -> u64 {
    let s = std::env::var("NEUROBITS_PROP_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    eprintln!("{test}: NEUROBITS_PROP_SEED={s}");
    s
}

/// The process's umask, read without changing it (other tests create files meanwhile).
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

/// Everything under `root`: a link's target, or a file's bytes and mode.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Link(PathBuf),
    File(Vec<u8>, u32),
    Dir,
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let entry = if m.file_type().is_symlink() {
                Entry::Link(std::fs::read_link(&p).unwrap())
            } else if m.is_dir() {
                todo.push(p.clone());
                Entry::Dir
            } else {
                Entry::File(std::fs::read(&p).unwrap(), m.permissions().mode() & 0o7777)
            };
            out.insert(p.strip_prefix(root).unwrap().to_path_buf(), entry);
        }
    }
    out
}

fn no_temporaries(root: &Path) {
    for p in snapshot(root).keys() {
        let name = p.file_name().unwrap().to_string_lossy();
        assert!(!name.starts_with(".neurobits-") && !name.starts_with(".tmp"), "temporary left: {}", p.display());
    }
}

/// What a member's path is before the write.
#[derive(Clone, Copy, Debug)]
enum Before {
    Absent,
    File(u32),
    /// A link to a file elsewhere of this mode.
    Link(u32),
    /// A link to a link to a file not there yet.
    Chain,
}

fn set_mode(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn random_sets_are_written_whole_with_modes_and_links_kept_or_refused_unchanged() {
    let mut rng = Rng(seed("random_sets"));
    let new_mode = 0o666 & !umask();
    let start = Instant::now();
    let mut cases = 0;
    while cases < 300 && start.elapsed() < Duration::from_secs(8) {
        cases += 1;
        let d = tempfile::tempdir().unwrap();
        let (set, elsewhere) = (d.path().join("set"), d.path().join("elsewhere"));
        std::fs::create_dir(&elsewhere).unwrap();
        if rng.below(4) != 0 {
            std::fs::create_dir(&set).unwrap();
        }
        let members = 1 + rng.below(6) as usize;
        let names: Vec<String> = (0..members).map(|i| format!("m{i}.dat")).collect();
        let modes = [0o600, 0o640, 0o644, 0o660, 0o604, 0o444, 0o400];
        let mut before = Vec::new();
        for n in &names {
            let b = if !set.exists() {
                Before::Absent
            } else {
                match rng.below(5) {
                    0 => Before::Absent,
                    1 | 2 => Before::File(rng.pick(&modes)),
                    3 => Before::Link(rng.pick(&modes)),
                    _ => Before::Chain,
                }
            };
            let (path, far) = (set.join(n), elsewhere.join(n));
            match b {
                Before::Absent => {}
                Before::File(mode) => {
                    std::fs::write(&path, b"old").unwrap();
                    set_mode(&path, mode);
                }
                Before::Link(mode) => {
                    std::fs::write(&far, b"old, elsewhere").unwrap();
                    set_mode(&far, mode);
                    std::os::unix::fs::symlink(&far, &path).unwrap();
                }
                Before::Chain => {
                    let middle = elsewhere.join(format!("{n}.link"));
                    std::os::unix::fs::symlink(&far, &middle).unwrap();
                    std::os::unix::fs::symlink(&middle, &path).unwrap();
                }
            }
            before.push(b);
        }
        let data: Vec<Vec<u8>> = names
            .iter()
            .map(|_| {
                let n = rng.pick(&[0usize, 1, 100, 4096, 65_537]);
                rng.bytes(n)
            })
            .collect();
        let old = snapshot(d.path());
        let r = write_set(&set, &names.iter().map(String::as_str).collect::<Vec<_>>(), |tmp| {
            for (n, b) in names.iter().zip(&data) {
                std::fs::write(tmp.join(n), b)?;
            }
            Ok(())
        });
        no_temporaries(d.path());
        let read_only = before.iter().any(|b| matches!(b, Before::File(m) | Before::Link(m) if m & 0o200 == 0));
        let case = format!("case {cases}: {before:?}");
        if read_only {
            assert!(r.is_err(), "{case}: a read-only member is refused");
            let mut now = snapshot(d.path());
            // The set's folder may have been made (empty) before the refusal.
            if !old.contains_key(Path::new("set")) && now.get(Path::new("set")) == Some(&Entry::Dir) {
                now.remove(Path::new("set"));
            }
            assert_eq!(now, old, "{case}: nothing changed");
            continue;
        }
        r.unwrap_or_else(|e| panic!("{case}: {e:#}"));
        for ((n, b), bytes) in names.iter().zip(&before).zip(&data) {
            let path = set.join(n);
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let got = std::fs::read(&path).unwrap();
            assert!(&got == bytes, "{case}: {n} holds this run's bytes");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            match *b {
                Before::Absent => assert_eq!(mode, new_mode, "{case}: {n}: a new file's mode"),
                Before::File(m) => assert_eq!((meta.is_file(), mode), (true, m), "{case}: {n}: its mode kept"),
                Before::Link(_) | Before::Chain => {
                    assert!(meta.file_type().is_symlink(), "{case}: {n}: the link stays");
                    assert_eq!(std::fs::read(elsewhere.join(n)).unwrap(), *bytes, "{case}: {n}: written through");
                    let want = if let Before::Link(m) = *b { m } else { new_mode };
                    assert_eq!(mode, want, "{case}: {n}: the target's mode");
                }
            }
        }
    }
    eprintln!("{cases} random sets in {:?}", start.elapsed());
}

#[test]
fn concurrent_writers_of_one_set_leave_one_writers_set() {
    let mut rng = Rng(seed("concurrent_writers"));
    let start = Instant::now();
    let mut rounds = 0;
    while rounds < 40 && start.elapsed() < Duration::from_secs(8) {
        rounds += 1;
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("set");
        let members = 1 + rng.below(5) as usize;
        let names: Vec<String> = (0..members).map(|i| format!("m{i}.dat")).collect();
        let writers = 2 + rng.below(3) as usize;
        // Writer w's member i: a random length, every byte w (so a mix shows).
        let sizes: Vec<Vec<usize>> =
            (0..writers).map(|_| (0..members).map(|_| 1 + rng.below(200_000) as usize).collect()).collect();
        std::thread::scope(|s| {
            for (w, sizes) in sizes.iter().enumerate() {
                let (set, names) = (&set, &names);
                s.spawn(move || {
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    write_set(set, &refs, |tmp| {
                        for (n, &len) in names.iter().zip(sizes) {
                            std::fs::write(tmp.join(n), vec![w as u8; len])?;
                        }
                        Ok(())
                    })
                    .unwrap();
                });
            }
        });
        let got: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(set.join(n)).unwrap()).collect();
        let w = got[0][0] as usize;
        for (i, g) in got.iter().enumerate() {
            assert!(
                g.len() == sizes[w][i] && g.iter().all(|&b| b as usize == w),
                "round {rounds}: member {i} is not writer {w}'s"
            );
        }
        no_temporaries(d.path());
    }
    eprintln!("{rounds} rounds of concurrent writers in {:?}", start.elapsed());
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn a_signal_at_a_random_moment_leaves_the_old_set_or_the_new_one_and_no_temporary() {
    let mut rng = Rng(seed("signals"));
    let bin = assert_cmd::cargo::cargo_bin("neurobits");
    let signals =
        [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM];
    let names = ["messages.csv", "probes.csv", "truth.csv"];
    let generate = |dir: &Path, messages: u64, seed: u64| {
        let mut c = std::process::Command::new(&bin);
        c.args(["-q", "gbnn", "generate", "--clusters", "4", "--neurons", "16", "--erased", "1"])
            .args(["--messages", &messages.to_string(), "--probes", &(messages / 2).to_string()])
            .args(["--seed", &seed.to_string(), "-o"])
            .arg(dir)
            .current_dir(dir.parent().unwrap())
            .stderr(std::process::Stdio::piped());
        c
    };
    let start = Instant::now();
    let (mut runs, mut interrupted) = (0, 0);
    while runs < 30 && start.elapsed() < Duration::from_secs(12) {
        runs += 1;
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("set");
        assert!(generate(&set, 50, 1).status().unwrap().success());
        let old = snapshot(d.path());
        let messages = 20_000 + rng.below(300_000);
        let sig = rng.pick(&signals);
        let child = generate(&set, messages, 2).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(400)));
        // SAFETY: kill(2) on the child's pid, which is not reaped yet.
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let case = format!("run {runs}: signal {sig}, {messages} messages");
        no_temporaries(d.path());
        use std::os::unix::process::ExitStatusExt;
        // Exit 128 + signal with the handler; killed by the signal itself only before it is set up.
        let signalled = out.status.code() == Some(128 + sig) || out.status.signal() == Some(sig);
        assert!(signalled || out.status.success(), "{case}: {:?} {err}", out.status);
        interrupted += signalled as u32;
        // A core file from a SIGQUIT that came before the handler was set is no output of ours.
        let files = |root: &Path| {
            let mut m = snapshot(root);
            m.retain(|p, _| !p.to_string_lossy().starts_with("core"));
            m
        };
        if files(d.path()) == old {
            continue;
        }
        // Otherwise the whole new set: every member of run 2, complete.
        let (m, p, t) = (lines(&set.join(names[0])), lines(&set.join(names[1])), lines(&set.join(names[2])));
        assert_eq!((m.len() as u64, p.len() as u64), (messages, messages / 2), "{case}: a whole new set");
        let stored: std::collections::HashSet<&String> = m.iter().collect();
        assert!(t.len() == p.len() && t.iter().all(|row| stored.contains(row)), "{case}: truth.csv of the same run");
    }
    eprintln!("{runs} runs ({interrupted} interrupted) in {:?}", start.elapsed());
}
