//! The cross-process coordinator: every yazses process of one user shares one
//! microphone, one interrupt budget and one dictation hold, through files in a per-user
//! runtime directory. No daemon, no socket, no network: kernel file locks that die with
//! their holders, and small records written atomically beside them.
//!
//! - [`RuntimeDir`]: where the files live, and the checks that it is the user's own.
//! - the microphone lease ([`Coordinator::acquire`]): FIFO queue, holder record, holds.
//! - [`Ledger`]: the interrupt budget.
//! - [`Status`]: what `yazses status` prints.

mod lease;
mod ledger;
mod runtime_dir;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use lease::{Holder, Lease, Purpose, Request, Waiting};
pub use ledger::{BudgetStatus, Ledger, Reservation, WINDOW_MS};
pub use runtime_dir::RuntimeDir;

/// Why the coordinator refused or failed. Each says what happened and what to do.
#[derive(Debug, thiserror::Error)]
pub enum CoordError {
    /// The runtime directory cannot be used.
    #[error("the runtime directory {} cannot be used: {why}", path.display())]
    RuntimeDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A file in the runtime directory could not be used.
    #[error("{} could not be used: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A hold (a dictation) has the microphone.
    #[error("the user is dictating ({0})")]
    Held(Holder),
    /// The queue wait ran out.
    #[error("the microphone stayed busy for {} s{}", waited.as_secs(), holder.as_ref().map(|h| format!(" (held by {h})")).unwrap_or_default())]
    QueueTimeout {
        /// How long the request waited.
        waited: Duration,
        /// Who held the microphone at the end.
        holder: Option<Holder>,
    },
    /// The caller stopped waiting.
    #[error("the wait for the microphone was cancelled")]
    Cancelled,
    /// The budget is spent.
    #[error(
        "{used} answers were heard in the past hour; the next is allowed in {retry_in_min} min"
    )]
    Budget {
        /// Charged in the window.
        used: usize,
        /// Minutes until the oldest charge leaves the window.
        retry_in_min: u64,
    },
    /// The ledger cannot be trusted.
    #[error("the interrupt budget ledger {} cannot be trusted: {why}; no spoken questions are allowed until it is fixed (delete it to start the hour's count afresh)", path.display())]
    Ledger {
        /// The ledger file.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

fn io_error(path: &Path, source: std::io::Error) -> CoordError {
    CoordError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whether a process with `pid` exists.
fn alive(pid: u32) -> bool {
    crate::platform::process_alive(pid)
}

/// The coordinator of one process: the runtime dir and this process's view of the ledger.
#[derive(Debug)]
pub struct Coordinator {
    dir: RuntimeDir,
    ledger: Ledger,
}

/// What `yazses status --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    /// Who holds the microphone; `null` when it is free.
    pub mic: Option<Holder>,
    /// Who waits for it, in serving order.
    pub queue: Vec<Holder>,
    /// The interrupt budget, or why the ledger cannot be trusted.
    pub budget: BudgetView,
    /// The runtime directory.
    pub runtime_dir: PathBuf,
}

/// The budget in [`Status`]: the figures, or why there are none.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum BudgetView {
    /// `spent`, `limit`, `resets_at`.
    Known(BudgetStatus),
    /// The ledger cannot be trusted, so every question is refused.
    Untrusted {
        /// Why, naming the file.
        error: String,
    },
}

impl Coordinator {
    /// The coordinator over `dir`.
    pub fn new(dir: RuntimeDir) -> Coordinator {
        Coordinator {
            ledger: Ledger::new(&dir),
            dir,
        }
    }

    /// The coordinator over the runtime dir the environment names.
    pub fn from_env() -> Result<Coordinator, CoordError> {
        Ok(Coordinator::new(RuntimeDir::from_env()?))
    }

    /// The runtime directory.
    pub fn dir(&self) -> &RuntimeDir {
        &self.dir
    }

    /// The interrupt budget ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Waits in the queue for the microphone. `on_wait` hears who holds it whenever that,
    /// or the number of waiters ahead, changes. A request that is not a hold is refused at
    /// once while a hold has the microphone.
    pub fn acquire(
        &self,
        request: &Request<'_>,
        on_wait: impl FnMut(&Waiting),
    ) -> Result<Lease, CoordError> {
        lease::Mic::new(&self.dir).acquire(request, on_wait)
    }

    /// Who holds the microphone now.
    pub fn holder(&self) -> Result<Option<Holder>, CoordError> {
        lease::Mic::new(&self.dir).holder()
    }

    /// Another process that holds the microphone or waits for it, if any: a dictation that
    /// keeps the dongle's port open between presses lets it go for them.
    pub fn wanted_elsewhere(&self) -> Result<Option<Holder>, CoordError> {
        let me = std::process::id();
        let mic = lease::Mic::new(&self.dir);
        if let Some(holder) = mic.holder()?.filter(|h| h.pid != me) {
            return Ok(Some(holder));
        }
        Ok(mic.queue()?.into_iter().find(|h| h.pid != me))
    }

    /// The whole picture, for `yazses status`; `limit` is this config's hourly budget.
    pub fn status(&self, limit: u32) -> Result<Status, CoordError> {
        let mic = lease::Mic::new(&self.dir);
        Ok(Status {
            mic: mic.holder()?,
            queue: mic.queue()?,
            budget: match self.ledger.status(limit, unix_ms()) {
                Ok(b) => BudgetView::Known(b),
                Err(e) => BudgetView::Untrusted {
                    error: e.to_string(),
                },
            },
            runtime_dir: self.dir.path().to_owned(),
        })
    }
}

/// Takes the lease in `dir` at once for `purpose` (tests of the layers above stand in
/// for another process with it).
#[cfg(test)]
pub(crate) fn take_now(dir: &Path, purpose: Purpose, caller: &str) -> Lease {
    let no = std::sync::atomic::AtomicBool::new(false);
    let request = Request {
        purpose,
        caller,
        queue_timeout: Duration::from_secs(1),
        cancel: &no,
    };
    Coordinator::new(RuntimeDir::at(dir).expect("a usable runtime dir"))
        .acquire(&request, |_| {})
        .expect("the microphone is free")
}

#[cfg(test)]
mod tests;
