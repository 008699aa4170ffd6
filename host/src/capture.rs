//! One capture: a [`FrameSource`] through the detector and the end-of-speech policy, with
//! pre-roll, until the policy stops it. Returns the utterance and why it stopped.
//!
//! Sources deliver the core's frames (16 kHz mono, 160 samples); a source that runs dry
//! (a file played as a microphone) is continued with silence, the way a real microphone
//! keeps delivering frames after the user stops talking, so the policy decides the end
//! exactly as it would live. The source is dropped, and a microphone released, the
//! moment [`listen`] returns.
//!
//! The [`Hold`] is the dictation hold: while the push-to-talk path holds the microphone,
//! nothing else may open it (`ask_human` refuses).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use yazses_core::autostop::Autostop;
use yazses_core::endpoint::{EndpointConfig, StopReason};
use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::time::Instant;
use yazses_core::vad::VadConfig;

use crate::audio::{self, AudioError, Limits};

/// Where frames come from.
pub trait FrameSource {
    /// The next 10 ms frame; `Ok(None)` when the source has no more (a file's end).
    /// A live source blocks until the frame has been captured.
    fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError>;

    /// Whether the source decides the end of speech itself (a dongle runs the detector and
    /// the policy on its chip); then [`listen`] stops on [`decided_end`](Self::decided_end)
    /// and keeps only the caller's timeout and the hard cap of its own.
    fn decides_end(&self) -> bool {
        false
    }

    /// The end the source decided, once all the audio before it has been delivered.
    fn decided_end(&mut self) -> Option<StopReason> {
        None
    }

    /// What the link lost so far (a serial dongle's corrupt and missing frames).
    fn link_stats(&self) -> LinkStats {
        LinkStats::default()
    }
}

/// What a capture's link lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    /// Frames dropped because they arrived corrupt.
    pub corrupt_frames: u32,
    /// Audio frames that never arrived (a gap in the sequence numbers), filled with silence.
    pub lost_frames: u32,
}

/// Why a capture failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The recording for a file source could not be read.
    #[error(transparent)]
    Audio(#[from] AudioError),
    /// A device failed or went away.
    #[error("the audio device failed: {0}")]
    Device(String),
    /// The caller cancelled.
    #[error("the capture was cancelled")]
    Cancelled,
}

/// A recording played as the microphone, optionally at the pace of real time.
#[derive(Debug)]
pub struct FileSource {
    samples: Vec<i16>,
    at: usize,
    realtime: Option<std::time::Instant>,
}

impl FileSource {
    /// Decodes `path`; with `realtime`, each frame is delivered no sooner than it would
    /// have been spoken, and silence follows the recording at the same pace.
    pub fn open(path: &Path, realtime: bool) -> Result<FileSource, CaptureError> {
        let audio = audio::read(path, &Limits::default())?;
        Ok(FileSource::from_samples(audio.samples, realtime))
    }

    /// A source over samples already at 16 kHz.
    pub fn from_samples(samples: Vec<i16>, realtime: bool) -> FileSource {
        FileSource {
            samples,
            at: 0,
            realtime: realtime.then(std::time::Instant::now),
        }
    }
}

impl FrameSource for FileSource {
    fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError> {
        let mut frame = [0i16; FRAME_SAMPLES];
        match self.realtime {
            // As fast as it decodes: the file's end is the source's end.
            None if self.at >= self.samples.len() => return Ok(None),
            None => {}
            Some(start) => {
                // A microphone goes on delivering (silent) frames at its own pace after
                // the user stops; so does a file played in real time.
                let due = start
                    + std::time::Duration::from_micros(
                        (self.at + FRAME_SAMPLES) as u64 * 1_000_000 / 16_000,
                    );
                if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
        }
        let from = self.at.min(self.samples.len());
        let to = (self.at + FRAME_SAMPLES).min(self.samples.len());
        frame[..to - from].copy_from_slice(&self.samples[from..to]);
        self.at += FRAME_SAMPLES;
        Ok(Some(frame))
    }
}

/// The dictation hold, shared by everything that might open the microphone.
#[derive(Clone, Debug, Default)]
pub struct Hold(Arc<AtomicBool>);

impl Hold {
    /// Whether a dictation holds the microphone now.
    pub fn is_held(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Holds the microphone until the guard is dropped (the push-to-talk path).
    pub fn hold(&self) -> HoldGuard {
        self.0.store(true, Ordering::SeqCst);
        HoldGuard(self.0.clone())
    }
}

/// Releases the [`Hold`] when dropped.
#[derive(Debug)]
pub struct HoldGuard(Arc<AtomicBool>);

impl Drop for HoldGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Why a capture stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBecause {
    /// The user stopped talking.
    EndOfSpeech,
    /// Nobody started talking in time.
    NoSpeech,
    /// The caller's time limit.
    Timeout,
    /// The 120 s hard cap.
    Cap,
}

impl From<StopReason> for StoppedBecause {
    fn from(r: StopReason) -> Self {
        match r {
            StopReason::EndOfSpeech => StoppedBecause::EndOfSpeech,
            StopReason::NoSpeech => StoppedBecause::NoSpeech,
            StopReason::Timeout => StoppedBecause::Timeout,
            StopReason::Cap => StoppedBecause::Cap,
        }
    }
}

/// What one capture heard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Utterance {
    /// The audio from the pre-roll before speech began to where the capture stopped;
    /// empty when no speech started.
    pub samples: Vec<i16>,
    /// Why it stopped.
    pub stopped_because: StoppedBecause,
    /// How long the capture listened, in milliseconds of audio.
    pub listen_ms: u64,
    /// Where speech began, in milliseconds from the start of the capture.
    pub speech_start_ms: Option<u64>,
    /// Whether the source (a dongle) decided the end, rather than the host's detector.
    pub ended_by_source: bool,
    /// What the link lost on the way.
    pub link: LinkStats,
}

/// Pre-roll kept before the start of speech.
pub const PRE_ROLL_MS: u64 = 300;

/// Runs `source` through the detector and the policy until the policy stops. `cancel`
/// is checked every frame.
pub fn listen(
    source: &mut dyn FrameSource,
    vad: VadConfig,
    endpoint: EndpointConfig,
    cancel: &AtomicBool,
) -> Result<Utterance, CaptureError> {
    let mut capture = Autostop::new(vad, endpoint, Instant::ZERO);
    let pre_frames = (PRE_ROLL_MS / 10) as usize;
    // Keep enough frames to cover min_speech plus the pre-roll: speech counts as started
    // only after min_speech, and its start is reported then.
    let window = pre_frames + (endpoint.min_speech.total_millis() / 10) as usize + 2;
    let mut recent: VecDeque<Frame> = VecDeque::with_capacity(window + 1);
    let mut kept: Vec<i16> = Vec::new();
    let mut kept_from: Option<u64> = None;
    let mut frames = 0u64;
    let (reason, listen_ms, ended_by_source) = loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(CaptureError::Cancelled);
        }
        let next = source.next_frame()?;
        // A source that decides the end says so once its audio is all delivered.
        let source_stop = if next.is_none() && source.decides_end() {
            source.decided_end()
        } else {
            None
        };
        if let Some(reason) = source_stop {
            break (reason, frames * 10, true);
        }
        let frame = next.unwrap_or([0; FRAME_SAMPLES]);
        frames += 1;
        let report = capture.push_frame(&frame);
        match kept_from {
            Some(_) => kept.extend_from_slice(&frame),
            None => {
                recent.push_back(frame);
                while recent.len() > window {
                    recent.pop_front();
                }
                if let Some(start) = capture.endpoint().speech_start() {
                    let start_frame = start.total_millis() / 10;
                    let first = start_frame.saturating_sub(pre_frames as u64);
                    let oldest = frames - recent.len() as u64;
                    let skip = first.saturating_sub(oldest) as usize;
                    for f in recent.drain(..).skip(skip) {
                        kept.extend_from_slice(&f);
                    }
                    kept_from = Some(first.max(oldest) * 10);
                }
            }
        }
        // With a source that decides the end, the host keeps only the caller's timeout
        // and the hard cap of its own decisions.
        let host_stop = report.decision.stop().filter(|stop| {
            !source.decides_end() || matches!(stop.reason, StopReason::Timeout | StopReason::Cap)
        });
        if let Some(stop) = host_stop {
            break (stop.reason, stop.at.total_millis(), false);
        }
    };
    Ok(Utterance {
        samples: kept,
        stopped_because: reason.into(),
        listen_ms,
        speech_start_ms: capture.endpoint().speech_start().map(Instant::total_millis),
        ended_by_source,
        link: source.link_stats(),
    })
}

/// The source `[audio]` names.
pub fn open_source(
    config: &crate::config::AudioConfig,
    endpoint: EndpointConfig,
) -> Result<Box<dyn FrameSource + Send>, CaptureError> {
    use crate::config::SourceKind;
    match config.source {
        SourceKind::File => Ok(Box::new(FileSource::open(
            &config.file,
            config.file_realtime,
        )?)),
        SourceKind::Cpal => Ok(Box::new(crate::mic::CpalSource::open(&config.device)?)),
        SourceKind::Serial => Ok(Box::new(crate::serial::SerialSource::open(
            &config.serial_port,
            &endpoint,
        )?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voice(ms: usize) -> Vec<i16> {
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
        assert_eq!(u.stopped_because, StoppedBecause::EndOfSpeech);
        let start = u.speech_start_ms.unwrap();
        assert!((1990..=2100).contains(&start), "{start}");
        // Pre-roll before speech, the pause, the second phrase: ~300 + 2500 ms, then the
        // trailing silence up to the stop.
        let kept_ms = u.samples.len() as u64 / 16;
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
        assert_eq!(u.stopped_because, StoppedBecause::NoSpeech);
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
        assert_eq!(u.stopped_because, StoppedBecause::Timeout);
        assert_eq!(u.listen_ms, 3000);
    }

    /// A source that decides the end itself, after its frames run out (a dongle).
    struct Deciding {
        inner: FileSource,
        left: usize,
        end: StopReason,
    }

    impl FrameSource for Deciding {
        fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            self.inner.next_frame()
        }
        fn decides_end(&self) -> bool {
            true
        }
        fn decided_end(&mut self) -> Option<StopReason> {
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
            end: StopReason::EndOfSpeech,
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
        assert_eq!(u.stopped_because, StoppedBecause::EndOfSpeech);
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
            end: StopReason::EndOfSpeech,
        };
        let u = listen(
            &mut src,
            yazses_core::vad::Vad::DEFAULT,
            endpoint,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(!u.ended_by_source);
        assert_eq!(u.stopped_because, StoppedBecause::Timeout);
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

    #[test]
    fn a_realtime_file_keeps_the_pace_of_speech_and_goes_on_with_silence() {
        let mut src = FileSource::from_samples(vec![1000; 160 * 3], true);
        let t0 = std::time::Instant::now();
        let frames: Vec<_> = (0..10)
            .map(|_| src.next_frame().unwrap().unwrap())
            .collect();
        let took = t0.elapsed();
        assert!(took >= std::time::Duration::from_millis(95), "{took:?}");
        assert_eq!(frames[2][0], 1000);
        assert_eq!(frames[3], [0; FRAME_SAMPLES]);
        let mut fast = FileSource::from_samples(vec![1; 200], false);
        assert!(fast.next_frame().unwrap().is_some());
        assert!(fast.next_frame().unwrap().is_some());
        assert!(fast.next_frame().unwrap().is_none());
    }

    #[test]
    fn a_hold_lasts_as_long_as_its_guard() {
        let hold = Hold::default();
        assert!(!hold.is_held());
        let guard = hold.hold();
        assert!(hold.clone().is_held());
        drop(guard);
        assert!(!hold.is_held());
    }
}
