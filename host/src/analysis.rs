//! `yazses vad`: the detector and the end-of-speech policy over a whole recording.
//!
//! The file is classified frame by frame with [`Autostop`], exactly as a live capture
//! would be, and the result says where speech was and where a capture of this audio
//! would have stopped, and why.

use serde::Serialize;
use yazses_core::autostop::{Autostop, FrameReport};
use yazses_core::end::End;
use yazses_core::endpoint::{EndpointConfig, Stop};
use yazses_core::frame::{FRAME_DURATION, FRAME_SAMPLES, SAMPLE_RATE_HZ};
use yazses_core::time::Instant;
use yazses_core::vad::VadConfig;

/// A stretch of frames the detector called speech, in milliseconds from the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Where the first speech frame begins.
    pub start_ms: u64,
    /// Where the last speech frame ends.
    pub end_ms: u64,
}

/// Where a capture of this audio would have stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AutostopDecision {
    /// Why.
    pub stopped_because: End,
    /// When, in milliseconds from the start.
    pub stop_at_ms: u64,
    /// Where the speech that counted began, if any did.
    pub speech_start_ms: Option<u64>,
}

/// What `yazses vad --json` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VadReport {
    /// Always 16000: the rate the detector ran at.
    pub sample_rate: u32,
    /// Always 10.
    pub frame_ms: u64,
    /// Speech as the detector saw it, over the whole file.
    pub segments: Vec<Segment>,
    /// The policy's decision.
    pub autostop: AutostopDecision,
}

/// The full result: the report plus every frame, for plots.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The summary.
    pub report: VadReport,
    /// Every frame of the file, in order (frames after the stop included).
    pub frames: Vec<FrameReport>,
    /// The policy's stop, if it made one before the file ended.
    pub stop: Option<Stop>,
}

/// Runs the detector and the policy over `samples` (16 kHz mono).
pub fn analyze(samples: &[i16], vad: VadConfig, endpoint: EndpointConfig) -> Analysis {
    let mut capture = Autostop::new(vad, endpoint, Instant::ZERO);
    let mut frames = Vec::with_capacity(samples.len() / FRAME_SAMPLES + 1);
    let mut stop = None;
    // Keep classifying after the stop so segments and plots cover the whole file.
    let mut record = |r: &FrameReport| {
        if stop.is_none() {
            stop = r.decision.stop();
        }
        frames.push(*r);
    };
    for chunk in samples.chunks(FRAME_SAMPLES) {
        if chunk.len() == FRAME_SAMPLES {
            record(&capture.push_frame(chunk.try_into().expect("one frame")));
        } else {
            capture.push_samples(chunk, &mut record);
            capture.finish(&mut record);
        }
    }
    let segments = segments(&frames);
    let autostop = match stop {
        Some(s) => AutostopDecision {
            stopped_because: s.reason.into(),
            stop_at_ms: s.at.total_millis(),
            speech_start_ms: s.speech_start.map(Instant::total_millis),
        },
        None => AutostopDecision {
            stopped_because: End::EndOfInput,
            stop_at_ms: samples.len() as u64 * 1000 / u64::from(SAMPLE_RATE_HZ),
            speech_start_ms: capture.endpoint().speech_start().map(Instant::total_millis),
        },
    };
    let report = VadReport {
        sample_rate: SAMPLE_RATE_HZ,
        frame_ms: FRAME_DURATION.total_millis(),
        segments,
        autostop,
    };
    Analysis {
        report,
        frames,
        stop,
    }
}

fn segments(frames: &[FrameReport]) -> Vec<Segment> {
    let frame_ms = FRAME_DURATION.total_millis();
    let mut out = Vec::new();
    let mut open: Option<u64> = None;
    for f in frames {
        let end = f.end.total_millis();
        match (f.vad.speech, open) {
            (true, None) => open = Some(end - frame_ms),
            (false, Some(start)) => {
                out.push(Segment {
                    start_ms: start,
                    end_ms: end - frame_ms,
                });
                open = None;
            }
            _ => {}
        }
    }
    if let (Some(start), Some(last)) = (open, frames.last()) {
        out.push(Segment {
            start_ms: start,
            end_ms: last.end.total_millis(),
        });
    }
    out
}

impl VadReport {
    /// The report for people: one line per segment, then the decision.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for seg in &self.segments {
            s.push_str(&format!(
                "speech {:>8.2}s .. {:>8.2}s\n",
                seg.start_ms as f64 / 1000.0,
                seg.end_ms as f64 / 1000.0
            ));
        }
        if self.segments.is_empty() {
            s.push_str("no speech\n");
        }
        let a = &self.autostop;
        s.push_str(&format!(
            "autostop: {} at {:.2}s",
            a.stopped_because.as_str(),
            a.stop_at_ms as f64 / 1000.0
        ));
        if let Some(start) = a.speech_start_ms {
            s.push_str(&format!(" (speech began at {:.2}s)", start as f64 / 1000.0));
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yazses_core::vad::Vad;

    fn tone(ms: usize, amp: f32) -> Vec<i16> {
        (0..ms * 16)
            .map(|i| (amp * (i as f32 * 0.2).sin() * (1.0 + 0.5 * (i as f32 * 0.013).sin())) as i16)
            .collect()
    }

    #[test]
    fn a_burst_between_silences_is_one_segment_and_stops_after_end_silence() {
        let mut audio = vec![0i16; 16 * 500];
        audio.extend(tone(800, 8000.0));
        audio.extend(vec![0i16; 16 * 2000]);
        let a = analyze(&audio, Vad::DEFAULT, EndpointConfig::default());
        assert_eq!(a.report.segments.len(), 1);
        let seg = a.report.segments[0];
        assert!((490..=520).contains(&seg.start_ms), "{seg:?}");
        assert!((1300..=1430).contains(&seg.end_ms), "{seg:?}");
        assert_eq!(a.report.autostop.stopped_because, End::EndOfSpeech);
        // The segment runs to the hangover's end; the end silence runs from the last
        // voiced frame, the hangover's first 4 of its 10 frames.
        let held_ms = 10 * u64::from(Vad::DEFAULT.hangover_frames - Vad::DEFAULT.tail_frames);
        assert_eq!(a.report.autostop.stop_at_ms, seg.end_ms - held_ms + 1200);
        assert_eq!(a.frames.len(), 330);
    }

    #[test]
    fn a_file_that_ends_first_says_end_of_input_with_its_length() {
        let a = analyze(
            &vec![0i16; 16 * 1234 + 5],
            Vad::DEFAULT,
            EndpointConfig::default(),
        );
        assert_eq!(a.report.autostop.stopped_because, End::EndOfInput);
        assert_eq!(a.report.autostop.stop_at_ms, 1234);
        assert_eq!(a.report.autostop.speech_start_ms, None);
        assert_eq!(
            a.frames.len(),
            124,
            "the short last frame is padded and classified"
        );
    }
}
