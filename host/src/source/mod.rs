//! Where a capture's frames come from: the [`FrameSource`] trait, its typed errors, and
//! the three sources `[audio] source` names: a recording played as the microphone
//! ([`mod@file`]), a sound card through cpal ([`cpal`]), the yazses USB dongle ([`dongle`]).
//!
//! Opening a source is the caller's business only under the microphone lease
//! ([`crate::coord`]); [`crate::session`] is the one place that does both.

pub mod cpal;
pub mod dongle;
pub mod file;

use yazses_core::end::End;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::frame::Frame;

use crate::audio::AudioError;
use crate::config::{AudioConfig, SourceKind};

pub use file::FileSource;

/// Where frames come from.
pub trait FrameSource {
    /// The next 10 ms frame; `Ok(None)` when the source has no more (a file's end).
    /// A live source blocks until the frame has been captured.
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError>;

    /// Whether the source decides the end of speech itself (a dongle runs the detector and
    /// the policy on its chip); then the capture stops on
    /// [`decided_end`](Self::decided_end) and keeps only the caller's timeout and the hard
    /// cap of its own.
    fn decides_end(&self) -> bool {
        false
    }

    /// The end the source decided, once all the audio before it has been delivered.
    fn decided_end(&mut self) -> Option<End> {
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
    /// Audio frames of an earlier capture (still in flight when this one started),
    /// dropped so they do not become the start of this one.
    pub stale_frames: u32,
}

/// Why a source could not be opened or stopped delivering. The kinds let a caller tell
/// "try again later" (busy) from "plug it in" (missing) from "it went away" (gone) from
/// "that is not our device" (protocol); each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Another program holds the device.
    #[error("{0}")]
    Busy(String),
    /// There is no such device, or it cannot be used as an input.
    #[error("{0}")]
    Missing(String),
    /// The system does not let yazses record (macOS's Microphone permission).
    #[error("{0}")]
    Denied(String),
    /// The device failed or went away mid-capture.
    #[error("{0}")]
    Gone(String),
    /// The device answered, but not in the yazses wire protocol (or another version).
    #[error("{0}")]
    Protocol(String),
    /// The recording for a file source could not be read.
    #[error(transparent)]
    Audio(#[from] AudioError),
}

/// Checks that the source `[audio]` names can be opened, and closes it again: a recording
/// that reads, a sound card that opens, a dongle that answers (its capture is not
/// started). Under the microphone lease only, like [`open`].
pub fn check(config: &AudioConfig, endpoint: EndpointConfig) -> Result<(), SourceError> {
    match config.source {
        SourceKind::Serial => dongle::ButtonWatch::open(&config.serial_port, &endpoint).map(drop),
        SourceKind::File | SourceKind::Cpal => open(config, endpoint).map(drop),
    }
}

/// The source `[audio]` names. Open it only under the microphone lease.
pub fn open(
    config: &AudioConfig,
    endpoint: EndpointConfig,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    match config.source {
        SourceKind::File => Ok(Box::new(FileSource::open(
            &config.file,
            config.file_realtime,
        )?)),
        SourceKind::Cpal => Ok(Box::new(cpal::CpalSource::open(&config.device)?)),
        SourceKind::Serial => Ok(Box::new(dongle::SerialSource::open(
            &config.serial_port,
            &endpoint,
        )?)),
    }
}
