//! whisper's parameters for one call over a window: decoding strategy, encoder context,
//! prompt, progress and cancellation.

use std::os::raw::c_int;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use whisper_rs::{FullParams, SamplingStrategy};

use super::Options;
use super::progress::Reporter;

/// Audio shorter than this (a file's last window, a short clip, a left-out tail) is
/// encoded over half of whisper's 30 s context: about 10 % less time for base on a
/// 1-minute file, the same words on the held-out files (docs/benchmarks.md). A context
/// fitted to the audio itself is faster still but garbles it: base heard "And ship it on
/// Friday." at the end of one.wav as "The train to the elevator." with 200 positions.
const HALF_CONTEXT_BELOW_MS: u64 = 14_000;
/// Half of whisper's 1500 encoder positions: 15 s.
const HALF_CONTEXT: i32 = 750;

/// whisper's parameters for the audio from `start_ms` to `end_ms` in `language`, prompted
/// with `prompt`.
pub(super) fn params<'a>(
    options: &Options,
    language: &'a str,
    reporter: &Reporter,
    total_ms: Option<u64>,
    (start_ms, end_ms): (u64, u64),
    prompt: &'a [c_int],
) -> FullParams<'a, 'a> {
    let strategy = match options.beam_size {
        0 | 1 => SamplingStrategy::Greedy { best_of: 1 },
        n => SamplingStrategy::BeamSearch {
            beam_size: n.min(16) as i32,
            patience: -1.0,
        },
    };
    let mut params = FullParams::new(strategy);
    params.set_n_threads(super::threads(options.threads));
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_special(false);
    params.set_print_timestamps(false);
    params.set_language(Some(language));
    if options.fit_context {
        // The encoder sees 50 positions per second (1500 for 30 s); pad by a second.
        let secs = (end_ms - start_ms).div_ceil(1000) as usize + 1;
        let ctx = (secs * 50).clamp(150, 1500);
        params.set_audio_ctx(ctx as i32);
        params.set_single_segment(true);
    } else if end_ms - start_ms < HALF_CONTEXT_BELOW_MS {
        params.set_audio_ctx(HALF_CONTEXT);
    }
    let reporter = reporter.clone();
    let len_ms = end_ms - start_ms;
    params.set_progress_callback_safe(move |pct: i32| {
        let into = len_ms * pct.clamp(0, 100) as u64 / 100;
        reporter.report(start_ms + into, total_ms, true)
    });
    // whisper carries no text between calls on its own; the previous window's words
    // go in as this one's prompt, and nothing else does.
    params.set_no_context(true);
    if !prompt.is_empty() {
        params.set_tokens(prompt);
    }
    if let Some(cancel) = options.cancel.clone() {
        params.set_abort_callback_safe(abort_when(cancel));
    }
    params
}

/// Whether the caller has asked to stop.
pub(super) fn cancelled(options: &Options) -> bool {
    options
        .cancel
        .as_ref()
        .is_some_and(|c| c.load(Ordering::Relaxed))
}

/// whisper's abort callback for a cancel flag.
fn abort_when(cancel: Arc<AtomicBool>) -> Box<dyn FnMut() -> bool> {
    // whisper-rs 0.16's set_abort_callback_safe boxes the closure as a trait object but
    // calls it back as the closure's own type; handing it a closure that already is a
    // `Box<dyn FnMut() -> bool>` makes the two the same type. (A plain closure here reads
    // garbage and aborts at once: "error code -6".)
    crate::logging::cancelling(false);
    Box::new(move || {
        let stop = cancel.load(Ordering::Relaxed);
        if stop {
            crate::logging::cancelling(true);
        }
        stop
    })
}
