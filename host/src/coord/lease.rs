//! The microphone lease: one holder at a time across every yazses process of the user,
//! waiters served in arrival order.
//!
//! Files in the runtime dir:
//! - `mic.lock`: the lease itself, an exclusive `flock` the kernel drops when its holder
//!   exits, `kill -9` included. `flock` rather than `fcntl` locks: an `fcntl` lock belongs
//!   to the process, so two threads of one server would not exclude each other, and closing
//!   any descriptor of the file would silently drop it.
//! - `mic.json`: the holder record (pid, purpose, caller, since), written after the lock is
//!   taken and removed before it is let go. It is only trusted while the lock is held and
//!   its pid is alive; a record left by a dead process is ignored.
//! - `queue/`: one ticket per waiter, named so that names sort in serving order (holds
//!   first, then by a sequence number from `queue/seq`), each `flock`ed by its waiter so a
//!   dead waiter's ticket is recognised and removed. Tickets are made, read and removed
//!   under `queue.lock`. Only the waiter at the head of the queue tries the lease, so the
//!   order is arrival, not whoever polls first.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{CoordError, RuntimeDir, io_error, unix_ms};

/// What the microphone is wanted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// An agent's spoken question (`ask_human`).
    AskHuman,
    /// Push-to-talk dictation: a hold, which `ask_human` never queues behind.
    Dictate,
    /// `yazses listen`.
    Listen,
}

impl Purpose {
    /// Whether holding the lease for this purpose refuses `ask_human` outright (other
    /// purposes queue behind it as behind any holder).
    pub fn is_hold(self) -> bool {
        matches!(self, Purpose::Dictate)
    }

    /// The purpose as the tools and `yazses status` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::AskHuman => "ask_human",
            Purpose::Dictate => "dictate",
            Purpose::Listen => "listen",
        }
    }
}

/// Who holds the microphone, or waits for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The process.
    pub pid: u32,
    /// What for.
    pub purpose: Purpose,
    /// The MCP client's name, or the command (`listen`, `dictate`).
    pub caller: String,
    /// Since when, in milliseconds since the Unix epoch.
    pub since: u64,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {} (pid {})",
            self.caller,
            self.purpose.as_str(),
            self.pid
        )
    }
}

/// What a request for the lease waits with.
#[derive(Debug)]
pub struct Request<'a> {
    /// What for.
    pub purpose: Purpose,
    /// Who asks.
    pub caller: &'a str,
    /// The longest to wait in the queue.
    pub queue_timeout: Duration,
    /// Set by the caller to stop waiting.
    pub cancel: &'a AtomicBool,
}

/// How often a waiter looks again. A holder killed with `kill -9` is noticed this soon.
const POLL: Duration = Duration::from_millis(20);

/// The microphone, held until dropped.
#[derive(Debug)]
pub struct Lease {
    lock: File,
    record: PathBuf,
    queued: Duration,
}

impl Lease {
    /// How long the request waited in the queue.
    pub fn queued(&self) -> Duration {
        self.queued
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // The record first, so nobody reads it as the next holder's.
        let _ = std::fs::remove_file(&self.record);
        let _ = self.lock.unlock();
    }
}

/// What a waiter is told while it waits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Who holds the microphone now, when known.
    pub holder: Option<Holder>,
    /// Waiters ahead of this one.
    pub ahead: usize,
}

/// A ticket in the queue, removed when dropped.
struct Ticket {
    path: PathBuf,
    _lock: File,
}

pub(super) struct Mic<'a> {
    dir: &'a RuntimeDir,
}

impl<'a> Mic<'a> {
    pub(super) fn new(dir: &'a RuntimeDir) -> Mic<'a> {
        Mic { dir }
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join("mic.lock")
    }

    fn record_path(&self) -> PathBuf {
        self.dir.join("mic.json")
    }

    fn queue_dir(&self) -> PathBuf {
        self.dir.join("queue")
    }

    /// The current holder: `None` when the microphone is free; a holder with an unknown
    /// record is reported with pid 0 (it is taking the lease right now).
    pub(super) fn holder(&self) -> Result<Option<Holder>, CoordError> {
        let path = self.lock_path();
        let file = open_rw(&path)?;
        match file.try_lock_shared() {
            Ok(()) => return Ok(None),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(io_error(&path, e)),
        }
        drop(file);
        // The holder writes its record just after taking the lock: a reader that comes in
        // between waits a moment for it.
        for _ in 0..20 {
            if let Some(holder) = read_record(&self.record_path()) {
                return Ok(Some(holder));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(Some(Holder {
            pid: 0,
            purpose: Purpose::Listen,
            caller: "unknown".into(),
            since: unix_ms(),
        }))
    }

    /// The live waiters, in serving order.
    pub(super) fn queue(&self) -> Result<Vec<Holder>, CoordError> {
        let _guard = self.queue_guard()?;
        Ok(self
            .live_tickets()?
            .into_iter()
            .filter_map(|p| read_record(&p))
            .collect())
    }

    fn queue_guard(&self) -> Result<File, CoordError> {
        let dir = self.queue_dir();
        if let Err(e) = std::fs::create_dir(&dir)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(io_error(&dir, e));
        }
        let path = self.dir.join("queue.lock");
        let file = open_rw(&path)?;
        file.lock().map_err(|e| io_error(&path, e))?;
        Ok(file)
    }

    /// Ticket paths whose waiters are alive, sorted; dead ones are removed. Call under
    /// the queue guard.
    fn live_tickets(&self) -> Result<Vec<PathBuf>, CoordError> {
        let dir = self.queue_dir();
        let mut tickets = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| io_error(&dir, e))? {
            let path = entry.map_err(|e| io_error(&dir, e))?.path();
            if path.extension().is_none_or(|e| e != "ticket") {
                continue;
            }
            let Ok(file) = OpenOptions::new().read(true).open(&path) else {
                continue;
            };
            // A ticket whose lock can be taken has no waiter left.
            if file.try_lock().is_ok() {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            tickets.push(path);
        }
        tickets.sort();
        Ok(tickets)
    }

    fn take_ticket(&self, holder: &Holder) -> Result<Ticket, CoordError> {
        let _guard = self.queue_guard()?;
        let seq_path = self.queue_dir().join("seq");
        let mut seq_file = open_rw(&seq_path)?;
        let mut text = String::new();
        seq_file
            .read_to_string(&mut text)
            .map_err(|e| io_error(&seq_path, e))?;
        // A damaged counter only affects order among waiters, not safety: start again.
        let seq = text.trim().parse::<u64>().unwrap_or(0) + 1;
        seq_file.set_len(0).map_err(|e| io_error(&seq_path, e))?;
        std::io::Seek::rewind(&mut seq_file).map_err(|e| io_error(&seq_path, e))?;
        seq_file
            .write_all(seq.to_string().as_bytes())
            .map_err(|e| io_error(&seq_path, e))?;
        let class = if holder.purpose.is_hold() { 0 } else { 1 };
        let path = self
            .queue_dir()
            .join(format!("{class}-{seq:020}-{}.ticket", holder.pid));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error(&path, e))?;
        file.lock().map_err(|e| io_error(&path, e))?;
        let json = serde_json::to_vec(holder).expect("a holder serialises");
        file.write_all(&json).map_err(|e| io_error(&path, e))?;
        Ok(Ticket { path, _lock: file })
    }

    fn leave(&self, ticket: Ticket) {
        // Removed under the guard so a reader never sees half a queue; a failure to take
        // the guard still removes the ticket, and the lock dies with the file handle.
        let _guard = self.queue_guard();
        let _ = std::fs::remove_file(&ticket.path);
    }

    /// Waits in the queue for the lease. `on_wait` is told who holds it and how many are
    /// ahead each time that changes.
    pub(super) fn acquire(
        &self,
        request: &Request<'_>,
        mut on_wait: impl FnMut(&Waiting),
    ) -> Result<Lease, CoordError> {
        let started = Instant::now();
        let me = Holder {
            pid: std::process::id(),
            purpose: request.purpose,
            caller: request.caller.to_owned(),
            since: unix_ms(),
        };
        // A hold refuses ask_human at once: it is never queued behind a dictation.
        let refuse_behind_hold = |holder: &Option<Holder>| -> Result<(), CoordError> {
            match holder {
                Some(h) if h.purpose.is_hold() && request.purpose == Purpose::AskHuman => {
                    Err(CoordError::Held(h.clone()))
                }
                _ => Ok(()),
            }
        };
        refuse_behind_hold(&self.holder()?)?;
        let ticket = self.take_ticket(&me)?;
        let lock_path = self.lock_path();
        let mut last: Option<Waiting> = None;
        loop {
            if request.cancel.load(Ordering::SeqCst) {
                self.leave(ticket);
                return Err(CoordError::Cancelled);
            }
            let ahead = {
                let _guard = self.queue_guard()?;
                let live = self.live_tickets()?;
                live.iter().position(|p| *p == ticket.path).unwrap_or(0)
            };
            let holder = self.holder()?;
            if let Err(e) = refuse_behind_hold(&holder) {
                self.leave(ticket);
                return Err(e);
            }
            if ahead == 0 {
                let lock = open_rw(&lock_path)?;
                match lock.try_lock() {
                    Ok(()) => {
                        let record = self.record_path();
                        let mut me = me;
                        me.since = unix_ms();
                        write_atomically(&record, &serde_json::to_vec(&me).expect("serialises"))?;
                        self.leave(ticket);
                        return Ok(Lease {
                            lock,
                            record,
                            queued: started.elapsed(),
                        });
                    }
                    Err(std::fs::TryLockError::WouldBlock) => {}
                    Err(std::fs::TryLockError::Error(e)) => {
                        self.leave(ticket);
                        return Err(io_error(&lock_path, e));
                    }
                }
            }
            if started.elapsed() >= request.queue_timeout {
                self.leave(ticket);
                return Err(CoordError::QueueTimeout {
                    waited: started.elapsed(),
                    holder,
                });
            }
            let now = Waiting { holder, ahead };
            if last.as_ref() != Some(&now) {
                on_wait(&now);
                last = Some(now);
            }
            std::thread::sleep(POLL);
        }
    }
}

fn open_rw(path: &Path) -> Result<File, CoordError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| io_error(path, e))
}

/// A record, if it parses and its process is alive.
fn read_record(path: &Path) -> Option<Holder> {
    let text = std::fs::read(path).ok()?;
    let holder: Holder = serde_json::from_slice(&text).ok()?;
    super::alive(holder.pid).then_some(holder)
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader sees the
/// old content or the new, never half.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CoordError> {
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(path, e)
    })
}
