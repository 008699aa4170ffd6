//! Where every decoder puts its audio: mono `f32` at the file's rate in, 16 kHz `i16` out,
//! converted as it arrives, with the duration cap enforced before a sample past it is
//! kept. A decoder never holds the file's audio at its own rate. Without a [`Tap`] the
//! sink keeps the 16 kHz audio (what a file costs is its 16 kHz length, which the cap
//! bounds); with one, each piece goes to the tap as it is made and nothing is kept, so a
//! file of any length costs a few kilobytes here.

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
    /// The tap wanted no more audio.
    Stopped,
}

/// 16 kHz audio as it is made, and how long the file says it is.
#[derive(Clone, Copy, Debug)]
pub struct Chunk<'a> {
    /// The next samples, at 16 kHz.
    pub samples: &'a [i16],
    /// The file's whole length by its header, in 16 kHz samples, when the header says.
    pub expected: Option<u64>,
}

/// Takes 16 kHz audio as it is made; `false` stops the decoding ([`AudioError::Stopped`]).
pub type Tap<'t> = &'t mut dyn FnMut(Chunk<'_>) -> bool;

impl SinkError {
    /// The refusal as the file's error.
    pub(crate) fn into_audio(self, path: &Path, limits: &Limits) -> AudioError {
        match self {
            SinkError::TooLong => AudioError::TooLong {
                path: path.to_owned(),
                limit_secs: limits.max_secs,
                length_ms: None,
            },
            SinkError::Resample { rate, reason } => AudioError::Resample {
                path: path.to_owned(),
                rate,
                reason,
            },
            SinkError::Empty => AudioError::Empty {
                path: path.to_owned(),
            },
            SinkError::Stopped => AudioError::Stopped {
                path: path.to_owned(),
            },
        }
    }
}

/// Mono audio at one rate on its way to 16 kHz.
pub(crate) struct Sink<'t> {
    rate: u32,
    max_frames: u64,
    to16k: To16k,
    out: Vec<i16>,
    tap: Option<Tap<'t>>,
    /// The file's length by its header, in 16 kHz samples.
    expected: Option<u64>,
    /// 16 kHz samples made so far, kept or tapped.
    made: u64,
}

impl std::fmt::Debug for Sink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("rate", &self.rate)
            .field("to16k", &self.to16k)
            .field("tapped", &self.tap.is_some())
            .field("made", &self.made)
            .finish()
    }
}

impl<'t> Sink<'t> {
    /// A sink for audio at `rate` Hz that refuses to pass `max_secs`. `expected_frames`
    /// is the header's length at `rate`, when it has one; `tap`, when given, takes the
    /// audio instead of the sink keeping it.
    pub(crate) fn new(
        rate: u32,
        max_secs: u64,
        expected_frames: Option<u64>,
        tap: Option<Tap<'t>>,
    ) -> Result<Sink<'t>, SinkError> {
        let to16k = To16k::new(rate, Quality::File).map_err(|e| SinkError::Resample {
            rate,
            reason: e.to_string(),
        })?;
        Ok(Sink {
            rate,
            max_frames: max_secs.saturating_mul(u64::from(rate)),
            to16k,
            out: Vec::new(),
            tap,
            expected: expected_frames.map(|n| {
                (u128::from(n) * u128::from(yazses_core::frame::SAMPLE_RATE_HZ)
                    / u128::from(rate.max(1))) as u64
            }),
            made: 0,
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
            .map_err(|e| SinkError::Resample {
                rate,
                reason: e.to_string(),
            })?;
        hand_over(
            &mut self.out,
            self.tap.as_deref_mut(),
            self.expected,
            &mut self.made,
        )
    }

    /// How much audio has come in, in milliseconds of the file's own clock.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        self.to16k.frames_in() * 1000 / u64::from(self.rate)
    }

    /// Whether any audio has come in.
    pub(crate) fn is_empty(&self) -> bool {
        self.to16k.frames_in() == 0
    }

    /// The whole audio at 16 kHz (nothing, when a tap took it); refused when that is not
    /// one sample (a few frames at a higher rate shrink to nothing), so no caller gets a
    /// success without audio.
    pub(crate) fn finish(self) -> Result<Vec<i16>, SinkError> {
        let Sink {
            rate,
            to16k,
            mut out,
            tap,
            expected,
            mut made,
            ..
        } = self;
        to16k.finish(&mut out).map_err(|e| SinkError::Resample {
            rate,
            reason: e.to_string(),
        })?;
        hand_over(&mut out, tap, expected, &mut made)?;
        if made == 0 {
            return Err(SinkError::Empty);
        }
        Ok(out)
    }
}

/// Gives what is new in `out` to the tap, if there is one, and counts what was made.
fn hand_over(
    out: &mut Vec<i16>,
    tap: Option<&mut (dyn FnMut(Chunk<'_>) -> bool + '_)>,
    expected: Option<u64>,
    made: &mut u64,
) -> Result<(), SinkError> {
    let Some(tap) = tap else {
        *made = out.len() as u64;
        return Ok(());
    };
    if out.is_empty() {
        return Ok(());
    }
    *made += out.len() as u64;
    let more = tap(Chunk {
        samples: out,
        expected,
    });
    out.clear();
    if more {
        Ok(())
    } else {
        Err(SinkError::Stopped)
    }
}

/// Whether a stream of `frames` at `rate` is over `max_secs`: the check a header allows
/// before anything is decoded.
pub(crate) fn over_cap(frames: u64, rate: u32, max_secs: u64) -> bool {
    rate > 0 && frames > max_secs.saturating_mul(u64::from(rate))
}
