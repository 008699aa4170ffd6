//! The part of a hotkey that Windows and macOS share: the OS watches the key on a thread of
//! its own (a hotkey belongs to the thread that registers it; an event tap runs on its
//! thread's run loop), which says once whether it could start and then passes each press on.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::hotkey::HotkeyError;

/// The presses a hotkey thread passes on.
#[derive(Debug)]
pub struct Presses(Receiver<()>);

impl Presses {
    /// Starts `watch` on a thread named `hotkey`, gives it where to say whether it started
    /// and where to send each press, and returns once it has said: its `Err` is returned.
    pub fn spawn<F>(watch: F) -> Result<Presses, HotkeyError>
    where
        F: FnOnce(SyncSender<Result<(), HotkeyError>>, SyncSender<()>) + Send + 'static,
    {
        let (started, told) = sync_channel::<Result<(), HotkeyError>>(1);
        // A few presses may wait unread while a dictation starts or stops.
        let (press, presses) = sync_channel::<()>(4);
        std::thread::Builder::new()
            .name("hotkey".into())
            .spawn(move || watch(started, press))
            .map_err(|e| HotkeyError::Failed(format!("starting the hotkey thread: {e}")))?;
        told.recv().map_err(|_| {
            HotkeyError::Failed("the hotkey thread ended before it started watching".into())
        })??;
        Ok(Presses(presses))
    }

    /// Blocks until the next press.
    pub fn next(&self) -> Result<(), HotkeyError> {
        self.0
            .recv()
            .map_err(|_| HotkeyError::Ended("the hotkey stopped listening".into()))
    }
}
