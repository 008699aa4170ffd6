//! A recording played as the microphone (`[audio] source = "file"`): tests and demos.

use std::path::Path;

use yazses_core::frame::{FRAME_SAMPLES, Frame};

use super::{FrameSource, SourceError};
use crate::audio::{self, Limits};

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
    pub fn open(path: &Path, realtime: bool) -> Result<FileSource, SourceError> {
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
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
