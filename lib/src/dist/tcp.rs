//! The TCP group: a star of connections to rank 0, which listens at the rendezvous address;
//! the other ranks connect (retrying until rank 0 is up or the deadline passes) and introduce
//! themselves (magic, rank, size). Messages are frames: a little-endian `u64` length, then the
//! bytes. Every read and write has the group's deadline.

use super::{Collectives, World};
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const HELLO: &[u8; 8] = b"NBDIST1\n";
/// Rank 0's answer to a connection that is not one of its job's ranks.
const REFUSED: &[u8; 8] = b"NBDISTNO";
/// A rank's introduction: magic, rank (`u32`), size (`u32`), job key (`u64`).
const HELLO_LEN: usize = 24;

/// The processes of one job, connected to rank 0.
#[derive(Debug)]
pub struct Group {
    world: World,
    /// At rank 0: the connection to each rank `1..size` (index `rank − 1`); elsewhere: the one
    /// connection to rank 0.
    links: Vec<TcpStream>,
    timeout: Duration,
}

/// One line naming the peer and what happened.
fn lost(peer: &str, e: std::io::Error, timeout: Duration) -> Error {
    use std::io::ErrorKind::*;
    let error = match e.kind() {
        WouldBlock | TimedOut => std::io::Error::new(
            TimedOut,
            format!("no answer within {} s (NEUROBITS_DIST_TIMEOUT)", super::secs(timeout)),
        ),
        // Not UnexpectedEof's kind, which the CLI counts as malformed input (exit 2): a peer
        // that is gone is a failure of the run (exit 1).
        UnexpectedEof | ConnectionReset | BrokenPipe | ConnectionAborted => {
            std::io::Error::new(ConnectionAborted, "connection lost (the process exited or failed)")
        }
        _ => e,
    };
    Error::Io { name: peer.to_string(), error }
}

impl Group {
    /// A job of one process: every collective returns at once.
    pub fn single() -> Group {
        Group { world: World::SINGLE, links: Vec::new(), timeout: Duration::from_secs(1) }
    }

    /// Joins the job: rank 0 listens at `master` (`host:port`), the others connect to it.
    pub fn join(world: World, master: &str, timeout: Duration) -> Result<Group> {
        if world.size == 1 {
            return Ok(Group::single());
        }
        if world.is_root() {
            let l = TcpListener::bind(master).map_err(|e| Error::Io {
                name: format!("rank 0 listening at {master} (set NEUROBITS_MASTER or MASTER_PORT)"),
                error: e,
            })?;
            Group::root(l, world.size, world.job, timeout)
        } else {
            Group::peer(world, master, timeout)
        }
    }

    /// Rank 0 of `size` in job `job` (see [`World::job`]) on a bound listener: waits for every
    /// other rank to connect. A connection that is not a rank of this job (another job's, a
    /// port scanner's) is told so and dropped, and the wait goes on.
    pub fn root(listener: TcpListener, size: usize, job: u64, timeout: Duration) -> Result<Group> {
        let world = World { rank: 0, size, local_rank: 0, launcher: "tcp", job };
        let at = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
        let name = format!("rank 0 at {at}");
        listener.set_nonblocking(true).map_err(|e| lost(&name, e, timeout))?;
        let deadline = Instant::now() + timeout;
        let mut links: Vec<Option<TcpStream>> = (1..size).map(|_| None).collect();
        let mut missing = size - 1;
        while missing > 0 {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).map_err(|e| lost(&name, e, timeout))?;
                    configure(&s, timeout.min(Duration::from_secs(10))).map_err(|e| lost(&name, e, timeout))?;
                    let mut hello = [0u8; HELLO_LEN];
                    if s.read_exact(&mut hello).is_err() {
                        continue; // said nothing that a rank says
                    }
                    let word = |at: usize| u32::from_le_bytes(hello[at..at + 4].try_into().expect("4")) as usize;
                    let (r, n) = (word(8), word(12));
                    let j = u64::from_le_bytes(hello[16..24].try_into().expect("8"));
                    let ours = &hello[..8] == HELLO && n == size && j == job && r > 0 && r < size;
                    if !ours || links[r - 1].is_some() {
                        let _ = s.write_all(REFUSED);
                        continue;
                    }
                    configure(&s, timeout).map_err(|e| lost(&name, e, timeout))?;
                    s.write_all(HELLO).map_err(|e| lost(&format!("rank {r}"), e, timeout))?;
                    links[r - 1] = Some(s);
                    missing -= 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let absent: Vec<String> =
                            (1..size).filter(|&r| links[r - 1].is_none()).map(|r| r.to_string()).collect();
                        return Err(Error::Io {
                            name: name.clone(),
                            error: std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                format!(
                                    "rank(s) {} did not connect within {} s (NEUROBITS_DIST_TIMEOUT)",
                                    absent.join(", "),
                                    super::secs(timeout)
                                ),
                            ),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(lost(&name, e, timeout)),
            }
        }
        Ok(Group { world, links: links.into_iter().map(|l| l.expect("every rank connected")).collect(), timeout })
    }

    /// Rank `world.rank` (≥ 1): connects to rank 0 at `master`, retrying until it listens.
    pub fn peer(world: World, master: &str, timeout: Duration) -> Result<Group> {
        let name = format!("rank 0 at {master}");
        let deadline = Instant::now() + timeout;
        let mut s = loop {
            let addrs = master.to_socket_addrs().map_err(|e| Error::Io { name: name.clone(), error: e })?;
            let (mut got, mut err) = (None, None);
            for a in addrs {
                let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(10));
                match TcpStream::connect_timeout(&a, left.min(Duration::from_secs(5))) {
                    Ok(s) => {
                        got = Some(s);
                        break;
                    }
                    Err(e) => err = Some(e),
                }
            }
            if let Some(s) = got {
                break s;
            }
            if Instant::now() >= deadline {
                let why = err.map_or("no address".into(), |e| e.to_string());
                return Err(Error::Io {
                    name,
                    error: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("not reachable within {} s ({why})", super::secs(timeout)),
                    ),
                });
            }
            // Rank 0 may not listen yet: launchers start ranks in no particular order.
            std::thread::sleep(Duration::from_millis(20));
        };
        configure(&s, timeout).map_err(|e| lost(&name, e, timeout))?;
        let mut hello = HELLO.to_vec();
        hello.extend_from_slice(&(world.rank as u32).to_le_bytes());
        hello.extend_from_slice(&(world.size as u32).to_le_bytes());
        hello.extend_from_slice(&world.job.to_le_bytes());
        s.write_all(&hello).map_err(|e| lost(&name, e, timeout))?;
        let mut ack = [0u8; 8];
        s.read_exact(&mut ack).map_err(|e| lost(&name, e, timeout))?;
        if &ack == REFUSED {
            return Err(Error::input(
                &name,
                format!(
                    "rank 0 there belongs to another job, or rank {} of {} is taken (set NEUROBITS_MASTER or MASTER_PORT per job)",
                    world.rank, world.size
                ),
            ));
        }
        if &ack != HELLO {
            return Err(Error::input(&name, "answered with something other than a neurobits rank 0"));
        }
        Ok(Group { world, links: vec![s], timeout })
    }

    fn peer_name(&self, i: usize) -> String {
        if self.world.is_root() {
            format!("rank {}", i + 1)
        } else {
            "rank 0".into()
        }
    }

    fn send(&mut self, i: usize, data: &[u8]) -> Result<()> {
        let (name, t) = (self.peer_name(i), self.timeout);
        let s = &mut self.links[i];
        s.write_all(&(data.len() as u64).to_le_bytes()).and_then(|()| s.write_all(data)).map_err(|e| lost(&name, e, t))
    }

    fn recv(&mut self, i: usize) -> Result<Vec<u8>> {
        let (name, t) = (self.peer_name(i), self.timeout);
        let s = &mut self.links[i];
        let mut len = [0u8; 8];
        s.read_exact(&mut len).map_err(|e| lost(&name, e, t))?;
        let n = u64::from_le_bytes(len);
        // A frame is what a rank of this job sent; a length beyond memory is a stray connection.
        crate::io::memory::ensure_fits(&format!("a message from {name}"), n as u128)?;
        let mut b = vec![0u8; n as usize];
        s.read_exact(&mut b).map_err(|e| lost(&name, e, t))?;
        Ok(b)
    }
}

fn configure(s: &TcpStream, timeout: Duration) -> std::io::Result<()> {
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))
}

impl Collectives for Group {
    fn world(&self) -> &World {
        &self.world
    }

    fn gather(&mut self, mine: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        if self.world.size == 1 {
            return Ok(Some(vec![mine.to_vec()]));
        }
        if !self.world.is_root() {
            self.send(0, mine)?;
            return Ok(None);
        }
        let mut all = vec![mine.to_vec()];
        for i in 0..self.links.len() {
            all.push(self.recv(i)?);
        }
        Ok(Some(all))
    }

    fn broadcast(&mut self, data: &mut Vec<u8>) -> Result<()> {
        if self.world.size == 1 {
            return Ok(());
        }
        if self.world.is_root() {
            for i in 0..self.links.len() {
                self.send(i, data)?;
            }
        } else {
            *data = self.recv(0)?;
        }
        Ok(())
    }
}
