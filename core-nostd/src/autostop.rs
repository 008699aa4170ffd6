//! The detector and the policy driven together by a frame clock.
//!
//! [`Autostop`] owns a [`Vad`], an [`Endpoint`] and a [`Framer`]: give it samples in
//! chunks of any size and it classifies each whole frame, stamps it with the instant its
//! audio ends (counted from the capture's start, 10 ms a frame), and stops when the policy
//! does. Host and firmware both call this, so their decisions agree frame for frame.

use core::fmt;

use crate::endpoint::{Decision, Endpoint, EndpointConfig, Stop};
use crate::frame::{FRAME_DURATION, Frame, Framer};
use crate::time::Instant;
use crate::vad::{Vad, VadConfig, VadFrame};

/// One classified frame, as [`Autostop`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameReport {
    /// The frame's number in the capture, from 0.
    pub index: u64,
    /// The instant the frame's audio ends.
    pub end: Instant,
    /// The detector's view of it.
    pub vad: VadFrame,
    /// The policy's decision after it.
    pub decision: Decision,
}

/// One line per frame, the same on every target, for comparing a host run with a chip's:
/// `index speech level smoothed floor on off decision`, levels in raw Q8, the decision
/// as `poll@<ms>` or `stop:<reason>@<ms>:<speech start ms|->:<speech end ms|->`.
impl fmt::Display for FrameReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.vad;
        write!(
            f,
            "{} {} {} {} {} {} {} ",
            self.index,
            u8::from(v.speech),
            v.level.q8(),
            v.smoothed.q8(),
            v.floor.q8(),
            v.on_threshold.q8(),
            v.off_threshold.q8(),
        )?;
        match self.decision {
            Decision::Continue { poll_at } => write!(f, "poll@{}", poll_at.total_millis()),
            Decision::Stop(stop) => {
                write!(f, "stop:{}@{}:", stop.reason, stop.at.total_millis())?;
                write_millis(f, stop.speech_start)?;
                f.write_str(":")?;
                write_millis(f, stop.speech_end)
            }
        }
    }
}

fn write_millis(f: &mut fmt::Formatter<'_>, at: Option<Instant>) -> fmt::Result {
    match at {
        Some(at) => write!(f, "{}", at.total_millis()),
        None => f.write_str("-"),
    }
}

/// A VAD and an endpoint policy over one capture.
#[derive(Clone, Debug)]
pub struct Autostop {
    vad: Vad,
    endpoint: Endpoint,
    framer: Framer,
    start: Instant,
    frames: u64,
}

impl Autostop {
    /// A capture starting at `start`.
    pub fn new(vad: VadConfig, endpoint: EndpointConfig, start: Instant) -> Self {
        Self::with_vad(Vad::new(vad), endpoint, start)
    }

    /// A capture with a detector that is already set up (calibrated, say).
    pub fn with_vad(vad: Vad, endpoint: EndpointConfig, start: Instant) -> Self {
        Autostop {
            vad,
            endpoint: Endpoint::new(endpoint, start),
            framer: Framer::new(),
            start,
            frames: 0,
        }
    }

    /// The detector.
    pub const fn vad(&self) -> &Vad {
        &self.vad
    }

    /// The policy.
    pub const fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Frames classified so far.
    pub const fn frames(&self) -> u64 {
        self.frames
    }

    /// The instant the audio classified so far ends.
    pub fn now(&self) -> Instant {
        self.start + FRAME_DURATION.saturating_mul(self.frames)
    }

    /// Classifies one whole frame. After a stop, frames are still classified (for plots),
    /// and the decision stays the stop.
    pub fn push_frame(&mut self, frame: &Frame) -> FrameReport {
        let vad = self.vad.process(frame);
        let index = self.frames;
        self.frames += 1;
        let end = self.now();
        let decision = self.endpoint.update_voiced(vad.speech, vad.voiced, end);
        FrameReport {
            index,
            end,
            vad,
            decision,
        }
    }

    /// Feeds samples in a chunk of any size, calling `on_frame` for each frame they
    /// complete. Returns the stop as soon as the policy makes one, leaving the rest of the
    /// chunk untouched.
    pub fn push_samples(
        &mut self,
        samples: &[i16],
        mut on_frame: impl FnMut(&FrameReport),
    ) -> Option<Stop> {
        let mut stop = self.endpoint.stopped();
        if stop.is_some() {
            return stop;
        }
        let mut framer = core::mem::take(&mut self.framer);
        framer.push(samples, |frame| {
            let report = self.push_frame(frame);
            on_frame(&report);
            stop = report.decision.stop();
            stop.is_none()
        });
        self.framer = framer;
        stop
    }

    /// The end of input: classifies the short last frame padded with silence, if any.
    pub fn finish(&mut self, on_frame: impl FnOnce(&FrameReport)) -> Option<Stop> {
        if self.endpoint.stopped().is_none()
            && let Some(frame) = self.framer.flush_padded()
        {
            on_frame(&self.push_frame(&frame));
        }
        self.endpoint.stopped()
    }
}
