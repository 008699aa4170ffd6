//! A lane of whisper workers: one long-lived thread per place of a [`Gate`]. A call waits
//! for a place, then its work runs on that place's own thread. Keeping the work on a few
//! threads is what keeps the memory bounded after the calls, not only during them: the C
//! allocator keeps freed memory per thread, so whisper states made and freed on a new
//! blocking thread each call piled up (eight calls one after another left 740 MB where
//! one call needs 200).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, mpsc};

use super::gate::{Gate, Place, Waiting};
use super::{Model, TranscribeError};

type Job = Box<dyn FnOnce(&Model) + Send>;

/// Worker threads sharing one model, behind a gate.
pub(crate) struct Lane {
    gate: Gate,
    workers: Vec<mpsc::Sender<Job>>,
}

impl Lane {
    /// `places` workers for `model`, their threads named after `name`.
    pub(crate) fn new(model: &Arc<Model>, places: usize, name: &str) -> Lane {
        let workers = (0..places.max(1))
            .filter_map(|i| {
                let (tx, rx) = mpsc::channel::<Job>();
                let model = model.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("yazses-{name}-{i}"))
                    .spawn(move || {
                        // Ends when the lane (its sender) is dropped.
                        for job in rx {
                            // A job that panics loses its own answer (its caller is told)
                            // but not the worker.
                            let _ = panic::catch_unwind(AssertUnwindSafe(|| job(&model)));
                        }
                    });
                match spawned {
                    Ok(_) => Some(tx),
                    Err(e) => {
                        tracing::warn!(error = %e, "a transcription worker could not start");
                        None
                    }
                }
            })
            .collect::<Vec<_>>();
        Lane {
            gate: Gate::new(workers.len()),
            workers,
        }
    }

    /// How many places.
    pub(crate) fn places(&self) -> usize {
        self.workers.len()
    }

    /// Waits for a place; `None` if cancelled while waiting.
    pub(crate) fn enter(
        &self,
        cancel: Option<&AtomicBool>,
        on_wait: impl FnMut(Waiting),
    ) -> Option<Place<'_>> {
        self.gate.enter(cancel, on_wait)
    }

    /// Runs `job` on the worker of `place` and waits for its result.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        place: Place<'_>,
        job: impl FnOnce(&Model) -> T + Send + 'static,
    ) -> Result<T, TranscribeError> {
        let stopped = || TranscribeError::Whisper("the transcription worker stopped".into());
        let worker = self.workers.get(place.index).ok_or_else(stopped)?;
        let (tx, rx) = mpsc::sync_channel(1);
        worker
            .send(Box::new(move |model| {
                let _ = tx.send(job(model));
            }))
            .map_err(|_| stopped())?;
        let result = rx.recv().map_err(|_| stopped());
        drop(place);
        result
    }
}
