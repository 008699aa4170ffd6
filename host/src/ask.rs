//! `ask_human`: an agent asks the user a question out loud and gets the spoken answer.
//!
//! The flow: check the restraints, say "`<caller>` asks: `<question>`", open the capture
//! source, listen until the user stops (the core's end-of-speech policy, with pre-roll),
//! release the microphone, transcribe, and return the answer to the caller, and only to
//! the caller: nothing here types, pastes or sends it anywhere else.
//!
//! The restraints (ADR-020, kept by ADR-032):
//! 1. off by default: with `[mcp] ask_human = false` the MCP server does not offer it;
//! 2. an interrupt budget: `[mcp] ask_human_per_hour` answers per rolling hour, charged
//!    only when an answer was heard, kept for the life of the process;
//! 3. never during a dictation hold ([`Hold`]): refused with a retry hint, not charged;
//! 4. the caller is named in what is spoken;
//! 5. the answer goes back to the caller only.
//!
//! One question at a time: the microphone and the speaker sit behind one lock.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::vad::Vad;

use crate::capture::{self, Hold, StoppedBecause};
use crate::config::Config;
use crate::transcribe::{Engine, Options};

/// The longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 500;

/// What the caller gets back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Answer {
    /// What the user said, transcribed; empty when nothing was heard.
    pub answer: String,
    /// Whether the user said anything.
    pub heard: bool,
    /// Why listening stopped: the user stopped talking, nobody spoke in time, the
    /// caller's timeout, or the 120 s cap.
    pub stopped_because: StoppedBecause,
    /// How long the microphone listened, in milliseconds.
    pub listen_ms: u64,
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
        "The user is dictating right now and the microphone is in use; try again in a minute, or ask in text instead."
    )]
    Held,
    /// Another question is being asked.
    #[error("Another spoken question is in progress; wait for it to finish and try again.")]
    Busy,
    /// The microphone could not be opened or failed.
    #[error("The microphone could not be used ({0}); ask in text instead.")]
    Capture(String),
    /// The answer could not be transcribed.
    #[error("The answer was recorded but could not be transcribed ({0}); ask in text instead.")]
    Transcribe(String),
    /// The caller cancelled.
    #[error("The question was cancelled.")]
    Cancelled,
}

/// The rolling-hour budget.
#[derive(Debug)]
pub struct Budget {
    per_hour: usize,
    window: Duration,
    charged: VecDeque<Instant>,
}

impl Budget {
    /// A budget of `per_hour` answers per rolling hour.
    pub fn new(per_hour: u32) -> Budget {
        Budget {
            per_hour: per_hour as usize,
            window: Duration::from_secs(3600),
            charged: VecDeque::new(),
        }
    }

    /// `Err` with the minutes until the next answer may be charged, when spent.
    pub fn check(&mut self, now: Instant) -> Result<(), AskError> {
        while self
            .charged
            .front()
            .is_some_and(|&t| now.duration_since(t) >= self.window)
        {
            self.charged.pop_front();
        }
        if self.charged.len() < self.per_hour {
            return Ok(());
        }
        let oldest = *self.charged.front().expect("full, so not empty");
        let left = self.window.saturating_sub(now.duration_since(oldest));
        Err(AskError::Budget {
            used: self.charged.len(),
            retry_in_min: left.as_secs().div_ceil(60).max(1),
        })
    }

    /// Charges one heard answer.
    pub fn charge(&mut self, now: Instant) {
        self.charged.push_back(now);
    }
}

/// The `ask_human` service, one per process.
pub struct AskHuman {
    config: Config,
    budget: Mutex<Budget>,
    hold: Hold,
    mic: Mutex<()>,
}

impl AskHuman {
    /// A service with the budget full.
    pub fn new(config: Config, hold: Hold) -> AskHuman {
        AskHuman {
            budget: Mutex::new(Budget::new(config.mcp.ask_human_per_hour)),
            config,
            hold,
            mic: Mutex::new(()),
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
    /// off the async executor. `engine` is called only when there is speech to transcribe.
    pub fn ask(
        &self,
        caller: &str,
        question: &str,
        timeout_s: u32,
        engine: impl FnOnce() -> Result<Arc<Engine>, String>,
        cancel: &AtomicBool,
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
        if self.hold.is_held() {
            return Err(AskError::Held);
        }
        let _mic = self.mic.try_lock().map_err(|_| AskError::Busy)?;
        self.budget
            .lock()
            .map_err(|_| AskError::Busy)?
            .check(Instant::now())?;
        let spoken = format!("{} asks: {question}", caller_name(caller));
        if let Err(e) = crate::speak::say(&self.config.speak.command, &spoken) {
            // The question is on stderr either way; a missing voice is not worth failing.
            tracing::warn!(error = %e, "the question was printed but not spoken");
        }
        if self.hold.is_held() {
            return Err(AskError::Held);
        }
        let utterance = {
            let endpoint = self.endpoint(timeout_s);
            let mut source = capture::open_source(&self.config.audio, endpoint)
                .map_err(|e| AskError::Capture(e.to_string()))?;
            capture::listen(source.as_mut(), Vad::DEFAULT, endpoint, cancel).map_err(
                |e| match e {
                    capture::CaptureError::Cancelled => AskError::Cancelled,
                    e => AskError::Capture(e.to_string()),
                },
            )?
            // The source, and with it the microphone, is dropped here.
        };
        let mut answer = Answer {
            answer: String::new(),
            heard: false,
            stopped_because: utterance.stopped_because,
            listen_ms: utterance.listen_ms,
        };
        if utterance.samples.is_empty() {
            return Ok(answer);
        }
        let engine = engine().map_err(AskError::Transcribe)?;
        let options = Options {
            threads: self.config.transcribe.threads,
            // Latency matters more than the last word of accuracy for a short answer.
            beam_size: 1,
            fit_context: true,
            ..Options::default()
        };
        let said = engine
            .transcribe_capture(utterance.samples, &options)
            .map_err(|e| AskError::Transcribe(e.to_string()))?;
        answer.heard = said.heard;
        answer.answer = said.text;
        if answer.heard {
            self.budget
                .lock()
                .map_err(|_| AskError::Busy)?
                .charge(Instant::now());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_rolls_over_an_hour_and_says_when_to_retry() {
        let t0 = Instant::now();
        let mut b = Budget::new(2);
        b.check(t0).unwrap();
        b.charge(t0);
        b.charge(t0 + Duration::from_secs(600));
        match b.check(t0 + Duration::from_secs(900)) {
            Err(AskError::Budget {
                used: 2,
                retry_in_min: 45,
            }) => {}
            other => panic!("{other:?}"),
        }
        b.check(t0 + Duration::from_secs(3600)).unwrap();
    }

    fn service(per_hour: u32, hold: Hold) -> AskHuman {
        let mut config = Config::default();
        config.mcp.ask_human = true;
        config.mcp.ask_human_per_hour = per_hour;
        config.audio.source = crate::config::SourceKind::File;
        config.audio.file = "/nonexistent/never-opened.wav".into();
        config.speak.command = vec!["true".into()];
        AskHuman::new(config, hold)
    }

    fn never_loaded() -> Result<Arc<Engine>, String> {
        panic!("no model is needed to refuse")
    }

    #[test]
    fn during_a_dictation_hold_it_refuses_with_a_retry_hint_and_charges_nothing() {
        let hold = Hold::default();
        let ask = service(1, hold.clone());
        let guard = hold.hold();
        let err = ask
            .ask("agent", "Ready?", 10, never_loaded, &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(err, AskError::Held), "{err}");
        assert!(err.to_string().contains("try again in a minute"), "{err}");
        drop(guard);
        // Released: the call goes on to open the microphone (here a missing file).
        let err = ask
            .ask("agent", "Ready?", 10, never_loaded, &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(err, AskError::Capture(_)), "{err}");
        ask.budget.lock().unwrap().check(Instant::now()).unwrap();
    }

    #[test]
    fn one_question_at_a_time() {
        let ask = service(3, Hold::default());
        let _mic = ask.mic.lock().unwrap();
        let err = ask
            .ask("agent", "Ready?", 10, never_loaded, &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(err, AskError::Busy), "{err}");
    }

    #[test]
    fn empty_and_overlong_questions_are_refused() {
        let ask = service(3, Hold::default());
        for q in ["", "   ", &"why ".repeat(200)] {
            let err = ask
                .ask("agent", q, 10, never_loaded, &AtomicBool::new(false))
                .unwrap_err();
            assert!(matches!(err, AskError::BadQuestion(_)), "{err}");
        }
    }

    #[test]
    fn the_caller_name_is_sayable() {
        assert_eq!(caller_name("claude-code"), "claude-code");
        assert_eq!(caller_name("<script>evil</script>"), "scriptevilscript");
        assert_eq!(caller_name("   "), "An agent");
    }
}
