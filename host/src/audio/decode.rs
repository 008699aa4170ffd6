//! Compressed and container formats (FLAC, MP3, Ogg/Vorbis, and WAV variants hound does not
//! read) through `symphonia`, streamed packet by packet into 16 kHz mono.

use std::io;
use std::panic::{self, AssertUnwindSafe};

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::{MediaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use super::sink::{Sink, SinkError, Tap, over_cap};

/// A stream decoded to 16 kHz mono, and what the file was.
#[derive(Debug)]
pub struct Decoded {
    /// Mono 16 kHz samples.
    pub samples: Vec<i16>,
    /// The file's sample rate.
    pub rate: u32,
    /// The file's channel count.
    pub channels: u16,
    /// Packets the decoder could not decode and skipped.
    pub skipped_packets: u64,
    /// Where decoding stopped early (a damaged or missing tail), in ms of the file's clock.
    pub cut_short: Option<CutShort>,
}

/// A stream whose decoding stopped before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutShort {
    /// How much audio decoded, in milliseconds.
    pub at_ms: u64,
    /// How long the container says the audio is, when it says.
    pub expected_ms: Option<u64>,
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
    /// More audio than the caller allows: the length the file declares, when it does.
    TooLong(Option<u64>),
    /// The caller's tap wanted no more audio.
    Stopped,
    /// The resampler failed converting from `rate`, in words.
    Resample {
        /// The file's rate.
        rate: u32,
        /// Why.
        reason: String,
    },
}

/// Decodes a whole stream to 16 kHz. `extension` helps the prober; decoding stops as soon
/// as the audio passes `max_secs` (or before it starts, when the container's own length
/// says so). With a `tap`, the audio goes there as it decodes and [`Decoded::samples`] is
/// empty.
pub fn decode(
    mut source: Box<dyn MediaSource>,
    extension: Option<&str>,
    max_secs: u64,
    tap: Option<Tap<'_>>,
) -> Result<Decoded, DecodeError> {
    let ogg_cut = ogg_tail_is_cut(&mut source);
    // symphonia is written to return errors, but a decoder fed hostile bytes is exactly
    // where a missed bounds check would panic; keep that from taking the process down.
    panic::catch_unwind(AssertUnwindSafe(|| {
        decode_inner(source, extension, max_secs, ogg_cut, tap)
    }))
    .unwrap_or_else(|_| {
        Err(DecodeError::Invalid(
            "the decoder failed on malformed data".into(),
        ))
    })
}

/// Shortfall against the container's declared length that still counts as whole: codecs
/// trim encoder delay and padding, which the declared length may or may not include.
const LENGTH_SLACK_MS: u64 = 100;

fn decode_inner(
    source: Box<dyn MediaSource>,
    extension: Option<&str>,
    max_secs: u64,
    ogg_cut: bool,
    mut tap: Option<Tap<'_>>,
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
    let declared_rate = track.codec_params.sample_rate.unwrap_or(0);
    let declared_ms = track
        .codec_params
        .n_frames
        .filter(|_| declared_rate > 0)
        .map(|n| n.saturating_mul(1000) / u64::from(declared_rate));
    if let Some(n) = track.codec_params.n_frames
        && over_cap(n, declared_rate, max_secs)
    {
        return Err(DecodeError::TooLong(declared_ms));
    }
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(|e| DecodeError::Invalid(format!("its codec is not supported ({e})")))?;
    let mut channels = track.codec_params.channels.map_or(0, |c| c.count() as u16);
    let track_frames = track.codec_params.n_frames;
    let mut sink: Option<Sink> = None;
    let mut skipped = 0u64;
    let mut decoded_packets = 0u64;
    let mut damaged_tail = false;
    let mut buf: Option<SampleBuffer<f32>> = None;
    let mut mono: Vec<f32> = Vec::new();
    loop {
        let packet = match format.next_packet() {
            Ok(p) => p,
            Err(SymError::IoError(e)) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(SymError::ResetRequired) => break,
            Err(e) if decoded_packets > 0 => {
                // A damaged tail after good audio: keep what decoded and say so.
                tracing::warn!(error = %e, "stopped reading at a damaged packet");
                damaged_tail = true;
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
        if !(1000..=384_000).contains(&spec.rate) {
            return Err(DecodeError::Invalid(format!(
                "a sample rate of {} Hz",
                spec.rate
            )));
        }
        let sink = match &mut sink {
            Some(s) if s.rate() != spec.rate => {
                return Err(DecodeError::Invalid(format!(
                    "its sample rate changes from {} to {} Hz",
                    s.rate(),
                    spec.rate
                )));
            }
            Some(s) => s,
            None => {
                // The container's length counts at its declared rate, which is this one
                // when it is stated at all.
                let expected = track_frames.filter(|_| declared_rate == spec.rate);
                sink.insert(
                    Sink::new(spec.rate, max_secs, expected, tap.take()).map_err(from_sink)?,
                )
            }
        };
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
        mono.clear();
        mono.extend(b.samples().chunks_exact(ch).map(|c| {
            let s = c.iter().sum::<f32>() / ch as f32;
            if s.is_finite() {
                s.clamp(-1.0, 1.0)
            } else {
                0.0
            }
        }));
        sink.push(&mono).map_err(from_sink)?;
    }
    if decoded_packets == 0 && skipped > 0 {
        return Err(DecodeError::Invalid(format!(
            "none of its {skipped} audio packets could be decoded"
        )));
    }
    let Some(sink) = sink.filter(|s| !s.is_empty()) else {
        return Err(DecodeError::Empty);
    };
    let at_ms = sink.elapsed_ms();
    let short_of_declared = declared_ms.is_some_and(|d| at_ms + LENGTH_SLACK_MS < d);
    let cut_short = if ogg_cut {
        // symphonia takes an Ogg stream's length from its last page, which in a cut file
        // is wherever the cut fell: it says nothing true about the length.
        Some(CutShort {
            at_ms,
            expected_ms: None,
        })
    } else {
        (damaged_tail || short_of_declared).then_some(CutShort {
            at_ms,
            expected_ms: declared_ms,
        })
    };
    let rate = sink.rate();
    Ok(Decoded {
        samples: sink.finish().map_err(from_sink)?,
        rate,
        channels,
        skipped_packets: skipped,
        cut_short,
    })
}

/// The longest Ogg page: header, a 255-entry segment table, 255 segments of 255 bytes.
const OGG_MAX_PAGE: u64 = 27 + 255 + 255 * 255;

/// Whether an Ogg stream fails to end as a whole one does: with a complete page that
/// carries the end-of-stream flag. (symphonia stops quietly at a cut in an Ogg file.)
/// Leaves the source at its start; anything but Ogg is not judged.
fn ogg_tail_is_cut(source: &mut Box<dyn MediaSource>) -> bool {
    let cut = (|| -> io::Result<bool> {
        let mut magic = [0u8; 4];
        source.seek(io::SeekFrom::Start(0))?;
        if source.read_exact(&mut magic).is_err() || &magic != b"OggS" {
            return Ok(false);
        }
        let len = source.seek(io::SeekFrom::End(0))?;
        let from = len.saturating_sub(OGG_MAX_PAGE);
        source.seek(io::SeekFrom::Start(from))?;
        let mut tail = Vec::with_capacity((len - from) as usize);
        source.read_to_end(&mut tail)?;
        // The last page must run exactly to the end of the file and say it is the last.
        let whole = (0..tail.len().saturating_sub(26))
            .rev()
            .filter(|&i| &tail[i..i + 4] == b"OggS")
            .find_map(|i| {
                let page = &tail[i..];
                let segments = usize::from(*page.get(26)?);
                let table = page.get(27..27 + segments)?;
                let size = 27 + segments + table.iter().map(|&b| usize::from(b)).sum::<usize>();
                (size == page.len()).then_some(page[5] & 0x04 != 0)
            });
        Ok(whole != Some(true))
    })()
    .unwrap_or(false);
    let _ = source.seek(io::SeekFrom::Start(0));
    cut
}

fn from_sink(e: SinkError) -> DecodeError {
    match e {
        SinkError::TooLong => DecodeError::TooLong(None),
        SinkError::Resample { rate, reason } => DecodeError::Resample { rate, reason },
        SinkError::Empty => DecodeError::Empty,
        SinkError::Stopped => DecodeError::Stopped,
    }
}
