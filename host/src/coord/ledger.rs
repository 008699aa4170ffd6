//! The interrupt budget: one ledger of heard answers for every process of the user, kept
//! in the runtime dir across restarts (`budget.json`, changed under `budget.lock`,
//! replaced atomically).
//!
//! A charge is reserved when the microphone is taken for a question, before anything is
//! spoken, and settled after the transcript: kept when an answer was heard, refunded when
//! not. Reserving first means two processes served one after the other cannot both pass
//! the check for the last answer of the hour. A reservation whose process died stays
//! charged: the user was interrupted.
//!
//! When in doubt the ledger errs on fewer interruptions: a ledger that cannot be read,
//! does not parse, belongs to someone else or holds a charge dated in the future refuses
//! every question, with a message naming the file. Each process also remembers its own
//! charges and writes them back, so deleting the file does not reset what live servers
//! have charged.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{CoordError, RuntimeDir, io_error, lease::write_atomically};

/// The window the budget rolls over.
pub const WINDOW_MS: u64 = 3_600_000;

/// How far in the future a charge may be dated before the ledger is distrusted (clocks
/// of one machine agree; this allows for a small step of the system clock).
const FUTURE_SLACK_MS: u64 = 60_000;

/// One heard (or reserved) answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Charge {
    /// Unique: the process and a counter.
    id: String,
    /// When, in milliseconds since the Unix epoch.
    at: u64,
    /// Reserved, not yet settled.
    #[serde(default)]
    pending: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LedgerFile {
    version: u32,
    charges: Vec<Charge>,
}

/// The budget as `yazses status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BudgetStatus {
    /// Answers charged (or reserved) in the past hour.
    pub spent: usize,
    /// Answers allowed per hour (this process's `[mcp] ask_human_per_hour`).
    pub limit: u32,
    /// When the oldest charge leaves the window, in milliseconds since the Unix epoch;
    /// `null` when nothing is charged.
    pub resets_at: Option<u64>,
    /// When this process may ask again, in milliseconds since the Unix epoch; `null` when
    /// it may now. Later than `resets_at` when processes with a higher limit charged more
    /// than this one allows: then several charges must leave the hour first.
    pub allowed_again_at: Option<u64>,
}

impl BudgetStatus {
    /// The budget `charges` leave at `now` for a process allowing `limit` per hour.
    fn of(charges: &[Charge], limit: u32, now: u64) -> BudgetStatus {
        let mut ends: Vec<u64> = charges
            .iter()
            .map(|c| c.at + WINDOW_MS)
            .filter(|&end| end > now)
            .collect();
        ends.sort_unstable();
        let spent = ends.len();
        // Below the limit once `spent - limit + 1` charges have left the hour.
        let allowed_again_at = spent
            .checked_sub(limit as usize)
            .and_then(|over| ends.get(over).copied());
        BudgetStatus {
            spent,
            limit,
            resets_at: ends.first().copied(),
            allowed_again_at,
        }
    }

    /// `Err` when the budget is spent, with the minutes until the next answer is allowed.
    pub fn check(&self, now: u64) -> Result<(), CoordError> {
        if self.spent < self.limit as usize {
            return Ok(());
        }
        let left = self.allowed_again_at.unwrap_or(now).saturating_sub(now);
        Err(CoordError::Budget {
            used: self.spent,
            retry_in_min: left.div_ceil(60_000).max(1),
        })
    }
}

/// A reserved charge, to settle with [`Ledger::settle`].
#[derive(Debug, PartialEq, Eq)]
/// One left unsettled stays charged (the user was interrupted).
#[must_use = "a reservation is settled as heard or refunded"]
pub struct Reservation(String);

/// The shared ledger, as seen from this process.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    lock: PathBuf,
    mine: Mutex<Vec<Charge>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Ledger {
    pub(super) fn new(dir: &RuntimeDir) -> Ledger {
        Ledger {
            path: dir.join("budget.json"),
            lock: dir.join("budget.lock"),
            mine: Mutex::new(Vec::new()),
            next_id: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The ledger file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Reserves one answer at `now` (Unix ms) if fewer than `limit` are charged in the
    /// past hour.
    pub fn reserve(&self, limit: u32, now: u64) -> Result<Reservation, CoordError> {
        self.update(now, |charges| {
            BudgetStatus::of(charges, limit, now).check(now)?;
            let n = self
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let id = format!("{}-{}-{n}", std::process::id(), now);
            charges.push(Charge {
                id: id.clone(),
                at: now,
                pending: true,
            });
            Ok(Reservation(id))
        })
    }

    /// Keeps the reserved charge when `heard`, refunds it otherwise.
    pub fn settle(
        &self,
        reservation: &Reservation,
        heard: bool,
        now: u64,
    ) -> Result<(), CoordError> {
        self.update(now, |charges| {
            if heard {
                for c in charges.iter_mut().filter(|c| c.id == reservation.0) {
                    c.pending = false;
                }
            } else {
                charges.retain(|c| c.id != reservation.0);
            }
            Ok(())
        })
    }

    /// The budget at `now` for a process allowing `limit` per hour.
    pub fn status(&self, limit: u32, now: u64) -> Result<BudgetStatus, CoordError> {
        Ok(BudgetStatus::of(&self.read_checked(now)?, limit, now))
    }

    /// Reads the ledger under its lock, applies `change` to the charges of the past hour
    /// (with this process's own merged in), and writes the result back atomically.
    fn update<T>(
        &self,
        now: u64,
        change: impl FnOnce(&mut Vec<Charge>) -> Result<T, CoordError>,
    ) -> Result<T, CoordError> {
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.lock)
            .map_err(|e| io_error(&self.lock, e))?;
        lock.lock().map_err(|e| io_error(&self.lock, e))?;
        let mut mine = self.mine.lock().unwrap_or_else(|p| p.into_inner());
        let mut charges = self.read_checked(now)?;
        for c in mine.iter() {
            if !charges.iter().any(|o| o.id == c.id) {
                charges.push(c.clone());
            }
        }
        charges.retain(|c| c.at + WINDOW_MS > now);
        // Written back even when the change is refused, so a deleted file is restored.
        let out = change(&mut charges);
        let file = LedgerFile {
            version: 1,
            charges: charges.clone(),
        };
        write_atomically(
            &self.path,
            &serde_json::to_vec_pretty(&file).expect("the ledger serialises"),
        )?;
        // Remember our own (ids start with our pid), to write back if the file is lost.
        let own_prefix = format!("{}-", std::process::id());
        *mine = charges
            .into_iter()
            .filter(|c| c.id.starts_with(&own_prefix))
            .collect();
        out
    }

    /// The charges on file, or why the file is not to be trusted.
    fn read_checked(&self, now: u64) -> Result<Vec<Charge>, CoordError> {
        let damaged = |why: String| CoordError::Ledger {
            path: self.path.clone(),
            why,
        };
        let meta = match std::fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(damaged(format!("it cannot be examined ({e})"))),
            Ok(m) => m,
        };
        if !meta.is_file() {
            return Err(damaged("it is not a regular file".into()));
        }
        if let Some(why) = crate::platform::not_mine(&meta) {
            return Err(damaged(why));
        }
        if meta.len() > 1 << 20 {
            return Err(damaged(format!("it is {} bytes, far too big", meta.len())));
        }
        let bytes =
            std::fs::read(&self.path).map_err(|e| damaged(format!("it cannot be read ({e})")))?;
        let file: LedgerFile = serde_json::from_slice(&bytes)
            .map_err(|e| damaged(format!("it does not parse ({e})")))?;
        if file.version != 1 {
            return Err(damaged(format!("it has version {}, not 1", file.version)));
        }
        if let Some(c) = file.charges.iter().find(|c| c.at > now + FUTURE_SLACK_MS) {
            return Err(damaged(format!(
                "a charge is dated {} s in the future (the clock went back, or the file was edited)",
                (c.at - now) / 1000
            )));
        }
        Ok(file.charges)
    }
}
