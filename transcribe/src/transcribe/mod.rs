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
//! and the MCP `transcribe` tool both call it. It decodes the file as a stream
//! ([`yazses_audio::stream`]) into windows of at most 30 s cut at pauses,
//! never hands a window without speech to whisper (which invents text on silence), and
//! reports `heard: false` when no window had any.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;
use whisper_rs::{WhisperContext, WhisperContextParameters};

use crate::audio::{self, Audio, AudioError, Limits};
use crate::model::ggml;

mod clean;
mod fallback;
pub mod gate;
mod guard;
mod lane;
mod one_step;
mod params;
mod pass;
mod progress;
mod window;

use gate::Waiting;
pub use guard::Reason;
use lane::Lane;
use pass::Pass;

/// Where a transcription stands, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for a place: other transcriptions are running.
    Waiting(Waiting),
    /// The audio up to `done_ms` is transcribed, or was found silent and skipped. Never
    /// goes backwards.
    Done {
        /// How far, in milliseconds of the recording's own clock.
        done_ms: u64,
        /// The recording's length, when its header says.
        total_ms: Option<u64>,
        /// Whether whisper got this far (`false`: the detector skipped silence).
        by_whisper: bool,
    },
}

impl Progress {
    /// How far, as a percentage of the whole, when the whole is known.
    pub fn percent(&self) -> Option<u64> {
        match *self {
            Progress::Done {
                done_ms,
                total_ms: Some(total),
                ..
            } if total > 0 => Some((done_ms * 100 / total).min(100)),
            _ => None,
        }
    }
}

/// A stretch of the transcript, with its times in the audio and how sure whisper was.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    /// Start, in milliseconds from the start of the audio.
    pub start_ms: u64,
    /// End, in milliseconds.
    pub end_ms: u64,
    /// The words, trimmed.
    pub text: String,
    /// whisper's probability that the audio it read with this segment holds no speech:
    /// whisper judges a whole read (up to 30 s) at once, so the segments of one read share
    /// it. [`speech_share`](Self::speech_share) is the segment's own.
    pub no_speech_prob: f32,
    /// The share of the segment's time the voice-activity detector heard speech in, 0 to
    /// 1; absent where the detector's verdicts were not kept (audio read ahead of a window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speech_share: Option<f32>,
    /// The mean log-probability of the segment's text tokens (0 is certain; whisper.cpp
    /// calls a decoding under -1 unsure).
    pub avg_logprob: f32,
}

/// Words whisper wrote that the hallucination guard left out of the transcript, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dropped {
    /// The segment's start, in milliseconds from the start of the audio.
    pub start_ms: u64,
    /// Its end, in milliseconds.
    pub end_ms: u64,
    /// The words left out: the whole segment's, or a loop's repeats.
    pub text: String,
    /// Why.
    pub reason: Reason,
    /// whisper's no-speech probability for the read the segment came from.
    pub no_speech_prob: f32,
    /// The share of the segment's time the detector heard speech in, as in [`Segment`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speech_share: Option<f32>,
    /// The mean log-probability of the segment's text tokens.
    pub avg_logprob: f32,
}

/// The result of transcribing one recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transcript {
    /// All segments' text, joined by spaces.
    pub text: String,
    /// The segments, in order.
    pub segments: Vec<Segment>,
    /// What the hallucination guard left out, in order; empty when it kept everything.
    pub dropped: Vec<Dropped>,
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
    /// Text whisper takes as what was said just before the audio: its words and names
    /// become likelier (whisper's initial prompt). `ask_human` gives the question.
    pub prompt: Option<String>,
}

impl Options {
    /// How a spoken answer or a dictation is transcribed after the capture (`ask_human`,
    /// `yazses listen`, `yazses dictate`): greedy, because the text is wanted as soon as
    /// the user stops (a dictation's within half a second of the release); the encoder
    /// window fit to the clip; `threads` as configured. Under the smart turn the answer is
    /// read with a beam instead, while the turn waits out its silence
    /// ([`crate::turn::signals::Words`]).
    pub fn spoken(threads: usize) -> Options {
        Options {
            threads,
            beam_size: 1,
            fit_context: true,
            ..Options::default()
        }
    }
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

/// Why no model could be had for a `--model` value or `[transcribe] model`: none by that
/// name or path, or a file whisper.cpp cannot load.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No file by that name or path.
    #[error(transparent)]
    NotFound(#[from] crate::model::ResolveError),
    /// The file is there but is not a model whisper.cpp loads.
    #[error(transparent)]
    Load(#[from] TranscribeError),
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
    /// Loads the model `model` names: an installed model's name or a file's path
    /// ([`crate::model::resolve`]).
    pub fn load_named(model: &str) -> Result<Engine, ModelError> {
        Ok(Engine::load(&crate::model::resolve(model)?)?)
    }

    /// Loads a ggml model. The file's structure is checked first, so a damaged or
    /// foreign file is refused with a reason instead of reaching whisper.cpp.
    pub fn load(path: &Path) -> Result<Engine, TranscribeError> {
        let model_err = |reason: String| TranscribeError::Model {
            path: path.to_owned(),
            reason,
        };
        let started = std::time::Instant::now();
        ggml::check_file(path).map_err(|e| model_err(e.to_string()))?;
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
        tracing::debug!(
            version = whisper_rs::WHISPER_CPP_VERSION,
            system = whisper_rs::print_system_info(),
            "whisper.cpp"
        );
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
    /// Transcribes audio already in memory, on a worker holding a place.
    fn run(
        &self,
        audio: &Audio,
        options: &Options,
        progress: Box<dyn FnMut(Progress) + Send>,
    ) -> Result<Transcript, TranscribeError> {
        let mut pass = Pass::new(self, options, progress)?;
        let whole = audio.samples.len() as u64;
        if !pass.feed(&audio.samples, Some(whole))
            && let Some(e) = pass.take_error()
        {
            return Err(e);
        }
        pass.finish(audio.cut_short_ms)
    }

    /// The language to pass whisper, or why the request cannot be met.
    fn language(&self, requested: Option<&str>) -> Result<&'static str, TranscribeError> {
        let requested = match requested.map(str::trim) {
            None | Some("auto") => return Ok(if self.multilingual { "auto" } else { "en" }),
            Some(r) => r,
        };
        let Some((code, name)) = language_named(requested) else {
            return Err(TranscribeError::Language(format!(
                "{requested:?} is not a language whisper knows; use a code such as en, de, \
                 fr (or a name such as german), or auto"
            )));
        };
        if code != "en" && !self.multilingual {
            return Err(TranscribeError::Language(format!(
                "the model {} is English-only and cannot transcribe {name} ({code}); use a \
                 multilingual model such as base",
                self.name
            )));
        }
        Ok(code)
    }
}

/// Whisper's code and name for `requested`, given as either (`de`, `German`), in any case.
/// Looked up in whisper's own table rather than asked of `whisper_lang_id`, which logs an
/// unknown name on stderr and cannot take a NUL byte.
pub fn language_named(requested: &str) -> Option<(&'static str, &'static str)> {
    let wanted = requested.to_lowercase();
    (0..=whisper_rs::get_lang_max_id()).find_map(|id| {
        let code = whisper_rs::get_lang_str(id)?;
        let name = whisper_rs::get_lang_str_full(id)?;
        (code == wanted || name == wanted).then_some((code, name))
    })
}

/// What a capture said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Said {
    /// The transcript; empty when nothing was said.
    pub text: String,
    /// Whether anything was said: speech that whisper turned into words.
    pub heard: bool,
}

impl Engine {
    /// Transcribes a capture: the 16 kHz mono samples `yazses::capture::listen` keeps.
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
        let text = clean::without_repeats(&t.text);
        Ok(Said {
            heard: t.heard && !text.is_empty(),
            text,
        })
    }
}

/// The one path from a file to text: wait for a place, then decode and transcribe at
/// once, window by window, skipping windows without speech. Nothing holds the
/// whole recording, so memory stays flat with its length; calls at once are served in the
/// order they came.
pub fn transcribe_file(
    engine: &Engine,
    path: &Path,
    options: &Options,
    progress: impl FnMut(Progress) + Send + 'static,
) -> Result<Transcript, TranscribeError> {
    transcribe_input(
        engine,
        audio::Input::File(path.to_owned()),
        options,
        progress,
    )
}

/// [`transcribe_file`] for a file or a stream read beforehand ([`yazses_audio::Input`]).
pub fn transcribe_input(
    engine: &Engine,
    input: audio::Input,
    options: &Options,
    progress: impl FnMut(Progress) + Send + 'static,
) -> Result<Transcript, TranscribeError> {
    let started = std::time::Instant::now();
    let transcript = engine.in_lane(
        &engine.files,
        options,
        progress,
        move |model, options, progress| {
            let mut pass = Pass::new(model, options, progress)?;
            let streamed = input.stream(&options.limits, &mut |c: audio::Chunk<'_>| {
                pass.feed(c.samples, c.expected)
            });
            match streamed {
                Ok(s) => pass.finish(s.cut_short_ms),
                // The pass stopped the decoding; its own reason is the one to give.
                Err(e @ AudioError::Stopped { .. }) => Err(pass.take_error().unwrap_or(e.into())),
                Err(e) => Err(e.into()),
            }
        },
    )?;
    tracing::info!(
        audio_ms = transcript.audio_ms,
        total_ms = started.elapsed().as_millis() as u64,
        "file done"
    );
    Ok(transcript)
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

    #[test]
    fn whisper_cpp_is_the_version_the_benchmarks_measured() {
        // whisper-sys/ replaces the registry's whisper-rs-sys (1.8.3) through [patch.crates-io];
        // a lost patch would build the slower version without another sign.
        assert_eq!(whisper_rs::WHISPER_CPP_VERSION, "1.8.5");
    }

    fn sample() -> Transcript {
        Transcript {
            text: "Hello there. General --> Kenobi.".into(),
            segments: vec![
                Segment {
                    start_ms: 0,
                    end_ms: 1500,
                    text: "Hello there.".into(),
                    no_speech_prob: 0.01,
                    speech_share: None,
                    avg_logprob: -0.25,
                },
                Segment {
                    start_ms: 3_725_040,
                    end_ms: 3_727_000,
                    text: "General --> Kenobi.".into(),
                    no_speech_prob: 0.01,
                    speech_share: None,
                    avg_logprob: -0.5,
                },
            ],
            dropped: Vec::new(),
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
        assert_eq!(
            keys,
            ["audio_ms", "dropped", "heard", "model", "segments", "text"]
        );
        assert_eq!(v["segments"][1]["start_ms"], 3_725_040);
    }
}
