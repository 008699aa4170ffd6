//! Whether this thread's whisper run is being stopped on purpose: whisper.cpp reports the
//! abort it was asked for as an error ("failed to encode"), which it is not, and the log
//! (the host's `logging`) drops those lines while the flag is set.

std::thread_local! {
    /// Set on a whisper worker while its run is being cancelled.
    static CANCELLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread's whisper run as being stopped on purpose (or not), cancelled or at
/// its time limit.
pub fn cancelling(on: bool) {
    CANCELLING.with(|c| c.set(on));
}

/// Whether this thread's whisper run is being stopped on purpose.
pub fn is_cancelling() -> bool {
    CANCELLING.with(std::cell::Cell::get)
}
