//! Compressed and container formats (FLAC, MP3, Ogg/Vorbis, and WAV variants hound does not
//! read) through `symphonia`, into mono `f32` at the file's own rate.

use std::io;
use std::panic::{self, AssertUnwindSafe};

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::{MediaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// Mono samples at the file's rate, and what the file was.
#[derive(Debug)]
pub struct Decoded {
    /// Mono, -1..1.
    pub mono: Vec<f32>,
    /// The file's sample rate.
    pub rate: u32,
    /// The file's channel count.
    pub channels: u16,
    /// Packets the decoder could not decode and skipped.
    pub skipped_packets: u64,
}

/// Why symphonia could not decode; the caller names the file.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a format we read.
    Unrecognised,
    /// A recognised format with a problem, in words.
    Invalid(String),
    /// A stream with no audio in it.
    Empty,
    /// More audio than the caller allows.
    TooLong {
        /// The cap, in samples at the file's rate.
        limit_secs: u64,
    },
}

/// Decodes a whole stream. `extension` helps the prober; `max_secs` stops decoding early.
pub fn decode(
    source: Box<dyn MediaSource>,
    extension: Option<&str>,
    max_secs: u64,
) -> Result<Decoded, DecodeError> {
    // symphonia is written to return errors, but a decoder fed hostile bytes is exactly
    // where a missed bounds check would panic; keep that from taking the process down.
    panic::catch_unwind(AssertUnwindSafe(|| {
        decode_inner(source, extension, max_secs)
    }))
    .unwrap_or_else(|_| {
        Err(DecodeError::Invalid(
            "the decoder failed on malformed data".into(),
        ))
    })
}

fn decode_inner(
    source: Box<dyn MediaSource>,
    extension: Option<&str>,
    max_secs: u64,
) -> Result<Decoded, DecodeError> {
    let mss = MediaSourceStream::new(source, Default::default());
    let mut hint = Hint::new();
    if let Some(ext) = extension {
        hint.with_extension(ext);
    }
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            mss,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(|e| match e {
            SymError::Unsupported(_) => DecodeError::Unrecognised,
            SymError::IoError(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                DecodeError::Unrecognised
            }
            e => DecodeError::Invalid(e.to_string()),
        })?;
    let mut format = probed.format;
    let track = format
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or(DecodeError::Empty)?;
    let track_id = track.id;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(|e| DecodeError::Invalid(format!("its codec is not supported ({e})")))?;
    let mut rate = track.codec_params.sample_rate.unwrap_or(0);
    let mut channels = track.codec_params.channels.map_or(0, |c| c.count() as u16);
    let mut mono = Vec::new();
    let mut skipped = 0u64;
    let mut decoded_packets = 0u64;
    let mut buf: Option<SampleBuffer<f32>> = None;
    loop {
        let packet = match format.next_packet() {
            Ok(p) => p,
            Err(SymError::IoError(e)) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(SymError::ResetRequired) => break,
            Err(e) if decoded_packets > 0 => {
                // A damaged tail after good audio: keep what decoded and say so.
                tracing::warn!(error = %e, "stopped reading at a damaged packet");
                skipped += 1;
                break;
            }
            Err(e) => return Err(DecodeError::Invalid(e.to_string())),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let audio = match decoder.decode(&packet) {
            Ok(a) => a,
            Err(SymError::DecodeError(e)) => {
                tracing::debug!(error = e, "skipping an undecodable packet");
                skipped += 1;
                continue;
            }
            Err(SymError::IoError(_)) => {
                skipped += 1;
                continue;
            }
            Err(e) => return Err(DecodeError::Invalid(e.to_string())),
        };
        decoded_packets += 1;
        let spec = *audio.spec();
        rate = spec.rate;
        let ch = spec.channels.count().max(1);
        channels = ch as u16;
        if buf
            .as_ref()
            .is_none_or(|b| b.capacity() < audio.capacity() * ch)
        {
            buf = Some(SampleBuffer::new(audio.capacity() as u64, spec));
        }
        let b = buf.as_mut().expect("made above");
        b.copy_interleaved_ref(audio);
        mono.extend(
            b.samples()
                .chunks_exact(ch)
                .map(|c| c.iter().sum::<f32>() / ch as f32),
        );
        if rate > 0 && mono.len() as u64 > max_secs.saturating_mul(u64::from(rate)) {
            return Err(DecodeError::TooLong {
                limit_secs: max_secs,
            });
        }
    }
    if decoded_packets == 0 && skipped > 0 {
        return Err(DecodeError::Invalid(format!(
            "none of its {skipped} audio packets could be decoded"
        )));
    }
    if mono.is_empty() {
        return Err(DecodeError::Empty);
    }
    if !(1000..=384_000).contains(&rate) {
        return Err(DecodeError::Invalid(format!("a sample rate of {rate} Hz")));
    }
    for s in &mut mono {
        *s = if s.is_finite() {
            s.clamp(-1.0, 1.0)
        } else {
            0.0
        };
    }
    Ok(Decoded {
        mono,
        rate,
        channels,
        skipped_packets: skipped,
    })
}
