//! Resume journals of long experiments (`partial.jsonl` in the output folder): a header naming
//! the run, then one finished point per line with a SHA-256 over the run and the point, so that
//! a rerun of the same run skips the points already done and trusts nothing else.
//!
//! * A file at that path that is not a journal of ours (a user's own `partial.jsonl`), a
//!   symbolic link or anything but a regular file is refused, never overwritten or followed.
//! * A journal of another run (other sizes, seed, rules …) is started afresh.
//! * A line whose checksum does not match (edited, cut short, made up by hand) is dropped, and
//!   the point computed again. The checksum guards against accidents and tampering by hand, not
//!   against someone who recomputes it: the journal is a cache of this program's own results.

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The first line's start: what makes a file a journal of ours.
const MAGIC: &str = "neurobits-journal/1 ";

/// An open journal.
pub struct Journal {
    path: PathBuf,
    key: String,
}

fn sum(key: &str, line: &str) -> String {
    let mut h = Sha256::new();
    h.update(key.as_bytes());
    h.update([0]);
    h.update(line.as_bytes());
    super::hex(&h.finalize())
}

impl Journal {
    /// Opens `dir/partial.jsonl` for the run `key` (one line, no newline): the verified points
    /// of an earlier attempt at the same run, as JSON text, in the order written.
    pub fn open(dir: &Path, key: &str) -> Result<(Journal, Vec<String>)> {
        let path = dir.join("partial.jsonl");
        let shown = path.display();
        if key.contains('\n') {
            bail!("internal error: a journal key with a newline");
        }
        let journal = Journal { path: path.clone(), key: key.to_string() };
        match std::fs::symlink_metadata(&path) {
            Ok(m) if !m.file_type().is_file() => {
                bail!("{shown} is not a neurobits journal (a link or not a regular file): move it away to run here")
            }
            Ok(_) => {
                let text = std::fs::read(&path).with_context(|| format!("cannot read {shown}"))?;
                let text = String::from_utf8_lossy(&text);
                let mut lines = text.lines();
                match lines.next().and_then(|l| l.strip_prefix(MAGIC)) {
                    None => bail!("{shown} exists and is not a neurobits journal: move it away to run here"),
                    Some(k) if k == key => {
                        let points = lines
                            .filter_map(|l| l.split_once(' '))
                            .filter(|(s, point)| *s == sum(key, point))
                            .map(|(_, point)| point.to_string())
                            .collect();
                        Ok((journal, points))
                    }
                    Some(_) => {
                        journal.start(false)?;
                        Ok((journal, Vec::new()))
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                journal.start(true)?;
                Ok((journal, Vec::new()))
            }
            Err(e) => Err(e).with_context(|| format!("cannot read {shown}")),
        }
    }

    /// Writes the header: into a new file (`fresh`, failing if one appeared meanwhile) or over
    /// a journal of another run.
    fn start(&self, fresh: bool) -> Result<()> {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).custom_flags(libc::O_NOFOLLOW);
        if fresh {
            o.create_new(true);
        } else {
            o.truncate(true);
        }
        let mut f = o.open(&self.path).with_context(|| format!("cannot write {}", self.path.display()))?;
        f.write_all(format!("{MAGIC}{}\n", self.key).as_bytes())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Appends one finished point (JSON text on one line).
    pub fn append(&self, point: &str) -> Result<()> {
        if point.contains('\n') {
            bail!("internal error: a journal point with a newline");
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        f.write_all(format!("{} {point}\n", sum(&self.key, point)).as_bytes())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Removes the journal once the results are written.
    pub fn finish(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_verified_points_of_the_same_run_come_back() {
        let d = tempfile::tempdir().unwrap();
        let (j, points) = Journal::open(d.path(), "run a").unwrap();
        assert!(points.is_empty());
        j.append(r#"{"x":1}"#).unwrap();
        j.append(r#"{"x":2}"#).unwrap();
        let p = d.path().join("partial.jsonl");
        // An edited point, a made-up one and a cut line are dropped.
        let text = std::fs::read_to_string(&p).unwrap();
        let edited = text.replace(r#"{"x":2}"#, r#"{"x":3}"#) + "0000 {\"x\":9}\n" + "abc";
        std::fs::write(&p, edited).unwrap();
        let (_, points) = Journal::open(d.path(), "run a").unwrap();
        assert_eq!(points, [r#"{"x":1}"#]);
        // Another run starts afresh.
        let (_, points) = Journal::open(d.path(), "run b").unwrap();
        assert!(points.is_empty());
        assert!(std::fs::read_to_string(&p).unwrap().starts_with("neurobits-journal/1 run b\n"));
    }

    #[test]
    fn a_users_file_or_a_link_is_refused_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("partial.jsonl");
        std::fs::write(&p, "my notes\n").unwrap();
        let e = Journal::open(d.path(), "run").err().unwrap().to_string();
        assert!(e.contains("not a neurobits journal"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "my notes\n");
        std::fs::remove_file(&p).unwrap();
        let target = d.path().join("precious.txt");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, &p).unwrap();
        assert!(Journal::open(d.path(), "run").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
