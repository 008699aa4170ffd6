//! Hearing the user, one way for every caller: `ask_human`, `yazses listen` and dictation
//! each describe what they want in a [`Hear`] request, and the same code waits for the
//! microphone, listens under the right end-of-turn policy, and transcribes (or not).
//!
//! The steps are types, so whatever must happen under the microphone lease before
//! listening (reserving the budget, speaking the question) has its place:
//! [`Hear::begin`] waits for the lease and returns a [`Hearing`]; [`Hearing::listen`]
//! captures, lets the microphone go, and transcribes off it. The caller hears of each
//! [`Step`] as it comes.
//!
//! ```no_run
//! # use std::sync::atomic::AtomicBool;
//! # use yazses::coord::{Coordinator, Purpose};
//! # use yazses::hear::Hear;
//! # use yazses::transcribe::Options;
//! # use yazses::turn::signals::Loader;
//! # fn run(coord: &Coordinator, open: yazses::session::OpenSource<'_>) -> Result<(), yazses::hear::HearError> {
//! let cancel = AtomicBool::new(false);
//! let heard = Hear::new(Purpose::Listen, "yazses listen", Default::default(), Options::spoken(4))
//!     .without_transcript()
//!     .begin(coord, &cancel, |_| {})?
//!     .listen(open, Loader::unavailable("no model"), Loader::unavailable("no voice"), &cancel, |_| {})?;
//! println!("stopped because {}", heard.utterance.stopped_because);
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use yazses_core::endpoint::EndpointConfig;
use yazses_core::vad::Vad;

use crate::capture::{Capture, CaptureError, Utterance};
use crate::coord::{CoordError, Coordinator, Purpose, Waiting};
use crate::session::{OpenSource, Session, Want, smart_turn};
use crate::source::SourceError;
use crate::transcribe::{Options, Said, TranscribeError, Transcriber};
use crate::turn::signals::{Loader, Prosody, Smart, Unloaded, Words};
use crate::turn::{TurnConfig, TurnMode, prosody};

/// How long a source that reports itself busy is waited for before a question is said.
pub const LEND_WAIT: Duration = Duration::from_secs(1);

/// How long a request waits for the microphone unless it says otherwise.
pub const DEFAULT_QUEUE: Duration = Duration::from_secs(60);

/// Where hearing the user is, for progress reports.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    /// Another process holds the microphone; the request waits (told again whenever the
    /// holder changes).
    Waiting(&'a Waiting),
    /// The microphone is ours and the question is being said (`ask_human` only).
    Speaking,
    /// The microphone listens.
    Listening,
    /// The microphone is released and what was said is being transcribed.
    Transcribing,
}

impl Step<'_> {
    /// The step in a few words, for a progress message.
    pub fn describe(&self) -> String {
        match self {
            Step::Waiting(w) => match &w.holder {
                Some(h) => format!(
                    "waiting for the microphone (held by {}, {})",
                    h.caller,
                    h.purpose.as_str()
                ),
                None => "waiting for the microphone".to_owned(),
            },
            Step::Speaking => "saying the question".to_owned(),
            Step::Listening => "listening for the answer".to_owned(),
            Step::Transcribing => "transcribing the answer".to_owned(),
        }
    }
}

/// Tells a person at a terminal that the microphone is busy: the `on_step` of the
/// commands (`listen`, `dictate`), which report nothing else.
pub fn tell_terminal(step: Step<'_>) {
    if let Step::Waiting(Waiting {
        holder: Some(h), ..
    }) = step
    {
        eprintln!("yazses: waiting for the microphone (held by {h})");
    }
}

/// Why the user could not be heard.
#[derive(Debug, thiserror::Error)]
pub enum HearError {
    /// The microphone could not be had: busy past the wait, held by a dictation, the
    /// shared state unusable, or cancelled while waiting.
    #[error(transparent)]
    Microphone(#[from] CoordError),
    /// The source could not be opened or failed, or the caller cancelled the capture.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// There was speech, but no model to transcribe it with.
    #[error(transparent)]
    Model(#[from] Unloaded),
    /// The model failed on the speech.
    #[error(transparent)]
    Transcribe(#[from] TranscribeError),
}

/// What to hear, and how: built by each caller, run by [`Hear::begin`].
#[derive(Clone, Debug)]
pub struct Hear<'a> {
    want: Want<'a>,
    endpoint: EndpointConfig,
    turn: TurnConfig,
    question: Option<&'a str>,
    release: Option<&'a AtomicBool>,
    transcribe: bool,
    options: Options,
}

impl<'a> Hear<'a> {
    /// Hear `caller` for `purpose` until the acoustic `endpoint` stops, with the fixed
    /// end of turn, waiting up to [`DEFAULT_QUEUE`] for the microphone, and transcribe
    /// with `options`.
    pub fn new(
        purpose: Purpose,
        caller: &'a str,
        endpoint: EndpointConfig,
        options: Options,
    ) -> Hear<'a> {
        Hear {
            want: Want {
                purpose,
                caller,
                queue_timeout: DEFAULT_QUEUE,
            },
            endpoint,
            turn: TurnConfig {
                mode: TurnMode::Fixed,
                ..TurnConfig::default()
            },
            question: None,
            release: None,
            transcribe: true,
            options,
        }
    }

    /// Waits at most `wait` for the microphone.
    pub fn queue_timeout(mut self, wait: Duration) -> Hear<'a> {
        self.want.queue_timeout = wait;
        self
    }

    /// Ends the turn under `turn` (with `mode = "smart"`, the words and the voice are
    /// read at each pause) instead of the acoustic endpoint alone.
    pub fn turn(mut self, turn: TurnConfig) -> Hear<'a> {
        self.turn = turn;
        self
    }

    /// Hears the answer to `question`: its words prompt the transcription (the names it
    /// asks about come back spelled as asked:
    /// docs/decisions/2026-12-07-the-question-as-the-prompt.md), and under the smart turn a
    /// whole closed answer to a closed question stops sooner ([`crate::turn::question`]).
    pub fn asking(mut self, question: &'a str) -> Hear<'a> {
        self.options.prompt = Some(question.to_owned());
        self.question = Some(question);
        self
    }

    /// Push to talk: every frame from the first is kept, and the capture ends when
    /// `release` is set (or the source ends it). The fixed end of turn applies.
    pub fn push_to_talk(mut self, release: &'a AtomicBool) -> Hear<'a> {
        self.release = Some(release);
        self.turn.mode = TurnMode::Fixed;
        self
    }

    /// Captures without transcribing: no model is needed, so the fixed end of turn
    /// applies (the smart one reads words).
    pub fn without_transcript(mut self) -> Hear<'a> {
        self.transcribe = false;
        self.turn.mode = TurnMode::Fixed;
        self
    }

    /// The end of turn this request listens under.
    pub fn turn_mode(&self) -> TurnMode {
        self.turn.mode
    }

    /// Waits for the microphone (telling `on_step` who holds it meanwhile) and holds it.
    pub fn begin(
        self,
        coord: &Coordinator,
        cancel: &AtomicBool,
        mut on_step: impl FnMut(Step<'_>),
    ) -> Result<Hearing<'a>, HearError> {
        let session = Session::begin(coord, self.want, cancel, |w| on_step(Step::Waiting(w)))?;
        Ok(Hearing {
            request: self,
            session,
        })
    }
}

/// A request that holds the microphone: listen with it, or drop it to let it go.
#[derive(Debug)]
pub struct Hearing<'a> {
    request: Hear<'a>,
    session: Session,
}

/// What was heard.
#[derive(Debug)]
pub struct Heard {
    /// The capture: its audio, why and when it stopped, what the link lost.
    pub utterance: Utterance,
    /// What was said: when nothing followed the last end-of-turn check, the read of the
    /// audio it checked ([`Smart::settle`]), else the transcript of the capture; `None`
    /// when nothing was captured or the request asked for no transcript.
    pub said: Option<Said>,
}

impl Hearing<'_> {
    /// How long the request waited for the microphone, in milliseconds.
    pub fn queued_ms(&self) -> u64 {
        self.session.queued_ms()
    }

    /// Checks with `check` that the source opens (and closes it again), to know before a
    /// question is said that its answer can be heard: a missing recording, an unplugged
    /// dongle or a sound card in use fail here, and nobody hears a question nothing
    /// listens for. [`listen`](Self::listen) opens it afresh, so nothing said meanwhile
    /// (the question itself, through the speakers) reaches the capture. A source another
    /// yazses process is letting go of (a dictation lends its dongle within a fraction of
    /// a second of the lease changing hands) is waited for up to [`LEND_WAIT`].
    pub fn check_source(
        &self,
        check: &dyn Fn(EndpointConfig) -> Result<(), SourceError>,
    ) -> Result<(), HearError> {
        let deadline = std::time::Instant::now() + LEND_WAIT;
        loop {
            match check(self.request.endpoint) {
                Err(SourceError::Busy(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                done => return done.map_err(|e| CaptureError::from(e).into()),
            }
        }
    }

    /// Opens the source with `open`, listens until the turn ends, lets the microphone
    /// go, and transcribes. `model` gives the transcriber and `voice` the prosody model,
    /// each loaded at its first use: the smart turn uses them while the user speaks, the
    /// transcript after.
    pub fn listen(
        self,
        open: OpenSource<'_>,
        model: Loader<'_>,
        voice: Loader<'_, prosody::Shared>,
        cancel: &AtomicBool,
        mut on_step: impl FnMut(Step<'_>),
    ) -> Result<Heard, HearError> {
        let Hearing { request, session } = self;
        on_step(Step::Listening);
        let mut signals = Smart::new(
            Words::new(model, request.options.clone()),
            Prosody::new(voice, request.turn.prosody_threshold),
        );
        let endpoint = request.endpoint;
        let mut utterance = match request.release {
            Some(release) => session.capture_with(
                open,
                endpoint,
                |decides| Capture::with_keep_all(Vad::DEFAULT, endpoint, decides, true),
                cancel,
                Some(release),
                None,
            )?,
            None => session.capture_turn(
                open,
                Vad::DEFAULT,
                endpoint,
                smart_turn(&request.turn, &endpoint, request.question),
                cancel,
                &mut signals,
            )?,
        };
        // Listening is over: what follows (the answer's read, or waiting for the one the
        // smart turn started) is transcribing, and progress must not say "listening".
        if request.transcribe && (utterance.said.is_some() || !utterance.samples.is_empty()) {
            on_step(Step::Transcribing);
        }
        let said = match utterance.said.take() {
            Some(said) => Some(signals.settle(said)),
            None if request.transcribe && !utterance.samples.is_empty() => {
                let transcriber = signals.transcriber()?;
                Some(transcriber.said(utterance.samples.clone(), &request.options)?)
            }
            None => None,
        };
        Ok(Heard { utterance, said })
    }
}

/// A loader whose load starts now, on a thread of its own, and is waited for at its
/// first use: a model loads while the question is said, not at the first check.
pub fn in_background<T: Clone + Send + 'static>(
    load: impl FnOnce() -> Result<T, Unloaded> + Send + 'static,
) -> Loader<'static, T> {
    let loading = std::thread::spawn(load);
    Loader::new(move || loading.join().unwrap_or_else(|_| Err(Unloaded::Stopped)))
}

/// A loader of a transcriber already loaded.
pub fn loaded(transcriber: Arc<dyn Transcriber>) -> Loader<'static> {
    Loader::new(move || Ok(transcriber))
}
