//! One capture: frames through the detector and the end-of-speech policy, with pre-roll,
//! until the policy stops it.
//!
//! [`Capture`] is the pure machine: frames in (each the next 10 ms of the capture's own
//! clock), the stop out, the kept audio at the end; no source, no clock read, no I/O, like
//! the core below it. [`listen`] is the blocking driver that pulls frames from a
//! [`FrameSource`] into it.
//!
//! Sources deliver the core's frames (16 kHz mono, 160 samples); a source that runs dry
//! (a file played as a microphone) is continued with silence, the way a real microphone
//! keeps delivering frames after the user stops talking, so the policy decides the end
//! exactly as it would live.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use yazses_core::autostop::Autostop;
use yazses_core::end::End;
use yazses_core::endpoint::{EndpointConfig, StopReason};
use yazses_core::frame::{FRAME_MS, FRAME_SAMPLES, Frame, samples_to_ms};
use yazses_core::time::Instant;
use yazses_core::vad::VadConfig;

use crate::source::{FrameSource, LinkStats, SourceError};
use crate::transcribe::Said;
use crate::turn::signals::NoSignals;
use crate::turn::{Signals, Step, Turn, TurnReport};

/// Why a capture failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The source could not deliver.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The caller cancelled.
    #[error("the capture was cancelled")]
    Cancelled,
}

/// What one capture heard.
#[derive(Clone, Debug, PartialEq)]
pub struct Utterance {
    /// The audio from the pre-roll before speech began to where the capture stopped;
    /// empty when no speech started. A push-to-talk capture keeps everything from its
    /// first frame instead.
    pub samples: Vec<i16>,
    /// Why it stopped.
    pub stopped_because: End,
    /// How long the capture listened, in milliseconds of audio.
    pub listen_ms: u64,
    /// Where speech began, in milliseconds from the start of the capture.
    pub speech_start_ms: Option<u64>,
    /// Whether the source (a dongle) decided the end, rather than the host's detector.
    pub ended_by_source: bool,
    /// What the link lost on the way.
    pub link: LinkStats,
    /// When the source failed part-way through a push-to-talk capture (a dongle unplugged
    /// mid-sentence), why; the audio up to that point is kept in `samples`.
    pub cut_short: Option<String>,
    /// How the end of the turn was judged, when a turn policy ran and checked.
    pub turn: Option<TurnReport>,
    /// The turn check's transcript, when nothing was said after it: the whole answer,
    /// already read (the caller may have a better read of the same audio under way:
    /// [`crate::turn::signals::Smart::settle`]).
    pub said: Option<Said>,
}

impl Utterance {
    /// How long the kept audio lasts, in milliseconds.
    pub fn audio_ms(&self) -> u64 {
        samples_to_ms(self.samples.len())
    }
}

/// Pre-roll kept before the start of speech.
pub const PRE_ROLL_MS: u64 = 300;

/// The pure capture machine: detector, policy and pre-roll over frames pushed in order.
#[derive(Debug)]
pub struct Capture {
    autostop: Autostop,
    /// Frames seen before speech started: the pre-roll candidates.
    recent: VecDeque<Frame>,
    window: usize,
    kept: Vec<i16>,
    started: bool,
    frames: u64,
    /// Whether the source decides the end (then only timeout and cap stop from here).
    source_decides: bool,
    /// Keep every frame from the start, not only from the pre-roll before speech (push
    /// to talk: the user said when to listen).
    keep_all: bool,
    /// The end-of-turn policy above the core's, when one runs.
    turn: Option<Turn>,
    /// What the turn policy wants of its signals before the next frame.
    due: Step,
    /// Where the speech ended before the pause whose signals were begun and not yet
    /// judged.
    reading: Option<u64>,
    /// Where the speech ended before the pause last judged.
    judged: Option<u64>,
}

/// Why and when a capture stopped, and who decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Why.
    pub reason: End,
    /// Milliseconds of audio from the start of the capture.
    pub at_ms: u64,
    /// Whether the source (a dongle) decided it.
    pub by_source: bool,
}

impl Capture {
    /// A capture at time zero; `source_decides` when the source ends speech itself.
    pub fn new(vad: VadConfig, endpoint: EndpointConfig, source_decides: bool) -> Capture {
        Capture::with_keep_all(vad, endpoint, source_decides, false)
    }

    /// Like [`Capture::new`]; with `keep_all`, every frame is kept from the first, as push
    /// to talk wants (the press said when speech begins; the first word is not lost to the
    /// detector's start-up).
    pub fn with_keep_all(
        vad: VadConfig,
        endpoint: EndpointConfig,
        source_decides: bool,
        keep_all: bool,
    ) -> Capture {
        let pre_frames = (PRE_ROLL_MS / FRAME_MS) as usize;
        // Enough frames to cover min_speech plus the pre-roll: speech counts as started
        // only after min_speech, and its start is reported then.
        let window = pre_frames + (endpoint.min_speech.total_millis() / FRAME_MS) as usize + 2;
        Capture {
            autostop: Autostop::new(vad, endpoint, Instant::ZERO),
            recent: VecDeque::with_capacity(window + 1),
            window,
            kept: Vec::new(),
            started: false,
            frames: 0,
            source_decides,
            keep_all,
            turn: None,
            due: Step::Listen,
            reading: None,
            judged: None,
        }
    }

    /// This capture with `turn` deciding the end of speech above the core (whose
    /// endpoint should be [`Turn::core_endpoint`]). A source that decides the end itself
    /// keeps deciding it; the turn is not used then.
    pub fn with_turn(mut self, turn: Turn) -> Capture {
        if !self.source_decides {
            self.turn = Some(turn);
        }
        self
    }

    /// The capture's own clock: milliseconds of audio pushed so far.
    fn now_ms(&self) -> u64 {
        self.frames * FRAME_MS
    }

    /// Where the last speech ended, in milliseconds of audio, once speech has started.
    fn speech_end_ms(&self) -> Option<u64> {
        self.autostop
            .endpoint()
            .speech_end()
            .map(Instant::total_millis)
    }

    /// Runs what the turn policy asked of `signals` after the last frame (begin reading,
    /// or judge); the stop, when the verdict ends the turn now.
    pub fn consult(&mut self, signals: &mut dyn Signals) -> Option<Stop> {
        if self.reading.is_some() && self.reading != self.speech_end_ms() {
            // The speaker went on before the check: that pause's read is not wanted.
            self.abandon_reading(signals);
        }
        if self.judged.is_some() && self.judged != self.speech_end_ms() {
            // The speaker went on after the check: what its verdict began is not wanted.
            self.judged = None;
            signals.resumed();
        }
        loop {
            let due = std::mem::replace(&mut self.due, Step::Listen);
            let (end, now) = (self.speech_end_ms()?, self.now_ms());
            match due {
                Step::Begin => {
                    signals.begin(&self.kept);
                    self.reading = Some(end);
                    self.turn.as_mut()?.begun(end);
                }
                Step::Check => {
                    self.reading = None;
                    self.judged = Some(end);
                    let judgement = signals.judge();
                    self.turn.as_mut()?.judged(end, now, judgement);
                }
                Step::Listen | Step::Stop => return None,
            }
            if let Some(stop) = self.turn_step() {
                return Some(stop);
            }
        }
    }

    /// Tells `signals` that the read begun for a pause will not be judged.
    fn abandon_reading(&mut self, signals: &mut dyn Signals) {
        if self.reading.take().is_some() {
            tracing::debug!(at_ms = self.now_ms(), "an end-of-turn read was abandoned");
            signals.abandon();
        }
    }

    fn turn_step(&mut self) -> Option<Stop> {
        let turn = self.turn.as_ref()?;
        match turn.step(self.speech_end_ms(), self.now_ms()) {
            Step::Listen => None,
            step @ (Step::Begin | Step::Check) => {
                self.due = step;
                None
            }
            Step::Stop => Some(Stop {
                reason: End::EndOfSpeech,
                at_ms: self.now_ms(),
                by_source: false,
            }),
        }
    }

    /// The next 10 ms; the stop, when the policy decides one.
    pub fn push(&mut self, frame: &Frame) -> Option<Stop> {
        self.frames += 1;
        let report = self.autostop.push_frame(frame);
        if self.started || self.keep_all {
            self.kept.extend_from_slice(frame);
        } else {
            self.recent.push_back(*frame);
            while self.recent.len() > self.window {
                self.recent.pop_front();
            }
            if let Some(start) = self.autostop.endpoint().speech_start() {
                let first = (start.total_millis() / 10).saturating_sub(PRE_ROLL_MS / FRAME_MS);
                let oldest = self.frames - self.recent.len() as u64;
                let skip = first.saturating_sub(oldest) as usize;
                for f in self.recent.drain(..).skip(skip) {
                    self.kept.extend_from_slice(&f);
                }
                self.started = true;
            }
        }
        // With a source that decides the end, the host keeps only the caller's timeout
        // and the hard cap of its own decisions.
        let core = report
            .decision
            .stop()
            .filter(|stop| {
                !self.source_decides || matches!(stop.reason, StopReason::Timeout | StopReason::Cap)
            })
            .map(|stop| Stop {
                reason: stop.reason.into(),
                at_ms: stop.at.total_millis(),
                by_source: false,
            });
        core.or_else(|| self.turn_step())
    }

    /// The user's own end (a push-to-talk release), after the frames pushed so far.
    pub fn released(&self) -> Stop {
        Stop {
            reason: End::Released,
            at_ms: self.now_ms(),
            by_source: false,
        }
    }

    /// The source's own end, after the frames pushed so far.
    pub fn source_stop(&self, reason: End) -> Stop {
        Stop {
            reason,
            at_ms: self.now_ms(),
            by_source: true,
        }
    }

    /// The utterance, once stopped.
    pub fn finish(self, stop: Stop, link: LinkStats) -> Utterance {
        let end = self.speech_end_ms();
        let turn = self.turn.as_ref().and_then(Turn::report).cloned();
        let said = self.turn.as_ref().and_then(|t| t.answer(end)).cloned();
        Utterance {
            samples: self.kept,
            stopped_because: stop.reason,
            listen_ms: stop.at_ms,
            speech_start_ms: self
                .autostop
                .endpoint()
                .speech_start()
                .map(Instant::total_millis),
            ended_by_source: stop.by_source,
            link,
            cut_short: None,
            turn,
            said,
        }
    }
}

/// Reads the end-of-turn signals over the audio kept so far (see [`Capture::consult`]).
pub type Judge<'a> = &'a mut dyn Signals;

/// Runs `source` through a [`Capture`] until it stops. `cancel` is checked every frame.
pub fn listen(
    source: &mut dyn FrameSource,
    vad: VadConfig,
    endpoint: EndpointConfig,
    cancel: &AtomicBool,
) -> Result<Utterance, CaptureError> {
    let capture = Capture::new(vad, endpoint, source.decides_end());
    listen_with(source, capture, cancel, None, None)
}

/// Runs `source` through `capture` until it stops, is cancelled, or `release` is set (the
/// user let go of push-to-talk: what was heard so far is the utterance). `judge` reads
/// the end-of-turn signals when the capture's turn policy asks; without one, every check
/// is unsure and the acoustic end silence decides.
pub fn listen_with(
    source: &mut dyn FrameSource,
    mut capture: Capture,
    cancel: &AtomicBool,
    release: Option<&AtomicBool>,
    mut judge: Option<Judge<'_>>,
) -> Result<Utterance, CaptureError> {
    // Every way out, an error included, passes the end below: a read begun for the last
    // pause and never judged is stopped there, not left running on the transcriber.
    let ended: Result<(Stop, Option<String>), CaptureError> = loop {
        if cancel.load(Ordering::Relaxed) {
            break Err(CaptureError::Cancelled);
        }
        if release.is_some_and(|r| r.load(Ordering::Relaxed)) {
            break Ok((capture.released(), None));
        }
        let next = match source.next_frame() {
            Ok(next) => next,
            // Push to talk keeps what the user said before the source failed: they said
            // it on purpose, and would have to say it again otherwise.
            Err(e) if capture.keep_all && capture.frames > 0 => {
                break Ok((capture.released(), Some(e.to_string())));
            }
            Err(e) => break Err(e.into()),
        };
        // A source that decides the end says so once its audio is all delivered.
        if next.is_none()
            && source.decides_end()
            && let Some(reason) = source.decided_end()
        {
            break Ok((capture.source_stop(reason), None));
        }
        if let Some(stop) = capture.push(&next.unwrap_or([0; FRAME_SAMPLES])) {
            break Ok((stop, None));
        }
        // The signals run between frames; a live source buffers what arrives meanwhile,
        // so a decision lands at the same point of the audio as it would with no delay.
        let stop = match judge.as_mut() {
            Some(judge) => capture.consult(&mut **judge),
            None => capture.consult(&mut NoSignals),
        };
        if let Some(stop) = stop {
            break Ok((stop, None));
        }
    };
    if let Some(judge) = judge.as_mut() {
        capture.abandon_reading(&mut **judge);
    }
    let (stop, cut_short) = ended?;
    let mut utterance = capture.finish(stop, source.link_stats());
    utterance.cut_short = cut_short;
    Ok(utterance)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::source::FileSource;

    /// A voiced, wavering tone the detector takes for speech, `ms` long.
    pub(crate) fn voice(ms: usize) -> Vec<i16> {
        (0..ms * 16)
            .map(|i| {
                let t = i as f32 / 16_000.0;
                (6000.0
                    * (t * 2.0 * std::f32::consts::PI * 220.0).sin()
                    * (1.0 + 0.5 * (t * 2.0 * std::f32::consts::PI * 3.0).sin()))
                    as i16
            })
            .collect()
    }

    fn run(samples: Vec<i16>, endpoint: EndpointConfig) -> Utterance {
        let mut src = FileSource::from_samples(samples, false);
        listen(
            &mut src,
            yazses_core::vad::Vad::DEFAULT,
            endpoint,
            &AtomicBool::new(false),
        )
        .unwrap()
    }

    #[test]
    fn an_answer_after_a_pause_is_kept_whole_with_pre_roll_and_stops_after_end_silence() {
        let mut audio = vec![0i16; 16 * 2000];
        audio.extend(voice(1000));
        audio.extend(vec![0i16; 16 * 700]);
        audio.extend(voice(800));
        let u = run(audio, EndpointConfig::default());
        assert_eq!(u.stopped_because, End::EndOfSpeech);
        let start = u.speech_start_ms.unwrap();
        assert!((1990..=2100).contains(&start), "{start}");
        // Pre-roll before speech, the pause, the second phrase: ~300 + 2500 ms, then the
        // trailing silence up to the stop.
        let kept_ms = u.audio_ms();
        assert_eq!(kept_ms, u.listen_ms - (start - PRE_ROLL_MS), "{u:?}");
        assert!(
            u.listen_ms >= 4500 + 1200 && u.listen_ms <= 4500 + 1500,
            "{}",
            u.listen_ms
        );
    }

    #[test]
    fn silence_stops_with_no_speech_and_no_audio() {
        let u = run(vec![0; 16 * 1000], EndpointConfig::default());
        assert_eq!(u.stopped_because, End::NoSpeech);
        assert_eq!(u.listen_ms, 8000);
        assert!(u.samples.is_empty());
    }

    #[test]
    fn the_callers_timeout_cuts_a_long_answer() {
        let endpoint = EndpointConfig {
            timeout: Some(yazses_core::time::Duration::from_secs(3)),
            ..EndpointConfig::default()
        };
        let u = run(voice(10_000), endpoint);
        assert_eq!(u.stopped_because, End::Timeout);
        assert_eq!(u.listen_ms, 3000);
    }

    /// A source that decides the end itself, after its frames run out (a dongle).
    struct Deciding {
        inner: FileSource,
        left: usize,
        end: End,
    }

    impl FrameSource for Deciding {
        fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            self.inner.next_frame()
        }
        fn decides_end(&self) -> bool {
            true
        }
        fn decided_end(&mut self) -> Option<End> {
            (self.left == 0).then_some(self.end)
        }
    }

    #[test]
    fn a_source_that_decides_the_end_is_followed_not_the_host_detector() {
        // 1 s of voice between silences, then the dongle's word at 5 s: the host's own
        // policy would have stopped at 3.2 s; the source's end is taken, at its last frame.
        let mut audio = vec![0i16; 16 * 1000];
        audio.extend(voice(1000));
        audio.extend(vec![0i16; 16 * 3000]);
        let mut src = Deciding {
            inner: FileSource::from_samples(audio, false),
            left: 500,
            end: End::EndOfSpeech,
        };
        let u = listen(
            &mut src,
            yazses_core::vad::Vad::DEFAULT,
            EndpointConfig::default(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(u.ended_by_source);
        assert_eq!(u.listen_ms, 5000);
        assert_eq!(u.stopped_because, End::EndOfSpeech);
        assert!(u.speech_start_ms.is_some());
    }

    #[test]
    fn the_callers_timeout_still_cuts_a_source_that_decides_the_end() {
        let endpoint = EndpointConfig {
            timeout: Some(yazses_core::time::Duration::from_secs(2)),
            ..EndpointConfig::default()
        };
        let mut src = Deciding {
            inner: FileSource::from_samples(voice(10_000), false),
            left: 1000,
            end: End::EndOfSpeech,
        };
        let u = listen(
            &mut src,
            yazses_core::vad::Vad::DEFAULT,
            endpoint,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(!u.ended_by_source);
        assert_eq!(u.stopped_because, End::Timeout);
        assert_eq!(u.listen_ms, 2000);
    }

    #[test]
    fn a_cancelled_capture_says_so() {
        let mut src = FileSource::from_samples(voice(1000), false);
        let err = listen(
            &mut src,
            yazses_core::vad::Vad::DEFAULT,
            EndpointConfig::default(),
            &AtomicBool::new(true),
        )
        .unwrap_err();
        assert!(matches!(err, CaptureError::Cancelled));
    }

    /// Signals that note what they are asked, and find every turn finished.
    #[derive(Default)]
    struct Noted(Vec<&'static str>);

    impl Signals for Noted {
        fn begin(&mut self, _: &[i16]) {
            self.0.push("begin");
        }
        fn judge(&mut self) -> crate::turn::Judgement {
            self.0.push("judge");
            crate::turn::Judgement::of_words(crate::transcribe::Said {
                text: "Ship it.".into(),
                heard: true,
            })
        }
        fn abandon(&mut self) {
            self.0.push("abandon");
        }
        fn resumed(&mut self) {
            self.0.push("resumed");
        }
    }

    /// A quiet room (about -75 dBFS of noise): exact zeros hold the detector's voiced
    /// tail for half a second longer than any microphone does.
    fn room(ms: usize) -> Vec<i16> {
        let mut x = 1u32;
        (0..ms * 16)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 29) as i16 - 4
            })
            .collect()
    }

    fn noted_under_smart_turn(
        audio: Vec<i16>,
        endpoint: EndpointConfig,
    ) -> (Vec<&'static str>, Utterance) {
        let mut src = FileSource::from_samples(audio, false);
        let (noted, u) = noted_under_smart_turn_from(&mut src, endpoint);
        (noted, u.unwrap())
    }

    fn noted_under_smart_turn_from(
        src: &mut dyn FrameSource,
        endpoint: EndpointConfig,
    ) -> (Vec<&'static str>, Result<Utterance, CaptureError>) {
        let config = crate::turn::TurnConfig {
            mode: crate::turn::TurnMode::Smart,
            ..crate::turn::TurnConfig::default()
        };
        let turn = Turn::new(config, &endpoint);
        let core = turn.core_endpoint(&endpoint);
        let capture = Capture::new(yazses_core::vad::Vad::DEFAULT, core, false).with_turn(turn);
        let mut noted = Noted::default();
        let u = listen_with(
            src,
            capture,
            &AtomicBool::new(false),
            None,
            Some(&mut noted),
        );
        (noted.0, u)
    }

    /// A microphone unplugged after `left` frames.
    struct Unplugged {
        inner: FileSource,
        left: usize,
    }

    impl FrameSource for Unplugged {
        fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
            if self.left == 0 {
                return Err(SourceError::Gone("the microphone was unplugged".into()));
            }
            self.left -= 1;
            self.inner.next_frame()
        }
    }

    #[test]
    fn a_read_begun_for_a_pause_the_speaker_talks_through_is_abandoned_not_judged() {
        // Speech, 200 ms of silence (a read begins at 100 ms; the check would be at 300),
        // speech again, then silence: that pause is read and judged, and the turn ends.
        let mut audio = room(500);
        audio.extend(voice(1000));
        audio.extend(room(200));
        audio.extend(voice(1000));
        audio.extend(room(2000));
        let (noted, u) = noted_under_smart_turn(audio, EndpointConfig::default());
        assert_eq!(noted, ["begin", "abandon", "begin", "judge"]);
        assert_eq!(u.stopped_because, End::EndOfSpeech);
    }

    #[test]
    fn speech_after_a_check_tells_the_signals_once_and_the_next_pause_is_checked_anew() {
        // Speech, 500 ms of silence (checked at 300 ms and found finished, so the turn
        // would stop at 1.2 s), speech again: the signals hear that the speaker went on,
        // then the next pause is read and judged, and the turn ends.
        let mut audio = room(500);
        audio.extend(voice(1000));
        audio.extend(room(500));
        audio.extend(voice(1000));
        audio.extend(room(2000));
        let (noted, u) = noted_under_smart_turn(audio, EndpointConfig::default());
        assert_eq!(noted, ["begin", "judge", "resumed", "begin", "judge"]);
        assert_eq!(u.stopped_because, End::EndOfSpeech);
    }

    #[test]
    fn a_read_under_way_when_the_capture_ends_is_abandoned() {
        // The caller's time limit falls 200 ms into the pause after the voice: the read
        // begun at 100 ms is never judged.
        let mut audio = room(500);
        audio.extend(voice(1000));
        audio.extend(room(2000));
        let endpoint = EndpointConfig {
            timeout: Some(yazses_core::time::Duration::from_millis(1700)),
            ..EndpointConfig::default()
        };
        let (noted, u) = noted_under_smart_turn(audio, endpoint);
        assert_eq!(noted, ["begin", "abandon"]);
        assert_eq!(u.stopped_because, End::Timeout);
    }

    #[test]
    fn a_read_under_way_when_the_microphone_is_unplugged_is_abandoned_and_the_error_told() {
        // Unplugged 200 ms into the pause after the voice, with a read begun at 100 ms.
        let mut audio = room(500);
        audio.extend(voice(1000));
        audio.extend(room(2000));
        let frames_ms = FRAME_MS;
        let mut src = Unplugged {
            inner: FileSource::from_samples(audio, false),
            left: (1700 / frames_ms) as usize,
        };
        let (noted, u) = noted_under_smart_turn_from(&mut src, EndpointConfig::default());
        assert_eq!(noted, ["begin", "abandon"]);
        let err = u.unwrap_err();
        assert!(err.to_string().contains("unplugged"), "{err}");
    }
}
