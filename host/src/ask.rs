//! `ask_human`: an agent asks the user a question out loud and gets the spoken answer.
//!
//! The flow: check the restraints, check that the capture source opens, say
//! "`<caller>` asks: `<question>`", open the capture source, listen until the user stops (the core's end-of-speech policy, with pre-roll),
//! release the microphone, transcribe, and return the answer to the caller, and only to
//! the caller: nothing here types, pastes or sends it anywhere else.
//!
//! The five restraints, across every yazses process of the user
//! through [`crate::coord`]:
//! 1. off by default: with `[mcp] ask_human = false` the MCP server does not offer it;
//! 2. an interrupt budget: `[mcp] ask_human_per_hour` answers per rolling hour, one
//!    ledger for all processes, charged only when an answer was heard;
//! 3. never during a dictation hold: refused at once with a retry hint, not queued, not
//!    charged;
//! 4. the caller is named in what is spoken;
//! 5. the answer goes back to the caller only.
//!
//! One question at a time per user: the microphone lease, taken before the question is
//! spoken and let go when the microphone closes; other questions queue in arrival order
//! for up to `[mcp] ask_human_queue_s`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;
use yazses_core::end::End;
use yazses_core::endpoint::EndpointConfig;

use crate::capture::CaptureError;
use crate::config::Config;
use crate::coord::{CoordError, Coordinator, Holder, Purpose, unix_ms};
use crate::hear::{Hear, HearError, in_background};
use crate::source::{FrameSource, SourceError};
use crate::speak::SpeakError;
use crate::transcribe::{Options, Transcriber};
use crate::turn::signals::{Loader, Unloaded};
use crate::turn::{TurnMode, prosody};

/// The longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 500;

pub use crate::hear::Step;

/// What the caller gets back.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Answer {
    /// What the user said, transcribed; empty when nothing was heard.
    pub answer: String,
    /// The name the question was asked under, as spoken ("<asked_as> asks: ...").
    pub asked_as: String,
    /// Whether the user said anything.
    pub heard: bool,
    /// Why listening stopped: the user stopped talking, nobody spoke in time, the
    /// caller's timeout, or the 120 s cap.
    pub stopped_because: End,
    /// How long the microphone listened, in milliseconds.
    pub listen_ms: u64,
    /// How long the question waited for the microphone (another process's question, or a
    /// `yazses listen`, had it), in milliseconds.
    pub queued_ms: u64,
    /// Whether the question was said out loud; `false` when the user turned speaking off
    /// (`[speak] enabled = false`) and it was only printed.
    pub spoken: bool,
    /// How the end of the answer was judged, with `[turn] mode = "smart"`: the last
    /// check's decision, which signal gave it, and when. Absent with the fixed policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<crate::turn::TurnReport>,
}

/// Why a question was not asked, or its answer not obtained. Each says what happened and
/// what the caller can do, in one sentence a model can act on.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The question is empty or too long.
    #[error("{0}")]
    BadQuestion(String),
    /// The budget for this hour is spent.
    #[error(
        "The user has already answered {used} spoken questions in the past hour, the most allowed; do not ask again before {retry_in_min} minutes have passed, and continue without asking or ask in text instead."
    )]
    Budget {
        /// Answers charged in the window.
        used: usize,
        /// Minutes until the oldest charge leaves the window.
        retry_in_min: u64,
    },
    /// The user is dictating.
    #[error(
        "The user is dictating right now ({0}) and the microphone is in use; try again in a minute, or ask in text instead."
    )]
    Held(Holder),
    /// Other questions kept the microphone busy for the whole queue wait.
    #[error(
        "The microphone stayed busy for {waited_s} s{}; try again in a minute, or ask in text instead.", holder.as_ref().map(|h| format!(" (held by {h})")).unwrap_or_default()
    )]
    Busy {
        /// How long the question waited.
        waited_s: u64,
        /// Who held the microphone at the end of the wait.
        holder: Option<Holder>,
    },
    /// The shared state in the runtime dir cannot be used or trusted.
    #[error("Spoken questions are unavailable: {0}. Ask in text instead.")]
    Coordination(#[source] Arc<CoordError>),
    /// The microphone could not be opened or failed.
    #[error("The microphone could not be used ({0}); ask in text instead.")]
    Capture(#[source] CaptureError),
    /// The answer could not be transcribed (no model, or the model failed).
    #[error("The answer was recorded but could not be transcribed ({0}); ask in text instead.")]
    Transcribe(#[source] HearError),
    /// The question could not be said, so nothing was listened for.
    #[error(
        "The question could not be spoken ({0}), so the user never heard it and nothing was listened for; ask in text instead."
    )]
    NotSpoken(#[source] SpeakError),
    /// The caller cancelled.
    #[error("The question was cancelled.")]
    Cancelled,
}

impl From<CoordError> for AskError {
    fn from(e: CoordError) -> AskError {
        match e {
            CoordError::Held(holder) => AskError::Held(holder),
            CoordError::QueueTimeout { waited, holder } => AskError::Busy {
                waited_s: waited.as_secs(),
                holder,
            },
            CoordError::Cancelled => AskError::Cancelled,
            CoordError::Budget { used, retry_in_min } => AskError::Budget { used, retry_in_min },
            e @ (CoordError::RuntimeDir { .. }
            | CoordError::Io { .. }
            | CoordError::Ledger { .. }) => AskError::Coordination(Arc::new(e)),
        }
    }
}

impl From<HearError> for AskError {
    fn from(e: HearError) -> AskError {
        match e {
            HearError::Microphone(e) => e.into(),
            HearError::Capture(CaptureError::Cancelled)
            | HearError::Transcribe(crate::transcribe::TranscribeError::Cancelled) => {
                AskError::Cancelled
            }
            HearError::Capture(e) => AskError::Capture(e),
            e @ (HearError::Model(_) | HearError::Transcribe(_)) => AskError::Transcribe(e),
        }
    }
}

/// Opens the configured capture source.
type Opener =
    dyn Fn(EndpointConfig) -> Result<Box<dyn FrameSource + Send>, SourceError> + Send + Sync;

/// Checks that the configured capture source opens, without capturing.
type Checker = dyn Fn(EndpointConfig) -> Result<(), SourceError> + Send + Sync;

/// The `ask_human` service, one per process; what it shares with other processes lives
/// in the coordinator's runtime dir.
pub struct AskHuman {
    config: Config,
    coord: Result<Coordinator, Arc<CoordError>>,
    open: Box<Opener>,
    /// Checks the source before a question is said; `None`: opened and closed with `open`.
    check: Option<Box<Checker>>,
    /// Loads the prosody model for `[turn] mode = "smart"`.
    prosody: fn() -> Result<prosody::Shared, Unloaded>,
}

impl AskHuman {
    /// The service for `config`, coordinated through the runtime dir the environment
    /// names, listening through `[audio]`. A runtime dir that cannot be used does not stop
    /// the server: every question is refused with the reason.
    pub fn new(config: Config) -> AskHuman {
        let audio = config.audio.clone();
        let coord = Coordinator::from_env().map_err(Arc::new);
        if let Err(e) = &coord {
            tracing::warn!(error = %e, "ask_human will refuse every question");
        }
        let checked = audio.clone();
        AskHuman {
            check: Some(Box::new(move |endpoint| {
                crate::source::check(&checked, endpoint)
            })),
            ..AskHuman::with_parts(
                config,
                coord,
                Box::new(move |endpoint| crate::source::open(&audio, endpoint)),
            )
        }
        .with_prosody(|| Ok(prosody::load_installed()?))
    }

    /// The service with its parts given (tests pass a scratch coordinator and a fake
    /// source), without the prosody model.
    pub fn with_parts(
        config: Config,
        coord: Result<Coordinator, Arc<CoordError>>,
        open: Box<Opener>,
    ) -> AskHuman {
        AskHuman {
            config,
            coord,
            open,
            check: None,
            prosody: || Err(Unloaded::NotNeeded("no prosody model was given")),
        }
    }

    /// The same service, loading the prosody model with `load` when a smart turn first
    /// needs it.
    pub fn with_prosody(self, load: fn() -> Result<prosody::Shared, Unloaded>) -> AskHuman {
        AskHuman {
            prosody: load,
            ..self
        }
    }

    /// The endpoint policy for a question with `timeout_s`.
    pub fn endpoint(&self, timeout_s: u32) -> EndpointConfig {
        let ms = |s: f64| yazses_core::time::Duration::from_millis((s * 1000.0).round() as u64);
        EndpointConfig {
            end_silence: ms(self.config.mcp.ask_human_end_silence_s),
            no_speech: ms(self.config.mcp.ask_human_no_speech_s),
            timeout: Some(yazses_core::time::Duration::from_secs(u64::from(timeout_s))),
            ..EndpointConfig::default()
        }
    }

    /// Asks `question` on behalf of `caller` and waits for the answer. Blocking: run it
    /// off the async executor. `transcriber` is called only when there is speech to
    /// transcribe; `on_wait` hears who holds the microphone while the question queues.
    pub fn ask(
        &self,
        caller: &str,
        question: &str,
        timeout_s: u32,
        transcriber: impl FnOnce() -> Result<Arc<dyn Transcriber>, Unloaded> + Send + 'static,
        cancel: &AtomicBool,
        mut on_step: impl FnMut(Step<'_>),
    ) -> Result<Answer, AskError> {
        let question = question.trim();
        if question.is_empty() {
            return Err(AskError::BadQuestion(
                "The question is empty; pass the question to ask in `question`.".into(),
            ));
        }
        if question.chars().count() > MAX_QUESTION_CHARS {
            return Err(AskError::BadQuestion(format!(
                "The question is longer than {MAX_QUESTION_CHARS} characters; ask something short enough to answer out loud."
            )));
        }
        let coord = self
            .coord
            .as_ref()
            .map_err(|e| AskError::Coordination(e.clone()))?;
        let limit = self.config.mcp.ask_human_per_hour;
        // Refuse a spent budget before queueing; the binding check is the reservation.
        let now = unix_ms();
        coord.ledger().status(limit, now)?.check(now)?;
        let caller = caller_name(caller);
        let options = Options::spoken(self.config.transcribe.threads);
        let hearing = Hear::new(
            Purpose::AskHuman,
            &caller,
            self.endpoint(timeout_s),
            options,
        )
        .asking(question)
        .queue_timeout(Duration::from_secs_f64(self.config.mcp.ask_human_queue_s))
        .turn(self.config.turn)
        .begin(coord, cancel, &mut on_step)?;
        let queued_ms = hearing.queued_ms();
        match &self.check {
            Some(check) => hearing.check_source(check)?,
            None => hearing.check_source(&|endpoint| (self.open)(endpoint).map(drop))?,
        }
        let reservation = coord.ledger().reserve(limit, unix_ms())?;
        let refund = |e: AskError| {
            if let Err(settle) = coord.ledger().settle(&reservation, false, unix_ms()) {
                tracing::warn!(error = %settle, "a reserved charge could not be refunded");
            }
            e
        };
        // The smart turn reads the words while the user is still answering: the model
        // loads while the question is spoken, not at the first check, where a large
        // model's load would hold up the frames (the microphone's ring holds 4 s).
        let (model, voice) = match self.config.turn.mode {
            TurnMode::Smart => (in_background(transcriber), in_background(self.prosody)),
            TurnMode::Fixed => (
                Loader::new(transcriber),
                Loader::unavailable("the fixed turn policy hears no voice"),
            ),
        };
        let said = format!("{caller} asks: {question}");
        let speak = &self.config.speak;
        on_step(Step::Speaking);
        if speak.enabled {
            let timeout = crate::speak::timeout_for(&said, speak.timeout_s);
            // Whatever the microphone picks up after a question the user never heard is
            // not an answer to it.
            crate::speak::say(&speak.command, &said, timeout, cancel).map_err(|e| {
                refund(match e {
                    SpeakError::Cancelled => AskError::Cancelled,
                    e => AskError::NotSpoken(e),
                })
            })?;
        } else {
            crate::speak::print(&said);
        }
        if cancel.load(Ordering::SeqCst) {
            return Err(refund(AskError::Cancelled));
        }
        // The microphone is closed and the next question may start once this returns.
        let heard = hearing
            .listen(&*self.open, model, voice, cancel, &mut on_step)
            .map_err(|e| refund(e.into()))?;
        let said = heard.said.unwrap_or_default();
        let answer = Answer {
            answer: said.text,
            asked_as: caller.clone(),
            heard: said.heard,
            stopped_because: heard.utterance.stopped_because,
            listen_ms: heard.utterance.listen_ms,
            queued_ms,
            spoken: speak.enabled,
            turn: heard.utterance.turn,
        };
        coord
            .ledger()
            .settle(&reservation, answer.heard, unix_ms())?;
        Ok(answer)
    }
}

/// The caller's name as spoken: its own words, trimmed to something sayable.
fn caller_name(caller: &str) -> String {
    let name: String = caller
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'))
        .take(40)
        .collect();
    let name = name.trim();
    if name.is_empty() {
        "An agent".to_owned()
    } else {
        name.to_owned()
    }
}

// The speech commands of these tests are `sh` scripts.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::capture::tests::voice;
    use crate::coord::RuntimeDir;
    use crate::source::FileSource;
    use crate::transcribe::{Said, TranscribeError};

    /// Says a fixed text for any audio.
    struct FakeTranscriber(&'static str);

    impl Transcriber for FakeTranscriber {
        fn said(&self, _: Vec<i16>, _: &Options) -> Result<Said, TranscribeError> {
            Ok(Said {
                text: self.0.into(),
                heard: !self.0.is_empty(),
            })
        }
    }

    fn runtime_dir(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("yazses-ask-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        p
    }

    /// A service over a scratch runtime dir whose microphone plays `samples`.
    fn service(per_hour: u32, dir: &std::path::Path, samples: Vec<i16>) -> AskHuman {
        let mut config = Config::default();
        config.mcp.ask_human = true;
        config.mcp.ask_human_per_hour = per_hour;
        config.mcp.ask_human_queue_s = 1.0;
        config.speak.command = vec!["true".into()];
        let coord = Coordinator::new(RuntimeDir::at(dir).unwrap());
        AskHuman::with_parts(
            config,
            Ok(coord),
            Box::new(move |_| Ok(Box::new(FileSource::from_samples(samples.clone(), false)))),
        )
    }

    fn says(text: &'static str) -> Arc<dyn Transcriber> {
        Arc::new(FakeTranscriber(text))
    }

    fn never_loaded() -> Result<Arc<dyn Transcriber>, Unloaded> {
        panic!("no model is needed here")
    }

    fn ask(
        s: &AskHuman,
        t: impl FnOnce() -> Result<Arc<dyn Transcriber>, Unloaded> + Send + 'static,
    ) -> Result<Answer, AskError> {
        s.ask("agent", "Ready?", 10, t, &AtomicBool::new(false), |_| {})
    }

    #[test]
    fn heard_answers_are_charged_to_one_budget_shared_by_every_service() {
        let dir = runtime_dir("budget");
        let mut speech = vec![0; 16 * 500];
        speech.extend(voice(800));
        let a = service(2, &dir, speech.clone());
        let b = service(2, &dir, speech.clone());
        let answer = ask(&a, || Ok(says("yes"))).unwrap();
        assert_eq!((answer.answer.as_str(), answer.heard), ("yes", true));
        assert_eq!(answer.stopped_because, End::EndOfSpeech);
        ask(&b, || Ok(says("no"))).unwrap();
        // A third service, "started afterwards", finds the budget spent.
        let c = service(2, &dir, speech);
        let err = ask(&c, never_loaded).unwrap_err();
        assert!(matches!(err, AskError::Budget { used: 2, .. }), "{err}");
        assert!(err.to_string().contains("past hour"), "{err}");
    }

    /// Says `text` for any audio, and notes each call's beam and length of audio.
    struct Counting {
        text: &'static str,
        calls: std::sync::Mutex<Vec<(usize, usize)>>,
    }

    impl Transcriber for Counting {
        fn said(&self, samples: Vec<i16>, options: &Options) -> Result<Said, TranscribeError> {
            self.calls
                .lock()
                .unwrap()
                .push((options.beam_size, samples.len()));
            Ok(Said {
                text: self.text.into(),
                heard: true,
            })
        }
    }

    /// One answer under `[turn] mode`, its transcript `text`; the answer and the model's
    /// calls (beam, samples), in order.
    fn answer_under(
        mode: crate::turn::TurnMode,
        text: &'static str,
        name: &str,
    ) -> (Answer, Vec<(usize, usize)>) {
        let dir = runtime_dir(name);
        let mut speech = vec![0; 16 * 500];
        speech.extend(voice(800));
        let mut s = service(5, &dir, speech);
        s.config.turn.mode = mode;
        let counting = Arc::new(Counting {
            text,
            calls: Default::default(),
        });
        let t = counting.clone();
        let answer = ask(&s, move || Ok(t as Arc<dyn Transcriber>)).unwrap();
        let calls = counting.calls.lock().unwrap().clone();
        (answer, calls)
    }

    #[test]
    fn a_finished_sentence_ends_the_answer_where_fixed_would_and_is_not_transcribed_after_it() {
        use crate::turn::{Signal, TurnMode, Verdict};
        let (smart, calls) = answer_under(TurnMode::Smart, "Ship it on Friday.", "turn-smart");
        let (fixed, fixed_calls) =
            answer_under(TurnMode::Fixed, "Ship it on Friday.", "turn-fixed");
        assert_eq!(
            (smart.answer.as_str(), smart.heard),
            ("Ship it on Friday.", true)
        );
        assert_eq!(smart.stopped_because, End::EndOfSpeech);
        // The check reads greedily, and the same audio is read again with a beam while
        // the turn waits; nothing is read after the stop. Fixed reads the capture once,
        // greedily, after it.
        let beams = |calls: &[(usize, usize)]| calls.iter().map(|c| c.0).collect::<Vec<_>>();
        assert_eq!((beams(&calls), beams(&fixed_calls)), (vec![1, 5], vec![1]));
        assert_eq!(
            calls[0].1, calls[1].1,
            "both reads are of the checked audio"
        );
        assert_ne!(calls[1].1, fixed_calls[0].1, "not of the whole capture");
        let turn = smart.turn.expect("a smart turn reports its check");
        assert_eq!(
            (turn.decision, turn.decided_by, turn.silence_ms),
            (Verdict::Finished, Signal::Words, 300)
        );
        // Judged at 0.3 s of silence, stopped at 1.2 s, where the fixed policy stops.
        assert_eq!(smart.listen_ms - turn.at_ms, 900, "{turn:?}");
        assert_eq!(fixed.listen_ms, smart.listen_ms, "{fixed:?} {turn:?}");
        assert!(fixed.turn.is_none());
    }

    /// Progress says what is happening: once listening is over, the answer is being
    /// read, whichever end of turn stopped it.
    #[test]
    fn after_listening_progress_says_transcribing_under_either_turn_policy() {
        use crate::turn::TurnMode;
        for mode in [TurnMode::Smart, TurnMode::Fixed] {
            let dir = runtime_dir(&format!("steps-{mode:?}"));
            let mut speech = vec![0; 16 * 500];
            speech.extend(voice(800));
            let mut s = service(5, &dir, speech);
            s.config.turn.mode = mode;
            let mut steps = Vec::new();
            s.ask(
                "agent",
                "Ready?",
                10,
                || Ok(says("Ship it on Friday.")),
                &AtomicBool::new(false),
                |step| steps.push(step.describe()),
            )
            .unwrap();
            assert_eq!(
                steps,
                [
                    "saying the question",
                    "listening for the answer",
                    "transcribing the answer"
                ],
                "{mode:?}"
            );
        }
    }

    #[test]
    fn a_trailing_conjunction_keeps_listening_to_the_longest_pause() {
        use crate::turn::{TurnMode, Verdict};
        let (smart, calls) = answer_under(TurnMode::Smart, "Ship it, because", "turn-wait");
        let (fixed, _) = answer_under(TurnMode::Fixed, "Ship it, because", "turn-wait-fixed");
        assert_eq!(smart.turn.unwrap().decision, Verdict::Unfinished);
        // Waited 3 s instead of 1.2 s; nothing new was said, so the check's words stand.
        assert_eq!(smart.listen_ms - fixed.listen_ms, 1800);
        assert_eq!(smart.answer.as_str(), "Ship it, because");
        assert_eq!(
            calls.len(),
            2,
            "the check's read and the answer's, none after: {calls:?}"
        );
    }

    #[test]
    fn a_model_that_fails_to_load_at_the_check_leaves_the_acoustics_to_decide_and_is_reported() {
        let dir = runtime_dir("turn-noload");
        let mut speech = vec![0; 16 * 500];
        speech.extend(voice(800));
        let mut s = service(5, &dir, speech);
        s.config.turn.mode = crate::turn::TurnMode::Smart;
        let missing = || {
            let e = crate::model::ResolveError::NoFile("ggml-tiny.en.bin".into());
            Err(crate::transcribe::ModelError::NotFound(e).into())
        };
        let err = ask(&s, missing).unwrap_err();
        assert!(
            matches!(
                err,
                AskError::Transcribe(HearError::Model(Unloaded::Transcriber(_)))
            ),
            "{err}"
        );
        assert!(err.to_string().contains("ggml-tiny.en.bin"), "{err}");
    }

    #[test]
    fn silence_and_empty_transcripts_are_not_charged() {
        let dir = runtime_dir("free");
        let quiet = service(1, &dir, vec![0; 1600]);
        for _ in 0..2 {
            let a = ask(&quiet, never_loaded).unwrap();
            assert!(!a.heard && a.answer.is_empty());
            assert_eq!(a.stopped_because, End::NoSpeech);
        }
        let noise = service(1, &dir, voice(800));
        for _ in 0..2 {
            let a = ask(&noise, || Ok(says(""))).unwrap();
            assert!(!a.heard, "{a:?}");
        }
        let status = Coordinator::new(RuntimeDir::at(&dir).unwrap())
            .ledger()
            .status(1, unix_ms())
            .unwrap();
        assert_eq!(status.spent, 0);
    }

    #[test]
    fn during_a_dictation_it_refuses_at_once_and_charges_nothing() {
        let dir = runtime_dir("hold");
        let s = service(1, &dir, voice(800));
        let hold = crate::coord::take_now(&dir, Purpose::Dictate, "yazses dictate");
        let err = ask(&s, never_loaded).unwrap_err();
        assert!(matches!(err, AskError::Held(_)), "{err}");
        assert!(
            err.to_string().contains("dictating")
                && err.to_string().contains("try again in a minute"),
            "{err}"
        );
        drop(hold);
        ask(&s, || Ok(says("ok"))).unwrap();
    }

    #[test]
    fn a_busy_microphone_queues_then_times_out_naming_the_holder() {
        let dir = runtime_dir("busy");
        let s = service(3, &dir, voice(800));
        let _held = crate::coord::take_now(&dir, Purpose::AskHuman, "other-agent");
        let no = AtomicBool::new(false);
        let mut told = Vec::new();
        let err = s
            .ask("agent", "Ready?", 10, never_loaded, &no, |step| {
                told.push(step.describe())
            })
            .unwrap_err();
        assert!(matches!(err, AskError::Busy { waited_s: 1, .. }), "{err}");
        assert!(
            err.to_string().contains("held by other-agent, ask_human"),
            "{err}"
        );
        assert_eq!(
            told,
            ["waiting for the microphone (held by other-agent, ask_human)"]
        );
    }

    /// Someone who hears a question expects to be listened to.
    #[test]
    fn a_microphone_that_cannot_open_refuses_before_the_question_is_said() {
        let dir = runtime_dir("no-mic");
        let said = dir.join("said.txt");
        let mut config = Config::default();
        config.speak.command = vec![
            "sh".into(),
            "-c".into(),
            format!("echo \"$1\" > {}", said.display()),
            "speak".into(),
        ];
        let s = AskHuman::with_parts(
            config,
            Ok(Coordinator::new(RuntimeDir::at(&dir).unwrap())),
            Box::new(|_| {
                Err(SourceError::Audio(crate::audio::AudioError::Io {
                    path: "/nowhere/answer.wav".into(),
                    source: std::io::ErrorKind::NotFound.into(),
                }))
            }),
        );
        let mut steps = Vec::new();
        let err = s
            .ask(
                "agent",
                "Ready?",
                10,
                never_loaded,
                &AtomicBool::new(false),
                |step| steps.push(step.describe()),
            )
            .unwrap_err();
        assert!(matches!(err, AskError::Capture(_)), "{err}");
        assert!(err.to_string().contains("/nowhere/answer.wav"), "{err}");
        assert!(steps.is_empty(), "{steps:?}");
        assert!(!said.exists(), "the question was said");
    }

    #[test]
    fn a_microphone_that_fails_refunds_the_reservation() {
        let dir = runtime_dir("fails");
        let mut config = Config::default();
        config.mcp.ask_human_per_hour = 1;
        config.speak.command = vec!["true".into()];
        let s = AskHuman::with_parts(
            config,
            Ok(Coordinator::new(RuntimeDir::at(&dir).unwrap())),
            Box::new(|_| {
                Err(SourceError::Missing(
                    "no input device is named \"x\"".into(),
                ))
            }),
        );
        for _ in 0..2 {
            let err = ask(&s, never_loaded).unwrap_err();
            assert!(matches!(err, AskError::Capture(_)), "{err}");
        }
    }

    #[test]
    fn an_unusable_runtime_dir_refuses_with_the_reason() {
        let mut config = Config::default();
        config.speak.command = vec!["true".into()];
        let s = AskHuman::with_parts(
            config,
            Err(Arc::new(CoordError::RuntimeDir {
                path: "/x".into(),
                why: "it belongs to user id 7".into(),
            })),
            Box::new(|_| panic!("never opened")),
        );
        let err = ask(&s, never_loaded).unwrap_err();
        assert!(err.to_string().contains("belongs to user id 7"), "{err}");
    }

    #[test]
    fn empty_and_overlong_questions_are_refused() {
        let s = service(3, &runtime_dir("questions"), vec![]);
        for q in ["", "   ", &"why ".repeat(200)] {
            let err = s
                .ask(
                    "agent",
                    q,
                    10,
                    never_loaded,
                    &AtomicBool::new(false),
                    |_| {},
                )
                .unwrap_err();
            assert!(matches!(err, AskError::BadQuestion(_)), "{err}");
        }
    }

    /// A question the user never heard has no answer to listen for.
    #[test]
    fn a_question_that_could_not_be_spoken_is_refused_and_nothing_is_listened_to() {
        let dir = runtime_dir("unspoken");
        for command in [vec!["/nonexistent/speaker"], vec!["false"]] {
            let mut config = Config::default();
            config.mcp.ask_human_per_hour = 1;
            config.speak.command = command.iter().map(|s| (*s).to_owned()).collect();
            let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let seen = opened.clone();
            let s = AskHuman::with_parts(
                config,
                Ok(Coordinator::new(RuntimeDir::at(&dir).unwrap())),
                Box::new(move |_| {
                    seen.fetch_add(1, Ordering::SeqCst);
                    Ok(Box::new(FileSource::from_samples(voice(800), false)))
                }),
            );
            let err = ask(&s, never_loaded).unwrap_err();
            assert!(matches!(err, AskError::NotSpoken(_)), "{err}");
            assert!(
                err.to_string().contains(command[0])
                    && err.to_string().contains("nothing was listened for"),
                "{err}"
            );
            assert_eq!(
                opened.load(Ordering::SeqCst),
                1,
                "{command:?}: checked before speaking, never opened to listen"
            );
        }
        // Nothing was charged: a question that was heard still fits in the budget of 1.
        let mut speech = vec![0; 16 * 500];
        speech.extend(voice(800));
        let ok = service(1, &dir, speech);
        let answer = ask(&ok, || Ok(says("yes"))).unwrap();
        assert!(answer.spoken && answer.heard, "{answer:?}");
    }

    #[test]
    fn with_speaking_turned_off_the_answer_says_the_question_was_only_printed() {
        let dir = runtime_dir("printed");
        let mut config = Config::default();
        config.speak.enabled = false;
        config.speak.command = vec!["/nonexistent/speaker".into()];
        let mut speech = vec![0; 16 * 500];
        speech.extend(voice(800));
        let s = AskHuman::with_parts(
            config,
            Ok(Coordinator::new(RuntimeDir::at(&dir).unwrap())),
            Box::new(move |_| Ok(Box::new(FileSource::from_samples(speech.clone(), false)))),
        );
        let answer = ask(&s, || Ok(says("yes"))).unwrap();
        assert!(!answer.spoken, "{answer:?}");
        assert_eq!(answer.answer, "yes");
    }

    #[test]
    fn the_caller_name_is_sayable() {
        assert_eq!(caller_name("claude-code"), "claude-code");
        assert_eq!(caller_name("<script>evil</script>"), "scriptevilscript");
        assert_eq!(caller_name("   "), "An agent");
    }
}
