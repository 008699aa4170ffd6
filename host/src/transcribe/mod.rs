//! Speech to text with whisper.cpp (through `whisper-rs`).
//!
//! An [`Engine`] loads a ggml model once and is reused for every utterance. Each call gets
//! a fresh whisper state (about 10 ms to make): a reused state keeps its sampling
//! generator, so temperature fallback made the same file read differently call after call.
//! States are bounded by a [`gate`]: files wait their turn when all places are taken, and
//! live captures (a spoken answer, a dictation) have a place of their own, so an answer is
//! never stuck behind a long file. whisper.cpp's own printing is off and its log is routed
//! to `tracing` (stderr), so stdout stays clean.
//!
//! [`transcribe_file`] is the one path from a file to a [`Transcript`]: `yazses transcribe`
//! and the MCP `transcribe` tool both call it. It decodes the file ([`crate::audio`]), runs
//! the VAD first and never hands audio without speech to whisper (which invents text on
//! silence), and reports `heard: false` instead.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};
use yazses_core::autostop::Autostop;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::frame::FRAME_SAMPLES;
use yazses_core::time::Instant;
use yazses_core::vad::Vad;

use crate::audio::{self, Audio, AudioError, Limits};
use crate::model::ggml;

pub mod gate;
mod lane;

use gate::Waiting;
use lane::Lane;

/// Where a transcription stands, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for a place: other transcriptions are running.
    Waiting(Waiting),
    /// whisper's own percentage, 0 to 100.
    Percent(i32),
}

/// A stretch of the transcript, with its times in the audio.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Start, in milliseconds from the start of the audio.
    pub start_ms: u64,
    /// End, in milliseconds.
    pub end_ms: u64,
    /// The words, trimmed.
    pub text: String,
}

/// The result of transcribing one recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transcript {
    /// All segments' text, joined by spaces.
    pub text: String,
    /// The segments, in order.
    pub segments: Vec<Segment>,
    /// The model's name (its file name without `ggml-` and `.bin`).
    pub model: String,
    /// Length of the audio, in milliseconds.
    pub audio_ms: u64,
    /// Whether the detector heard speech; `false` means whisper was not run.
    pub heard: bool,
    /// The spoken language, when the model is multilingual.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Where a file with a damaged or missing tail stops, in milliseconds, when partial
    /// output was asked for; absent for a whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short_ms: Option<u64>,
}

/// How to transcribe.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A language code (`en`, `de`, ...) or `None`/`auto` to detect it (multilingual models).
    pub language: Option<String>,
    /// Threads for whisper; `0` means one per available core.
    pub threads: usize,
    /// Beam search width; `0` or `1` decodes greedily (fastest).
    pub beam_size: usize,
    /// Size and duration caps for files.
    pub limits: Limits,
    /// Set to stop a transcription early; whisper checks it between steps.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Size whisper's encoder window to the audio instead of a full 30 s. For short clips
    /// (spoken answers) this cuts the encoder's cost roughly in proportion, at a small
    /// cost in accuracy; clips over 30 s are unaffected.
    pub fit_context: bool,
}

/// Why a transcription failed.
#[derive(Debug, thiserror::Error)]
pub enum TranscribeError {
    /// The audio file could not be read.
    #[error(transparent)]
    Audio(#[from] AudioError),
    /// The model file is not a whisper model whisper.cpp can load.
    #[error("cannot load the model {path}: {reason}")]
    Model {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A language the model does not speak.
    #[error("{0}")]
    Language(String),
    /// whisper.cpp failed.
    #[error("whisper failed: {0}")]
    Whisper(String),
    /// The caller cancelled.
    #[error("the transcription was cancelled")]
    Cancelled,
}

/// A loaded model, reusable across calls and threads: files and live captures each run
/// on their own lane of worker threads, each call with a fresh whisper state.
pub struct Engine {
    model: Arc<Model>,
    /// Workers for files transcribed at the same time.
    files: Lane,
    /// A worker for live captures, apart from files.
    live: Lane,
}

/// The loaded weights and what they are.
pub(crate) struct Model {
    ctx: WhisperContext,
    name: String,
    path: PathBuf,
    multilingual: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("name", &self.model.name)
            .field("path", &self.model.path)
            .field("multilingual", &self.model.multilingual)
            .field("places", &self.files.places())
            .finish()
    }
}

impl Engine {
    /// Loads a ggml model. The file's structure is checked first, so a damaged or
    /// foreign file is refused with a reason instead of reaching whisper.cpp.
    pub fn load(path: &Path) -> Result<Engine, TranscribeError> {
        let model_err = |reason: String| TranscribeError::Model {
            path: path.to_owned(),
            reason,
        };
        let started = std::time::Instant::now();
        ggml::check_file(path).map_err(model_err)?;
        whisper_rs::install_logging_hooks();
        // Flash attention is whisper.cpp's own default (whisper-rs turns it off); it is
        // faster and smaller on CPU, and we use no DTW timestamps, which it excludes.
        let params = WhisperContextParameters {
            flash_attn: true,
            ..WhisperContextParameters::default()
        };
        let ctx = WhisperContext::new_with_params(path, params)
            .map_err(|e| model_err(format!("whisper.cpp refused it ({e})")))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| {
                n.strip_prefix("ggml-")
                    .unwrap_or(n)
                    .strip_suffix(".bin")
                    .unwrap_or(n)
                    .to_owned()
            })
            .unwrap_or_else(|| "model".into());
        let multilingual = ctx.is_multilingual();
        tracing::debug!(system = whisper_rs::print_system_info(), "whisper.cpp");
        tracing::info!(
            model = %name,
            multilingual,
            load_ms = started.elapsed().as_millis() as u64,
            "model loaded"
        );
        let model = Arc::new(Model {
            ctx,
            name,
            path: path.to_owned(),
            multilingual,
        });
        Ok(Engine {
            files: Lane::new(&model, places_for(0), "files"),
            live: Lane::new(&model, 1, "live"),
            model,
        })
    }

    /// The same engine with `places` files transcribed at once (at least one); more wait.
    pub fn with_places(mut self, places: usize) -> Engine {
        self.files = Lane::new(&self.model, places, "files");
        self
    }

    /// How many files it transcribes at once.
    pub fn places(&self) -> usize {
        self.files.places()
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.model.name
    }

    /// Whether the model speaks more than English.
    pub fn is_multilingual(&self) -> bool {
        self.model.multilingual
    }

    /// Transcribes 16 kHz mono audio from a file; `progress` hears a wait for a place,
    /// then whisper's percentage.
    pub fn transcribe(
        &self,
        audio: Audio,
        options: &Options,
        progress: impl FnMut(Progress) + Send + 'static,
    ) -> Result<Transcript, TranscribeError> {
        self.in_lane(
            &self.files,
            options,
            progress,
            move |model, options, progress| model.run(&audio, options, progress),
        )
    }

    /// Waits for a place in `lane` (telling `progress` while it waits), then runs `job` on
    /// that place's worker.
    fn in_lane(
        &self,
        lane: &Lane,
        options: &Options,
        mut progress: impl FnMut(Progress) + Send + 'static,
        job: impl FnOnce(
            &Model,
            &Options,
            Box<dyn FnMut(Progress) + Send>,
        ) -> Result<Transcript, TranscribeError>
        + Send
        + 'static,
    ) -> Result<Transcript, TranscribeError> {
        let place = lane
            .enter(options.cancel.as_deref(), |w| {
                tracing::info!(
                    running = w.running,
                    ahead = w.ahead,
                    "waiting for another transcription to finish"
                );
                progress(Progress::Waiting(w));
            })
            .ok_or(TranscribeError::Cancelled)?;
        let options = options.clone();
        lane.run(place, move |model| job(model, &options, Box::new(progress)))?
    }
}

impl Model {
    /// Transcribes, on a worker holding a place.
    fn run(
        &self,
        audio: &Audio,
        options: &Options,
        mut progress: Box<dyn FnMut(Progress) + Send>,
    ) -> Result<Transcript, TranscribeError> {
        let language = self.language(options.language.as_deref())?;
        let audio_ms = audio.duration_ms();
        if !has_speech(&audio.samples) {
            tracing::info!(audio_ms, "no speech detected; whisper not run");
            return Ok(Transcript {
                text: String::new(),
                segments: Vec::new(),
                model: self.name.clone(),
                audio_ms,
                heard: false,
                language: None,
                cut_short_ms: audio.cut_short_ms,
            });
        }
        let strategy = match options.beam_size {
            0 | 1 => SamplingStrategy::Greedy { best_of: 1 },
            n => SamplingStrategy::BeamSearch {
                beam_size: n.min(16) as i32,
                patience: -1.0,
            },
        };
        let mut params = FullParams::new(strategy);
        params.set_n_threads(threads(options.threads));
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_special(false);
        params.set_print_timestamps(false);
        params.set_language(Some(language));
        if options.fit_context {
            // The encoder sees 50 positions per second (1500 for 30 s); pad by a second.
            let secs = audio.samples.len().div_ceil(16_000) + 1;
            let ctx = (secs * 50).clamp(150, 1500);
            params.set_audio_ctx(ctx as i32);
            params.set_single_segment(true);
        }
        params.set_progress_callback_safe(move |pct| progress(Progress::Percent(pct)));
        // Explicit, though it is whisper.cpp's default: no text of an earlier call is
        // carried into this one as its prompt.
        params.set_no_context(true);
        if let Some(cancel) = options.cancel.clone() {
            // whisper-rs 0.16's set_abort_callback_safe boxes the closure as a trait object
            // but calls it back as the closure's own type; handing it a closure that already
            // is a `Box<dyn FnMut() -> bool>` makes the two the same type. (A plain closure
            // here reads garbage and aborts at once: "error code -6".)
            crate::logging::cancelling(false);
            let abort: Box<dyn FnMut() -> bool> = Box::new(move || {
                let stop = cancel.load(Ordering::Relaxed);
                if stop {
                    crate::logging::cancelling(true);
                }
                stop
            });
            params.set_abort_callback_safe(abort);
        }
        let samples: Vec<f32> = audio
            .samples
            .iter()
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
        let started = std::time::Instant::now();
        let mut state = self
            .ctx
            .create_state()
            .map_err(|e| TranscribeError::Whisper(e.to_string()))?;
        tracing::debug!(
            state_ms = started.elapsed().as_millis() as u64,
            "whisper state ready"
        );
        let cancelled = || {
            options
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
        };
        if let Err(e) = state.full(params, &samples) {
            return Err(if cancelled() {
                TranscribeError::Cancelled
            } else {
                TranscribeError::Whisper(e.to_string())
            });
        }
        if cancelled() {
            return Err(TranscribeError::Cancelled);
        }
        tracing::info!(
            audio_ms,
            whisper_ms = started.elapsed().as_millis() as u64,
            "transcribed"
        );
        let mut segments = Vec::new();
        for seg in state.as_iter() {
            let text = seg
                .to_str_lossy()
                .map_err(|e| TranscribeError::Whisper(e.to_string()))?
                .trim()
                .to_owned();
            if text.is_empty() {
                continue;
            }
            // whisper's timestamps are in 10 ms units.
            let start_ms = (seg.start_timestamp().max(0) as u64 * 10).min(audio_ms);
            let end_ms = (seg.end_timestamp().max(0) as u64 * 10).clamp(start_ms, audio_ms);
            segments.push(Segment {
                start_ms,
                end_ms,
                text,
            });
        }
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let language = self
            .multilingual
            .then(|| whisper_rs::get_lang_str(state.full_lang_id_from_state()))
            .flatten()
            .map(str::to_owned);
        drop(state);
        Ok(Transcript {
            text,
            segments,
            model: self.name.clone(),
            audio_ms,
            heard: true,
            language,
            cut_short_ms: audio.cut_short_ms,
        })
    }

    /// The language to pass whisper, or why the request cannot be met.
    fn language<'a>(&self, requested: Option<&'a str>) -> Result<&'a str, TranscribeError> {
        match requested {
            None | Some("auto") if self.multilingual => Ok("auto"),
            None | Some("auto") | Some("en") => Ok("en"),
            Some(code) if whisper_rs::get_lang_id(code).is_none() => {
                Err(TranscribeError::Language(format!(
                    "{code:?} is not a language whisper knows; use a code such as en, de, fr, or auto"
                )))
            }
            Some(code) if !self.multilingual => Err(TranscribeError::Language(format!(
                "the model {} is English-only; use a multilingual model (such as base) for {code:?}",
                self.name
            ))),
            Some(code) => Ok(code),
        }
    }
}

/// What a capture said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    /// The transcript; empty when nothing was said.
    pub text: String,
    /// Whether anything was said: speech that whisper turned into words.
    pub heard: bool,
}

impl Engine {
    /// Transcribes a capture: the 16 kHz mono samples [`crate::capture::listen`] keeps.
    pub fn transcribe_capture(
        &self,
        samples: Vec<i16>,
        options: &Options,
    ) -> Result<Said, TranscribeError> {
        let audio = Audio {
            samples,
            source_rate: yazses_core::frame::SAMPLE_RATE_HZ,
            source_channels: 1,
            cut_short_ms: None,
        };
        let t = self.in_lane(
            &self.live,
            options,
            |_| {},
            move |model, options, progress| model.run(&audio, options, progress),
        )?;
        Ok(Said {
            heard: t.heard && !t.text.is_empty(),
            text: t.text,
        })
    }
}

/// The one path from a file to text: wait for a place, decode, gate on speech,
/// transcribe. The place is taken before decoding, so calls at once hold at most as many
/// decoded files as whisper states, and are served in the order they came.
pub fn transcribe_file(
    engine: &Engine,
    path: &Path,
    options: &Options,
    progress: impl FnMut(Progress) + Send + 'static,
) -> Result<Transcript, TranscribeError> {
    let started = std::time::Instant::now();
    let path = path.to_owned();
    let transcript = engine.in_lane(
        &engine.files,
        options,
        progress,
        move |model, options, progress| {
            let audio = audio::read(&path, &options.limits)?;
            tracing::info!(decode_ms = started.elapsed().as_millis() as u64, "decoded");
            model.run(&audio, options, progress)
        },
    )?;
    tracing::info!(
        audio_ms = transcript.audio_ms,
        total_ms = started.elapsed().as_millis() as u64,
        "file done"
    );
    Ok(transcript)
}

/// Whether the detector hears at least the policy's minimum run of speech anywhere.
pub fn has_speech(samples: &[i16]) -> bool {
    // The detector alone, frame by frame, stopping at the first long enough run: no
    // per-frame record is kept (a three-hour file would hold a million of them).
    let endpoint = EndpointConfig::default();
    let min_frames = endpoint.min_speech.total_millis() / 10;
    let mut detector = Autostop::new(Vad::DEFAULT, endpoint, Instant::ZERO);
    let mut run = 0u64;
    samples.chunks(FRAME_SAMPLES).any(|chunk| {
        let mut frame = [0i16; FRAME_SAMPLES];
        frame[..chunk.len()].copy_from_slice(chunk);
        run = if detector.push_frame(&frame).vad.speech {
            run + 1
        } else {
            0
        };
        run >= min_frames
    })
}

/// Files transcribed at once when each call uses `threads` (0: one per core): as many as
/// the cores hold, one at least, four at most.
pub fn places_for(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / self::threads(threads) as usize).clamp(1, 4)
}

fn threads(requested: usize) -> i32 {
    let n = if requested == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        requested
    };
    n.clamp(1, 64) as i32
}

impl Transcript {
    /// SubRip subtitles: numbered cues, `HH:MM:SS,mmm` times.
    pub fn to_srt(&self) -> String {
        let mut s = String::new();
        for (i, seg) in self.segments.iter().enumerate() {
            s.push_str(&format!(
                "{}\n{} --> {}\n{}\n\n",
                i + 1,
                clock(seg.start_ms, ','),
                clock(seg.end_ms, ','),
                seg.text
            ));
        }
        s
    }

    /// WebVTT subtitles: a header, then cues with `HH:MM:SS.mmm` times.
    pub fn to_vtt(&self) -> String {
        let mut s = String::from("WEBVTT\n\n");
        for seg in &self.segments {
            s.push_str(&format!(
                "{} --> {}\n{}\n\n",
                clock(seg.start_ms, '.'),
                clock(seg.end_ms, '.'),
                // A cue's text may not hold "-->"; nothing whisper writes should, but a
                // transcript is data and must not break the file around it.
                seg.text.replace("-->", "->")
            ));
        }
        s
    }
}

fn clock(ms: u64, sep: char) -> String {
    format!(
        "{:02}:{:02}:{:02}{sep}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// What turns a capture into words: the whisper [`Engine`], or a fake in tests of the
/// layers above.
pub trait Transcriber: Send + Sync {
    /// Transcribes 16 kHz mono samples from a capture.
    fn said(&self, samples: Vec<i16>, options: &Options) -> Result<Said, TranscribeError>;
}

impl Transcriber for Engine {
    fn said(&self, samples: Vec<i16>, options: &Options) -> Result<Said, TranscribeError> {
        self.transcribe_capture(samples, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Transcript {
        Transcript {
            text: "Hello there. General --> Kenobi.".into(),
            segments: vec![
                Segment {
                    start_ms: 0,
                    end_ms: 1500,
                    text: "Hello there.".into(),
                },
                Segment {
                    start_ms: 3_725_040,
                    end_ms: 3_727_000,
                    text: "General --> Kenobi.".into(),
                },
            ],
            model: "tiny.en".into(),
            audio_ms: 3_727_500,
            heard: true,
            language: None,
            cut_short_ms: None,
        }
    }

    #[test]
    fn srt_numbers_cues_with_comma_millis() {
        assert_eq!(
            sample().to_srt(),
            "1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n\
             2\n01:02:05,040 --> 01:02:07,000\nGeneral --> Kenobi.\n\n"
        );
    }

    #[test]
    fn vtt_has_its_header_dot_millis_and_no_arrow_in_text() {
        assert_eq!(
            sample().to_vtt(),
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n\n\
             01:02:05.040 --> 01:02:07.000\nGeneral -> Kenobi.\n\n"
        );
    }

    #[test]
    fn json_has_the_documented_keys_and_omits_language_for_english_models() {
        let v = serde_json::to_value(sample()).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["audio_ms", "heard", "model", "segments", "text"]);
        assert_eq!(v["segments"][1]["start_ms"], 3_725_040);
    }

    #[test]
    fn silence_and_a_click_are_not_speech_but_a_voice_like_burst_is() {
        assert!(!has_speech(&vec![0i16; 16_000 * 3]));
        let mut click = vec![0i16; 16_000 * 2];
        click[16_000..16_040].fill(20_000);
        assert!(!has_speech(&click));
        let mut burst = vec![0i16; 16_000];
        burst.extend((0..16_000).map(|i| {
            let t = i as f32 / 16_000.0;
            (6000.0
                * (t * 2.0 * std::f32::consts::PI * 220.0).sin()
                * (1.0 + (t * 2.0 * std::f32::consts::PI * 4.0).sin())) as i16
        }));
        burst.extend(vec![0i16; 16_000]);
        assert!(has_speech(&burst));
    }
}
