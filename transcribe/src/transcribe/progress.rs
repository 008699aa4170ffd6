//! Progress of one transcription, told to the caller as whisper and the windows move on,
//! never going backwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Progress;

/// The caller's progress callback, shared by every window's whisper callback.
type Shared = Arc<Mutex<Box<dyn FnMut(Progress) + Send>>>;

/// Reports progress to the caller, never going backwards.
#[derive(Clone)]
pub(super) struct Reporter {
    sink: Shared,
    done_ms: Arc<AtomicU64>,
}

impl Reporter {
    /// A reporter to `progress`, at nothing done yet.
    pub(super) fn new(progress: Box<dyn FnMut(Progress) + Send>) -> Reporter {
        Reporter {
            sink: Arc::new(Mutex::new(progress)),
            done_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Tells the caller `done_ms` of `total_ms`, unless as much was told already.
    pub(super) fn report(&self, done_ms: u64, total_ms: Option<u64>, by_whisper: bool) {
        if self.done_ms.fetch_max(done_ms, Ordering::Relaxed) >= done_ms && done_ms > 0 {
            return;
        }
        let total_ms = total_ms.map(|t| t.max(done_ms));
        if let Ok(mut sink) = self.sink.lock() {
            sink(Progress::Done {
                done_ms,
                total_ms,
                by_whisper,
            });
        }
    }
}
