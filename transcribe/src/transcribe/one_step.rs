//! Stops whisper.cpp after the first 30 s step of a call. `whisper_full` goes on through
//! its input in steps of at most 30 s, each starting at the last timestamp whisper wrote;
//! on a window that whisper ends early that is a second encoder run for a few seconds. With
//! one step per call, yazses decides where the next step starts, and gives it the audio
//! after the window too (`pass.rs`).
//!
//! whisper-rs has no safe form of the encoder callback, so this module holds the crate's
//! only unsafe code: a C callback reading a counter through the pointer it is handed.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use whisper_rs::FullParams;
use whisper_rs_sys::{whisper_context, whisper_state};

/// Lets one encoder run through per whisper call.
#[derive(Default)]
pub(crate) struct OneStep {
    /// Encoder runs whisper asked to start during the call.
    starts: Box<AtomicUsize>,
}

impl OneStep {
    /// Sets `params`' encoder callback. `params` must not be used after `self` is dropped:
    /// take `self` by reference only while the whisper call with `params` runs.
    pub(crate) fn arm(&self, params: &mut FullParams<'_, '_>) {
        let starts: *const AtomicUsize = &*self.starts;
        // SAFETY: whisper.cpp calls `first_only` with this pointer only from inside
        // `whisper_full`; the caller keeps `self` (and so the boxed counter, whose address
        // does not move with `self`) alive until that call has returned.
        unsafe {
            params.set_start_encoder_callback(Some(first_only));
            params.set_start_encoder_callback_user_data(starts.cast_mut().cast::<c_void>());
        }
        crate::cancellation::cancelling(false);
    }

    /// How many encoder runs whisper asked for in the call (the first allowed, the rest
    /// refused).
    pub(crate) fn asked(&self) -> usize {
        self.starts.load(Ordering::Relaxed)
    }
}

impl Drop for OneStep {
    fn drop(&mut self) {
        crate::cancellation::cancelling(false);
    }
}

/// whisper.cpp's `encoder_begin_callback`: `true` (go on) for the first encoder run of a
/// call, `false` (stop, keeping the segments so far) after.
unsafe extern "C" fn first_only(
    _ctx: *mut whisper_context,
    _state: *mut whisper_state,
    starts: *mut c_void,
) -> bool {
    // SAFETY: `starts` is the counter `OneStep::arm` set, alive for the whole call.
    let starts = unsafe { &*starts.cast::<AtomicUsize>() };
    let first = starts.fetch_add(1, Ordering::Relaxed) == 0;
    if !first {
        // whisper.cpp logs the stop it was asked for as an error; it is not one.
        crate::cancellation::cancelling(true);
    }
    first
}
