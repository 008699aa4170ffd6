//! The audio contract: 16 kHz, mono, signed 16-bit PCM, in 10 ms frames of 160 samples.
//!
//! Hosts resample and downmix before calling in. A stream whose length is not a multiple
//! of 160 samples leaves a short last frame; [`Framer`] keeps it until more samples come,
//! and a caller at the end of its input either pads it with zeros ([`Framer::flush_padded`])
//! or drops it. Either way every decision is about a whole 10 ms frame.

use crate::time::Duration;
use core::fmt;

/// Samples per second.
pub const SAMPLE_RATE_HZ: u32 = 16_000;
/// Samples in one frame.
pub const FRAME_SAMPLES: usize = 160;
/// The time one frame covers.
pub const FRAME_DURATION: Duration = Duration::from_millis(FRAME_MS);
/// The time one frame covers, in milliseconds.
pub const FRAME_MS: u64 = 10;
/// Samples in one millisecond.
pub const SAMPLES_PER_MS: usize = SAMPLE_RATE_HZ as usize / 1000;

/// How long `samples` samples last, in whole milliseconds.
pub const fn samples_to_ms(samples: usize) -> u64 {
    (samples / SAMPLES_PER_MS) as u64
}

/// One 10 ms frame of 16 kHz mono PCM.
pub type Frame = [i16; FRAME_SAMPLES];

/// A slice that is not exactly one frame long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FrameLengthError {
    /// How many samples the slice held.
    pub got: usize,
}

impl fmt::Display for FrameLengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a frame is {FRAME_SAMPLES} samples, got {}", self.got)
    }
}

impl core::error::Error for FrameLengthError {}

/// Views a slice of exactly [`FRAME_SAMPLES`] samples as a [`Frame`].
pub fn as_frame(samples: &[i16]) -> Result<&Frame, FrameLengthError> {
    samples
        .try_into()
        .map_err(|_| FrameLengthError { got: samples.len() })
}

/// Cuts a stream that arrives in chunks of any size into whole frames, with a fixed
/// buffer of one frame.
#[derive(Clone, Debug)]
pub struct Framer {
    buf: Frame,
    len: usize,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// An empty framer.
    pub const fn new() -> Self {
        Framer {
            buf: [0; FRAME_SAMPLES],
            len: 0,
        }
    }

    /// Samples held back, waiting for the rest of their frame.
    pub const fn pending(&self) -> usize {
        self.len
    }

    /// Appends `samples` and calls `on_frame` for every frame they complete, in order.
    /// Stops early, keeping the rest of the input unconsumed, when `on_frame` returns
    /// `false`; returns how many samples of `samples` were taken.
    pub fn push(&mut self, samples: &[i16], mut on_frame: impl FnMut(&Frame) -> bool) -> usize {
        let mut taken = 0;
        while taken < samples.len() {
            let room = FRAME_SAMPLES - self.len;
            let n = room.min(samples.len() - taken);
            self.buf[self.len..self.len + n].copy_from_slice(&samples[taken..taken + n]);
            self.len += n;
            taken += n;
            if self.len == FRAME_SAMPLES {
                self.len = 0;
                if !on_frame(&self.buf) {
                    break;
                }
            }
        }
        taken
    }

    /// The short last frame padded with zeros, or `None` when nothing is pending.
    pub fn flush_padded(&mut self) -> Option<Frame> {
        if self.len == 0 {
            return None;
        }
        let mut frame = self.buf;
        frame[self.len..].fill(0);
        self.len = 0;
        Some(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_chunks_into_frames_and_keeps_the_remainder() {
        let mut framer = Framer::new();
        let input: [i16; 400] = core::array::from_fn(|i| i as i16);
        let mut frames = 0;
        let mut first = [0i16; 2];
        for chunk in input.chunks(37) {
            framer.push(chunk, |f| {
                if frames == 1 {
                    first = [f[0], f[159]];
                }
                frames += 1;
                true
            });
        }
        assert_eq!(frames, 2);
        assert_eq!(first, [160, 319]);
        assert_eq!(framer.pending(), 80);
        let last = framer.flush_padded().unwrap();
        assert_eq!((last[0], last[79], last[80]), (320, 399, 0));
        assert!(framer.flush_padded().is_none());
    }

    #[test]
    fn a_wrong_length_slice_is_refused_with_its_length() {
        assert_eq!(as_frame(&[0; 159]), Err(FrameLengthError { got: 159 }));
        assert!(as_frame(&[0; 160]).is_ok());
    }
}
