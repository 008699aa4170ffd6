//! PCM and float WAV through `hound`, streamed: the header's length is checked against the
//! duration cap before a sample is read, and samples go to the [`Sink`] a block at a time.

use std::io;
use std::path::Path;

use super::sink::{Sink, SinkError, Tap, over_cap};
use super::{Audio, AudioError, Limits};

/// Mono samples gathered before each push into the sink.
const BLOCK: usize = 4096;

/// How far into a file the data chunk is looked for: past the format chunk and the odd
/// metadata chunk (ffmpeg writes a LIST of tags), well short of any audio.
pub(crate) const HEADER_SCAN: usize = 64 << 10;

/// Where a header written for a stream says how long its data is, and what it really
/// holds: a writer that cannot seek back (ffmpeg or sox writing to a pipe) leaves a
/// placeholder (0xFFFFFFFF, 0x7FFFF000 to 0x7FFFFFFF, or 0) where the length goes. `header` is the
/// start of the file and `byte_len` its whole length. `None` when the header gives a real
/// length (a file cut short stays one), or has no data chunk in `header`.
pub(crate) fn streamed_data_len(header: &[u8], byte_len: u64) -> Option<(usize, u32)> {
    let u32_at = |at: usize| {
        header
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut block_align = 1u64;
    let mut at = 12;
    while let (Some(id), Some(size)) = (header.get(at..at + 4), u32_at(at + 4)) {
        let body = at + 8;
        if id == b"fmt " {
            if let Some(b) = header.get(body + 12..body + 14) {
                block_align = u64::from(u16::from_le_bytes([b[0], b[1]])).max(1);
            }
        } else if id == b"data" {
            let held = byte_len.saturating_sub(body as u64);
            // ffmpeg writes 0xFFFFFFFF, sox and arecord 0x7FFFF000 or so; a larger claim
            // than those is a claim, judged against the duration cap.
            let placeholder = matches!(size, 0 | u32::MAX | 0x7FFF_F000..=0x7FFF_FFFF);
            if !placeholder || u64::from(size) == held {
                return None;
            }
            let fits = held.min(u64::from(u32::MAX - 1));
            return Some((at + 4, (fits - fits % block_align) as u32));
        }
        at = body + size as usize + (size as usize & 1);
    }
    None
}

/// Decodes a WAV stream. `byte_len`, when known, is the file's size: a header that claims
/// more audio than the file could hold is refused when its claim passes the duration cap,
/// and otherwise read as a file cut short. With a `tap`,
/// the audio goes there as it decodes and the returned [`Audio`] holds no samples.
pub(crate) fn decode<R: io::Read>(
    reader: R,
    byte_len: Option<u64>,
    path: &Path,
    limits: &Limits,
    tap: Option<Tap<'_>>,
) -> Result<Audio, AudioError> {
    let not_wav = |e: hound::Error| AudioError::NotWav {
        path: path.to_owned(),
        reason: describe_hound(&e),
    };
    let mut wav = hound::WavReader::new(reader).map_err(not_wav)?;
    let spec = wav.spec();
    let channels = spec.channels;
    if channels == 0 {
        return Err(unsupported(path, "zero channels".into()));
    }
    if spec.sample_rate < 1000 || spec.sample_rate > 384_000 {
        return Err(unsupported(
            path,
            format!("a sample rate of {} Hz", spec.sample_rate),
        ));
    }
    let promised = u64::from(wav.len());
    let block_align = u64::from(channels) * u64::from(spec.bits_per_sample.div_ceil(8)).max(1);
    let frames_held = byte_len.map_or(u64::MAX, |n| n / block_align);
    let claimed = u64::from(wav.duration());
    if over_cap(claimed, spec.sample_rate, limits.max_secs) {
        return Err(AudioError::TooLong {
            path: path.to_owned(),
            limit_secs: limits.max_secs,
            length_ms: Some(claimed * 1000 / u64::from(spec.sample_rate)),
        });
    }
    let frames = claimed.min(frames_held);
    let mut sink = Sink::new(spec.sample_rate, limits.max_secs, Some(frames), tap)
        .map_err(|e| e.into_audio(path, limits))?;
    let mut reading = Reading {
        sink: &mut sink,
        channels: usize::from(channels),
        frame: Vec::with_capacity(usize::from(channels)),
        block: Vec::with_capacity(BLOCK),
        read: 0,
    };
    let fail = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => reading.all(wav.samples::<f32>(), |v| {
            if v.is_finite() {
                v.clamp(-1.0, 1.0)
            } else {
                0.0
            }
        }),
        (hound::SampleFormat::Int, bits @ 1..=32) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            reading.all(wav.samples::<i32>(), |v| v as f32 * scale)
        }
        (format, bits) => {
            let kind = if format == hound::SampleFormat::Float {
                "float"
            } else {
                "integer"
            };
            return Err(unsupported(path, format!("{bits}-bit {kind}")));
        }
    };
    let read = reading.read;
    let cut_short = match fail {
        Ok(()) => None,
        Err(Stop::Sink(e)) => return Err(e.into_audio(path, limits)),
        // hound reports a short data chunk as a read error partway through the samples.
        Err(Stop::Read(_)) if read < promised => {
            if !limits.accept_partial || read == 0 {
                return Err(AudioError::Truncated {
                    path: path.to_owned(),
                    promised,
                    found: read,
                });
            }
            Some(sink.elapsed_ms())
        }
        Err(Stop::Read(e)) => {
            return Err(AudioError::NotWav {
                path: path.to_owned(),
                reason: describe_hound(&e),
            });
        }
    };
    if sink.is_empty() {
        return Err(AudioError::Empty {
            path: path.to_owned(),
        });
    }
    let samples = sink.finish().map_err(|e| e.into_audio(path, limits))?;
    Ok(Audio {
        samples,
        source_rate: spec.sample_rate,
        source_channels: channels,
        cut_short_ms: cut_short,
    })
}

/// Why reading samples stopped early.
enum Stop {
    Read(hound::Error),
    Sink(SinkError),
}

/// Interleaved samples on their way to the sink as mono blocks.
struct Reading<'a, 't> {
    sink: &'a mut Sink<'t>,
    channels: usize,
    frame: Vec<f32>,
    block: Vec<f32>,
    /// Samples read, all channels counted (hound's unit for the header's length).
    read: u64,
}

impl Reading<'_, '_> {
    fn all<T>(
        &mut self,
        samples: impl Iterator<Item = hound::Result<T>>,
        to_f32: impl Fn(T) -> f32,
    ) -> Result<(), Stop> {
        for s in samples {
            let v = s.map_err(|e| {
                // What decoded before the damage is kept (for a caller that accepts
                // partial audio); a partial frame is dropped.
                let _ = self.flush();
                Stop::Read(e)
            })?;
            self.read += 1;
            self.frame.push(to_f32(v));
            if self.frame.len() == self.channels {
                self.block
                    .push(self.frame.iter().sum::<f32>() / self.channels as f32);
                self.frame.clear();
                if self.block.len() == BLOCK {
                    self.flush()?;
                }
            }
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), Stop> {
        let pushed = self.sink.push(&self.block).map_err(Stop::Sink);
        self.block.clear();
        pushed
    }
}

fn unsupported(path: &Path, format: String) -> AudioError {
    AudioError::Unsupported {
        path: path.to_owned(),
        format,
    }
}

fn describe_hound(e: &hound::Error) -> String {
    match e {
        hound::Error::IoError(io) if io.kind() == io::ErrorKind::UnexpectedEof => {
            "the file ends inside its header".into()
        }
        hound::Error::IoError(io) => io.to_string(),
        hound::Error::FormatError(m) => (*m).to_owned(),
        hound::Error::TooWide => "its samples are wider than 32 bits".into(),
        hound::Error::UnfinishedSample => "it ends in the middle of a sample".into(),
        hound::Error::Unsupported => "it uses a WAV feature that is not supported".into(),
        hound::Error::InvalidSampleFormat => "its sample format does not match its header".into(),
    }
}
