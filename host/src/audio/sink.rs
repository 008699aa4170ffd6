//! Where every decoder puts its audio: mono `f32` at the file's rate in, 16 kHz `i16` out,
//! converted as it arrives, with the duration cap enforced before a sample past it is
//! kept. A decoder never holds the file's audio at its own rate, so what a file costs in
//! memory is its 16 kHz length, which the cap bounds.

use std::path::Path;

use super::resample::{Quality, To16k};
use super::{AudioError, Limits};

/// Why the sink refused more audio.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SinkError {
    /// The audio passed the duration cap.
    TooLong,
    /// The resampler failed at `rate`, in words.
    Resample {
        /// The rate it was converting from.
        rate: u32,
        /// Why.
        reason: String,
    },
    /// Too little audio for one 16 kHz sample (or none at all).
    Empty,
}

impl SinkError {
    /// The refusal as the file's error.
    pub(crate) fn into_audio(self, path: &Path, limits: &Limits) -> AudioError {
        match self {
            SinkError::TooLong => AudioError::TooLong {
                path: path.to_owned(),
                limit_secs: limits.max_secs,
            },
            SinkError::Resample { rate, reason } => AudioError::Resample {
                path: path.to_owned(),
                rate,
                reason,
            },
            SinkError::Empty => AudioError::Empty {
                path: path.to_owned(),
            },
        }
    }
}

/// Mono audio at one rate on its way to 16 kHz.
#[derive(Debug)]
pub(crate) struct Sink {
    rate: u32,
    max_frames: u64,
    to16k: To16k,
    out: Vec<i16>,
}

impl Sink {
    /// A sink for audio at `rate` Hz that refuses to pass `max_secs`.
    pub(crate) fn new(rate: u32, max_secs: u64) -> Result<Sink, SinkError> {
        Ok(Sink {
            rate,
            max_frames: max_secs.saturating_mul(u64::from(rate)),
            to16k: To16k::new(rate, Quality::File)
                .map_err(|reason| SinkError::Resample { rate, reason })?,
            out: Vec::new(),
        })
    }

    /// The rate the sink was made for.
    pub(crate) fn rate(&self) -> u32 {
        self.rate
    }

    /// Takes more mono audio; refuses it, keeping none of it, if it would pass the cap.
    pub(crate) fn push(&mut self, mono: &[f32]) -> Result<(), SinkError> {
        if self.to16k.frames_in() + mono.len() as u64 > self.max_frames {
            return Err(SinkError::TooLong);
        }
        let rate = self.rate;
        self.to16k
            .push(mono, &mut self.out)
            .map_err(|reason| SinkError::Resample { rate, reason })
    }

    /// How much audio has come in, in milliseconds of the file's own clock.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        self.to16k.frames_in() * 1000 / u64::from(self.rate)
    }

    /// Whether any audio has come in.
    pub(crate) fn is_empty(&self) -> bool {
        self.to16k.frames_in() == 0
    }

    /// The whole audio at 16 kHz; refused when that is not one sample (a few frames at a
    /// higher rate shrink to nothing), so no caller gets a success without audio.
    pub(crate) fn finish(mut self) -> Result<Vec<i16>, SinkError> {
        let rate = self.rate;
        self.to16k
            .finish(&mut self.out)
            .map_err(|reason| SinkError::Resample { rate, reason })?;
        if self.out.is_empty() {
            return Err(SinkError::Empty);
        }
        Ok(self.out)
    }
}

/// Whether a stream of `frames` at `rate` is over `max_secs`: the check a header allows
/// before anything is decoded.
pub(crate) fn over_cap(frames: u64, rate: u32, max_secs: u64) -> bool {
    rate > 0 && frames > max_secs.saturating_mul(u64::from(rate))
}
