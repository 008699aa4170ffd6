//! The end-of-speech (autostop) policy.
//!
//! A pure function of a stream of speech/no-speech frames and the clock: it records until
//! speech has started and then `end_silence` of trailing silence has passed, or until the
//! caller's timeout, whichever comes first. No speech at all within `no_speech` ends the
//! wait with no answer. Speech counts as started only after `min_speech` of it without a
//! break, so a click or a cough does not start it. Nothing runs past [`HARD_CAP`].
//!
//! Each frame is reported with the instant its audio ends. A pause shorter than
//! `end_silence` inside an answer never stops it: any speech frame after the start
//! restarts the silence count.
//!
//! ```
//! use yazses_core::endpoint::{Decision, Endpoint, EndpointConfig, StopReason};
//! use yazses_core::time::{Duration, Instant};
//!
//! let mut ep = Endpoint::new(EndpointConfig::default(), Instant::ZERO);
//! let mut t = Instant::ZERO;
//! let mut frame = |ep: &mut Endpoint, speech| {
//!     t += Duration::from_millis(10);
//!     ep.update(speech, t)
//! };
//! for _ in 0..50 { frame(&mut ep, true); }              // 0.5 s of speech
//! for _ in 0..119 { frame(&mut ep, false); }            // 1.19 s of silence
//! match frame(&mut ep, false) {                         // 1.2 s: stop
//!     Decision::Stop(stop) => {
//!         assert_eq!(stop.reason, StopReason::EndOfSpeech);
//!         assert_eq!(stop.at, Instant::from_millis(1700));
//!         assert_eq!(stop.speech_start, Some(Instant::ZERO));
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```

use crate::time::{Duration, Instant};
use core::fmt;

/// No capture runs longer than this, whatever the caller asks: 120 s.
pub const HARD_CAP: Duration = Duration::from_secs(120);

/// The policy's tuning. [`Default`]: 1.2 s of end silence, 8 s without speech, 150 ms of
/// speech to count as started, no timeout but the 120 s cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EndpointConfig {
    /// Trailing silence that ends an answer once speech has started (1.2 s).
    pub end_silence: Duration,
    /// How long to wait for speech to start before giving up (8 s).
    pub no_speech: Duration,
    /// Unbroken speech needed before speech counts as started (150 ms).
    pub min_speech: Duration,
    /// The caller's overall limit, if any; clamped to [`HARD_CAP`].
    pub timeout: Option<Duration>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            end_silence: Duration::from_millis(1200),
            no_speech: Duration::from_secs(8),
            min_speech: Duration::from_millis(150),
            timeout: None,
        }
    }
}

/// A policy tuning that cannot work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EndpointConfigError {
    /// `end_silence` is zero: every gap between words would end the answer.
    ZeroEndSilence,
    /// `timeout` is zero.
    ZeroTimeout,
    /// `min_speech` is not shorter than `no_speech`, so speech could never start in time.
    MinSpeechTooLong,
}

impl fmt::Display for EndpointConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EndpointConfigError::ZeroEndSilence => "end_silence must be longer than zero",
            EndpointConfigError::ZeroTimeout => "timeout must be longer than zero",
            EndpointConfigError::MinSpeechTooLong => "min_speech must be shorter than no_speech",
        })
    }
}

impl core::error::Error for EndpointConfigError {}

impl EndpointConfig {
    /// Checks that the tuning can ever stop for the right reason.
    pub const fn validate(&self) -> Result<(), EndpointConfigError> {
        if self.end_silence.total_micros() == 0 {
            return Err(EndpointConfigError::ZeroEndSilence);
        }
        if let Some(t) = self.timeout
            && t.total_micros() == 0
        {
            return Err(EndpointConfigError::ZeroTimeout);
        }
        if self.min_speech.total_micros() >= self.no_speech.total_micros() {
            return Err(EndpointConfigError::MinSpeechTooLong);
        }
        Ok(())
    }

    /// The limit that applies: the caller's timeout or the hard cap, whichever is
    /// sooner, and the reason a stop at that limit reports.
    pub fn limit(&self) -> (Duration, StopReason) {
        match self.timeout {
            Some(t) if t <= HARD_CAP => (t, StopReason::Timeout),
            _ => (HARD_CAP, StopReason::Cap),
        }
    }
}

/// Why a capture stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum StopReason {
    /// Speech started and then `end_silence` of silence followed.
    EndOfSpeech,
    /// No speech started within `no_speech`.
    NoSpeech,
    /// The caller's timeout passed.
    Timeout,
    /// The hard cap passed.
    Cap,
}

impl StopReason {
    /// The snake_case name used in JSON and MCP results.
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::EndOfSpeech => "end_of_speech",
            StopReason::NoSpeech => "no_speech",
            StopReason::Timeout => "timeout",
            StopReason::Cap => "cap",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The end of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stop {
    /// Why it stopped.
    pub reason: StopReason,
    /// When the policy decided to stop.
    pub at: Instant,
    /// Where the first speech that counted began (keep pre-roll before it).
    pub speech_start: Option<Instant>,
    /// Where the last speech frame ended, once speech had started.
    pub speech_end: Option<Instant>,
}

/// What to do after a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Decision {
    /// Keep recording; with no frame before `poll_at`, call [`Endpoint::poll`] then.
    Continue {
        /// The next deadline.
        poll_at: Instant,
    },
    /// Stop recording.
    Stop(Stop),
}

impl Decision {
    /// The stop, if this decision is one.
    pub const fn stop(&self) -> Option<Stop> {
        match self {
            Decision::Stop(s) => Some(*s),
            Decision::Continue { .. } => None,
        }
    }
}

/// The policy's state for one capture.
#[derive(Clone, Debug)]
pub struct Endpoint {
    config: EndpointConfig,
    started_at: Instant,
    last_now: Instant,
    run_start: Option<Instant>,
    speech_start: Option<Instant>,
    last_speech_end: Option<Instant>,
    stopped: Option<Stop>,
}

impl Endpoint {
    /// A capture that began at `started_at`. An invalid config still runs (see
    /// [`EndpointConfig::validate`]); a zero timeout stops at the first frame.
    pub fn new(config: EndpointConfig, started_at: Instant) -> Self {
        Endpoint {
            config,
            started_at,
            last_now: started_at,
            run_start: None,
            speech_start: None,
            last_speech_end: None,
            stopped: None,
        }
    }

    /// The tuning in use.
    pub const fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// Where counted speech began, once it has.
    pub const fn speech_start(&self) -> Option<Instant> {
        self.speech_start
    }

    /// Where the last speech frame ended, once speech has started.
    pub const fn speech_end(&self) -> Option<Instant> {
        match self.speech_start {
            Some(_) => self.last_speech_end,
            None => None,
        }
    }

    /// The stop, once decided.
    pub const fn stopped(&self) -> Option<Stop> {
        self.stopped
    }

    /// Feeds one frame's VAD decision; `now` is the instant the frame's audio ends.
    /// Frames must come in time order; after a stop, every call returns the same stop.
    pub fn update(&mut self, speech: bool, now: Instant) -> Decision {
        self.update_voiced(speech, speech, now)
    }

    /// [`Endpoint::update`] for a detector with a hangover: `speech` is its decision and
    /// `voiced` whether the frame was speech on its own level (see
    /// [`crate::vad::VadFrame::voiced`]). Runs of `speech` start an answer; the silence
    /// that ends it is timed from the last `voiced` frame, so a hangover does not add its
    /// length to every stop.
    pub fn update_voiced(&mut self, speech: bool, voiced: bool, now: Instant) -> Decision {
        if let Some(stop) = self.stopped {
            return Decision::Stop(stop);
        }
        if speech {
            let run_start = *self.run_start.get_or_insert(self.last_now);
            if voiced || self.last_speech_end.is_none() {
                self.last_speech_end = Some(now);
            }
            if self.speech_start.is_none() && now - run_start >= self.config.min_speech {
                self.speech_start = Some(run_start);
            }
        } else {
            self.run_start = None;
        }
        self.last_now = now;
        self.decide(now)
    }

    /// Checks the deadlines with no new frame: the time since the last frame counts as
    /// silence. For sources that may go quiet (a stalled serial link).
    pub fn poll(&mut self, now: Instant) -> Decision {
        if let Some(stop) = self.stopped {
            return Decision::Stop(stop);
        }
        self.run_start = None;
        self.decide(now)
    }

    /// The next instant a stop could be due with no speech in between.
    pub fn poll_at(&self) -> Instant {
        let (limit, _) = self.config.limit();
        let mut at = self.started_at + limit;
        match (self.speech_start, self.last_speech_end) {
            (Some(_), Some(end)) => at = at.min(end + self.config.end_silence),
            _ => at = at.min(self.started_at + self.config.no_speech),
        }
        at
    }

    fn decide(&mut self, now: Instant) -> Decision {
        let elapsed = now - self.started_at;
        let (limit, limit_reason) = self.config.limit();
        let reason = match (self.speech_start, self.last_speech_end) {
            (Some(_), Some(end)) if now - end >= self.config.end_silence => {
                Some(StopReason::EndOfSpeech)
            }
            (None, _) if self.run_start.is_none() && elapsed >= self.config.no_speech => {
                Some(StopReason::NoSpeech)
            }
            _ if elapsed >= limit => Some(limit_reason),
            _ => None,
        };
        match reason {
            Some(reason) => {
                let stop = Stop {
                    reason,
                    at: now,
                    speech_start: self.speech_start,
                    speech_end: self.speech_start.and(self.last_speech_end),
                };
                self.stopped = Some(stop);
                Decision::Stop(stop)
            }
            None => Decision::Continue {
                poll_at: self.poll_at(),
            },
        }
    }
}
