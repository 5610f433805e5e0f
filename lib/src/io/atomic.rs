//! Every output of neurobits goes through here, with one set of rules:
//!
//! * `-` is standard output (streamed).
//! * A regular file (new or existing) is written to a temporary file beside it and renamed over
//!   it once complete: it appears whole or not at all. A new file gets mode `0666 & !umask`; an
//!   existing file keeps its mode and (where the process may set it) its owner and group. A file
//!   without write permission for us is refused (an I/O error), as `cp` would, never replaced.
//! * A symbolic link is written through: its target is replaced as above, the link stays; a
//!   chain of links is followed to its end, also when that end does not exist yet.
//! * An existing special file (character device such as `/dev/null`, FIFO, socket) is written to
//!   directly, streamed: renaming over it would destroy it. A directory is refused.
//! * A temporary file never outlives a failure: it is removed on error, and on SIGINT, SIGTERM,
//!   SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM ([`install_signal_cleanup`]) before the
//!   process exits.
//! * Several files that belong together ([`write_set`]) are written into a temporary directory
//!   beside the targets and moved in only when all are complete, each member under the rules
//!   above (links written through, modes kept), and under an exclusive lock on the directory, so
//!   that two runs writing the same set leave one run's set, never a mix.

use anyhow::{bail, Context, Result};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary paths to remove if the process is interrupted.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while a set's members are moved in ([`write_set`]): a signal waits for the moves to end,
/// so that it never leaves a mix of the old set and the new one.
static COMMIT: Mutex<()> = Mutex::new(());

/// Whether an output file or set has been moved into place (for the signal's message).
static WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn written() {
    WRITTEN.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Makes a temporary file or folder and registers it for removal on a signal, under the lock the
/// signal's cleanup takes: no signal can come between the making and the registering.
fn make_pending<T>(make: impl FnOnce() -> std::io::Result<T>, path: impl Fn(&T) -> &Path) -> std::io::Result<T> {
    let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    let t = make()?;
    p.push(path(&t).to_path_buf());
    Ok(t)
}

/// A temporary path that was moved into place or removed: no longer the signal's to remove.
fn done_pending(path: &Path) {
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|x| x != path);
    }
}

/// On a terminating signal (INT, TERM, HUP, QUIT, USR1, USR2, ALRM), removes the temporary
/// files and directories being written, then exits with 128 + the signal. Called once by `main`.
pub fn install_signal_cleanup() -> Result<()> {
    use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM])
            .context("cannot install signal handlers")?;
    // `Builder::spawn`: a thread that cannot start is an error (exit 1), not a panic.
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                // A set being moved in is finished first (renames: microseconds), then no more
                // starts: this thread keeps the lock until the process exits.
                let _commit = COMMIT.lock().unwrap_or_else(|e| e.into_inner());
                // Held to the exit: a temporary being made waits, and is then never made.
                let p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
                for path in p.iter() {
                    // The work goes on meanwhile and may add a file to a temporary folder while
                    // it is being removed (its removal then fails, not empty): again, until
                    // gone; once the folder is gone nothing can be made in it.
                    for _ in 0..100 {
                        let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path));
                        if std::fs::symlink_metadata(path).is_err() {
                            break;
                        }
                    }
                }
                if WRITTEN.load(std::sync::atomic::Ordering::SeqCst) {
                    eprintln!("interrupted: the outputs finished before the signal are kept; no other was written");
                } else {
                    eprintln!("interrupted: no output was written");
                }
                std::process::exit(128 + sig);
            }
        })
        .context("cannot start the signal-handling thread")?;
    Ok(())
}

/// The process's umask (Linux: `/proc/self/status`), `0o022` if unknown.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

/// Where a write to `path` goes.
enum Target {
    Stdout,
    /// Written in place, streamed (an existing special file).
    Special(PathBuf),
    /// Replaced atomically; the mode to give it, and the owner to keep (an existing file).
    Regular(PathBuf, u32, Option<(u32, u32)>),
}

fn target(path: &Path) -> Result<Target> {
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let name = path.display();
    // Links are written through: the file they point at is the target.
    let mut real = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&real) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&real).with_context(|| format!("cannot read the link {name}"))?;
                real = real.parent().map_or(to.clone(), |d| d.join(to));
            }
            _ => break,
        }
    }
    match std::fs::metadata(&real) {
        Ok(m) if m.is_dir() => bail!("{name} is a directory"),
        Ok(m) if m.file_type().is_socket() => Err(std::io::Error::from(std::io::ErrorKind::InvalidInput))
            .with_context(|| format!("cannot write {name}: it is a socket, not a file, device or named pipe")),
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => Ok(Target::Special(real)),
        Ok(m) if m.file_type().is_block_device() => bail!("{name} is a block device: refusing to write to it"),
        Ok(m) => {
            use std::os::unix::ffi::OsStrExt;
            let c = std::ffi::CString::new(real.as_os_str().as_bytes()).context("a path with a NUL byte")?;
            // SAFETY (access): it reads the NUL-terminated path and nothing else.
            // No write bit at all is refused also for root, whom access(2) lets through: the file
            // was made read-only on purpose.
            if m.permissions().mode() & 0o222 == 0 || unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
                    .with_context(|| format!("cannot write {name}: the file is read-only (left as it is)"));
            }
            use std::os::unix::fs::MetadataExt;
            Ok(Target::Regular(real, m.permissions().mode() & 0o7777, Some((m.uid(), m.gid()))))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Target::Regular(real, 0o666 & !umask(), None)),
        // The system's error stays in the chain: the CLI's exit code (1, an I/O failure) reads it.
        Err(e) => Err(e).with_context(|| format!("cannot write {name}")),
    }
}

/// Opens an existing character device or named pipe for writing, streamed. A named pipe with no
/// reader yet is waited for, as `cat > pipe` waits, but not silently: after a second a note says
/// what the process waits for (a signal ends the wait, and the process, cleanly).
fn open_special(p: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let is_fifo = std::fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo());
    if !is_fifo {
        return std::fs::OpenOptions::new().write(true).open(p);
    }
    let started = std::time::Instant::now();
    let mut told = false;
    loop {
        // Non-blocking: ENXIO when no process has the pipe open for reading.
        match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(p) {
            Ok(f) => {
                set_blocking(&f)?;
                return Ok(f);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if !told && started.elapsed() >= std::time::Duration::from_secs(1) {
                    eprintln!("note: waiting for a reader of the named pipe {} (Ctrl-C stops)", p.display());
                    told = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Clears `O_NONBLOCK` of an open file: it was only needed to open it without waiting.
pub(crate) fn set_blocking(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns, reading and setting its status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Checks, before any work, that `path` can be written: its directory exists and it is not a
/// directory. Commands call it on their output paths first, so a long computation is not lost
/// to a typo.
pub fn check_writable(path: &Path) -> Result<()> {
    match target(path)? {
        Target::Regular(p, _, _) => {
            let dir = parent_dir(&p);
            if !dir.is_dir() {
                bail!("cannot write {}: {} is not a directory", path.display(), dir.display());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `-` means standard output for a file; a folder of several files cannot be it (before, a
/// folder named `-` was made).
fn not_stdout(dir: &Path) -> Result<()> {
    if dir.as_os_str() == "-" {
        bail!("-o -: this command writes several files into a folder, which cannot be standard output; name a folder");
    }
    Ok(())
}

/// Checks, before any work, that `dir` can be a folder of outputs: it is a folder, or it can be
/// created (its nearest existing ancestor is a folder this process may write into).
pub fn check_folder(dir: &Path) -> Result<()> {
    not_stdout(dir)?;
    let name = dir.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(std::io::Error::from(std::io::ErrorKind::NotADirectory))
                .with_context(|| format!("cannot write into {name}: it is a file, not a folder"))
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("cannot write into {name}"))
        }
        Err(_) => {}
    }
    let mut up = dir.parent();
    while let Some(d) = up.filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => {
                use std::os::unix::ffi::OsStrExt;
                let c = std::ffi::CString::new(d.as_os_str().as_bytes()).context("a path with a NUL byte")?;
                // SAFETY: access(2) reads the NUL-terminated path and nothing else.
                if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                    return Err(std::io::Error::last_os_error())
                        .with_context(|| format!("cannot create {name} in {}", d.display()));
                }
                return Ok(());
            }
            Ok(_) => {
                return Err(std::io::Error::from(std::io::ErrorKind::NotADirectory))
                    .with_context(|| format!("cannot create {name}: {} is a file, not a folder", d.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => up = d.parent(),
            Err(e) => return Err(e).with_context(|| format!("cannot create {name}")),
        }
    }
    Ok(())
}

fn parent_dir(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `path` through `fill` under the rules of this module; on any error a regular target is
/// left untouched and no temporary file remains.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let name = path.display();
    match target(path)? {
        Target::Stdout => {
            let out = std::io::stdout();
            let mut w = BufWriter::new(out.lock());
            fill(&mut w)?;
            w.flush().context("cannot write to standard output")
        }
        Target::Special(p) => {
            let f = open_special(&p).with_context(|| format!("cannot open {name}"))?;
            let mut w = BufWriter::new(f);
            fill(&mut w)?;
            w.flush().with_context(|| format!("cannot write {name}"))
        }
        Target::Regular(p, mode, owner) => {
            let dir = parent_dir(&p);
            let tmp = make_pending(|| tempfile::Builder::new().prefix(".neurobits-").tempfile_in(dir), |t| t.path())
                .with_context(|| format!("cannot create a file in {}", dir.display()))?;
            let result = (|| {
                {
                    let mut w = BufWriter::new(tmp.as_file());
                    fill(&mut w)?;
                    w.flush().with_context(|| format!("cannot write {name}"))?;
                }
                keep_owner(tmp.as_file(), owner);
                tmp.as_file()
                    .set_permissions(std::fs::Permissions::from_mode(mode))
                    .with_context(|| format!("cannot set the mode of {name}"))?;
                tmp.as_file().sync_all().with_context(|| format!("cannot write {name}"))?;
                Ok(())
            })();
            let tmp_path = tmp.path().to_path_buf();
            let done = result.and_then(|()| {
                // On failure the error owns the temporary file: drop it here, so that it is
                // removed before `main` exits (exit does not run destructors).
                tmp.persist(&p).map(|_| written()).map_err(|e| e.error).with_context(|| format!("cannot write {name}"))
            });
            done_pending(&tmp_path);
            done
        }
    }
}

/// [`write_atomic`] of a string.
pub fn write_string(path: &Path, s: &str) -> Result<()> {
    write_atomic(path, |w| Ok(w.write_all(s.as_bytes())?))
}

/// Gives `f` the owner and group of the file it replaces, where the process may (root, or the
/// same owner); otherwise the replacement is the writer's, as with any new file.
fn keep_owner(f: &std::fs::File, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        let _ = std::os::unix::fs::fchown(f, Some(uid), Some(gid));
    }
}

/// Writes several files into directory `dir` (created if missing) so that they appear together or
/// not at all: each is written into a fresh temporary directory beside `dir` by `fill` (given
/// that directory), then all are moved into `dir` under an exclusive lock on `dir` (a second run
/// moving its own set waits, so the set left is one run's). Each member follows the rules of
/// [`write_atomic`]: a link is written through, an existing file keeps its mode and owner, a
/// read-only one is refused before anything moves. Files of `dir` not in `names` are untouched.
pub fn write_set(dir: &Path, names: &[&str], fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    not_stdout(dir)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Refuse unwritable or odd members before the work, not after it.
    for n in names {
        check_writable(&dir.join(n))?;
    }
    let tmp = make_pending(|| tempfile::Builder::new().prefix(".neurobits-").tempdir_in(parent_dir(dir)), |t| t.path())
        .with_context(|| format!("cannot create a directory beside {}", dir.display()))?;
    let result = fill(tmp.path()).and_then(|()| {
        for n in names {
            if !tmp.path().join(n).is_file() {
                bail!("internal error: {n} was not written");
            }
        }
        let lock = std::fs::File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this process holds open; released when `lock` closes.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error()).with_context(|| format!("cannot lock {}", dir.display()));
        }
        // Every member's destination first (all or none), then the renames: each is atomic,
        // within one file system, and all inputs are complete; a signal waits for the last.
        let _commit = COMMIT.lock().unwrap_or_else(|e| e.into_inner());
        let mut moves = Vec::with_capacity(names.len());
        for n in names {
            let (from, to) = (tmp.path().join(n), dir.join(n));
            moves.push((from, to.clone(), target(&to)?));
        }
        for (from, to, t) in moves {
            let shown = to.display();
            match t {
                Target::Regular(real, mode, owner) => {
                    let f = std::fs::File::open(&from).with_context(|| format!("cannot write {shown}"))?;
                    keep_owner(&f, owner);
                    f.set_permissions(std::fs::Permissions::from_mode(mode))
                        .with_context(|| format!("cannot set the mode of {shown}"))?;
                    std::fs::rename(&from, &real).with_context(|| format!("cannot write {shown}"))?;
                }
                _ => {
                    let data = std::fs::read(&from).with_context(|| format!("cannot write {shown}"))?;
                    write_atomic(&to, |w| Ok(w.write_all(&data)?))?;
                }
            }
        }
        written();
        Ok(())
    });
    done_pending(tmp.path());
    result
}
