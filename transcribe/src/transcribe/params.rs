//! whisper's parameters for one call over a window: decoding strategy, encoder context,
//! prompt, progress and cancellation.

use std::os::raw::c_int;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use whisper_rs::{FullParams, SamplingStrategy};

use super::Options;
use super::fallback::Temperatures;
use super::progress::Reporter;

/// In a recording longer than [`LONG_RECORDING_MS`], a window shorter than this (its last
/// window, a left-out tail) is encoded over half of whisper's 30 s context: faster, with
/// the same words on the long files. A short recording keeps the whole context, since half
/// cost words on clean short answers, and a context fitted to the audio garbles it
/// (docs/decisions/2026-12-04-whisper-cpp-1-8-5.md, "Half the encoder context for short
/// windows").
const HALF_CONTEXT_BELOW_MS: u64 = 14_000;
/// A recording longer than one whisper window: 30 s.
const LONG_RECORDING_MS: u64 = 30_000;
/// Half of whisper's 1500 encoder positions: 15 s.
const HALF_CONTEXT: i32 = 750;

/// One reading of a window: at which temperatures, and until when it may run (`None`: to
/// its end).
#[derive(Clone, Copy, Debug)]
pub(super) struct Reading {
    /// Where whisper starts and how it falls back.
    pub temperatures: Temperatures,
    /// When whisper is stopped.
    pub until: Option<Instant>,
}

/// whisper's parameters for one reading of the audio from `start_ms` to `end_ms` in
/// `language`, prompted with `prompt`.
pub(super) fn params<'a>(
    options: &Options,
    language: &'a str,
    reporter: &Reporter,
    total_ms: Option<u64>,
    (start_ms, end_ms): (u64, u64),
    prompt: &'a [c_int],
    reading: Reading,
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
    params.set_temperature(reading.temperatures.from);
    params.set_temperature_inc(reading.temperatures.step);
    if let Some(ctx) = encoder_context(options.fit_context, end_ms - start_ms, total_ms) {
        params.set_audio_ctx(ctx);
    }
    if options.fit_context {
        params.set_single_segment(true);
        // One segment: the cap ends the window's reading. A reading that loops ("Put it in
        // Redis. Put it in Redis. ...") otherwise writes whisper's 224 tokens, five times
        // over with a beam, and a 2 s answer came back 5 s after its end.
        params.set_max_tokens(most_tokens(end_ms - start_ms));
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
    crate::cancellation::cancelling(false);
    if options.cancel.is_some() || reading.until.is_some() {
        params.set_abort_callback_safe(abort_when(options.cancel.clone(), reading.until));
    }
    params
}

/// The most tokens a live reading of `window_ms` of audio writes: 12 a second and 20
/// more, twice what the fastest speaker says (about 6 a second with punctuation), up to
/// whisper's own 224.
fn most_tokens(window_ms: u64) -> c_int {
    (20 + window_ms.div_ceil(1000) * 12).min(224) as c_int
}

/// How many encoder positions whisper reads for a window of `window_ms` in a recording of
/// `total_ms` (`None`: all 1500, 30 s). `fit`: the window's own length plus a second, as
/// the live captures want (50 positions a second, at least 150).
fn encoder_context(fit: bool, window_ms: u64, total_ms: Option<u64>) -> Option<i32> {
    if fit {
        let secs = window_ms.div_ceil(1000) as i32 + 1;
        return Some((secs * 50).clamp(150, 1500));
    }
    (window_ms < HALF_CONTEXT_BELOW_MS && total_ms.is_some_and(|t| t > LONG_RECORDING_MS))
        .then_some(HALF_CONTEXT)
}

/// Whether the caller has asked to stop.
pub(super) fn cancelled(options: &Options) -> bool {
    options
        .cancel
        .as_ref()
        .is_some_and(|c| c.load(Ordering::Relaxed))
}

/// whisper's abort callback for a cancel flag and a time limit.
fn abort_when(cancel: Option<Arc<AtomicBool>>, until: Option<Instant>) -> Box<dyn FnMut() -> bool> {
    // whisper-rs 0.16's set_abort_callback_safe boxes the closure as a trait object but
    // calls it back as the closure's own type; handing it a closure that already is a
    // `Box<dyn FnMut() -> bool>` makes the two the same type. (A plain closure here reads
    // garbage and aborts at once: "error code -6".)
    Box::new(move || {
        let stop = cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
            || until.is_some_and(|t| Instant::now() >= t);
        if stop {
            crate::cancellation::cancelling(true);
        }
        stop
    })
}

#[cfg(test)]
mod tests {
    use super::{encoder_context, most_tokens};

    #[test]
    fn a_live_reading_may_write_twice_the_fastest_speech_up_to_whispers_limit() {
        assert_eq!(most_tokens(2_500), 56);
        assert_eq!(most_tokens(10_000), 140);
        assert_eq!(most_tokens(30_000), 224);
    }

    #[test]
    fn a_short_recording_is_read_over_the_whole_context_and_a_long_ones_tail_over_half() {
        // A 9 s answer on its own: all 30 s (half cost words on clean short answers).
        assert_eq!(encoder_context(false, 9_000, Some(9_000)), None);
        assert_eq!(encoder_context(false, 9_000, None), None);
        // The last 9 s of a 61 s file: half.
        assert_eq!(encoder_context(false, 9_000, Some(61_000)), Some(750));
        // A full window of a long file: all of it.
        assert_eq!(encoder_context(false, 28_000, Some(61_000)), None);
        // A live capture of 2.3 s: fit to it plus a second, 4 s.
        assert_eq!(encoder_context(true, 2_300, None), Some(200));
        assert_eq!(encoder_context(true, 500, None), Some(150));
    }
}
