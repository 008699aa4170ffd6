//! Compressed and container formats (FLAC, MP3, Ogg/Vorbis, and WAV variants hound does not
//! read) through `symphonia`, streamed packet by packet into 16 kHz mono.

use std::io;
use std::panic::{self, AssertUnwindSafe};

use symphonia::core::audio::{AudioBufferRef, SampleBuffer};
use symphonia::core::codecs::{CODEC_TYPE_NULL, Decoder, DecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::{FormatOptions, FormatReader};
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
    let mut track = Track::open(source, extension, max_secs)?;
    let mut sink: Option<Sink> = None;
    let mut skipped = 0u64;
    let mut decoded_packets = 0u64;
    let mut damaged_tail = false;
    let mut downmix = Downmix::default();
    loop {
        let packet = match track.format.next_packet() {
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
        if packet.track_id() != track.id {
            continue;
        }
        let audio = match track.decoder.decode(&packet) {
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
        let rate = audio.spec().rate;
        // The container's length counts at its declared rate, which is this one when it
        // is stated at all.
        let expected = track.frames.filter(|_| track.declared_rate == rate);
        let sink = sink_at(&mut sink, rate, max_secs, expected, &mut tap)?;
        track.channels = audio.spec().channels.count().max(1) as u16;
        sink.push(downmix.mono(audio)).map_err(from_sink)?;
    }
    if decoded_packets == 0 && skipped > 0 {
        return Err(DecodeError::Invalid(format!(
            "none of its {skipped} audio packets could be decoded"
        )));
    }
    let Some(sink) = sink.filter(|s| !s.is_empty()) else {
        return Err(DecodeError::Empty);
    };
    let cut_short = track.cut_short(sink.elapsed_ms(), ogg_cut, damaged_tail);
    let rate = sink.rate();
    Ok(Decoded {
        samples: sink.finish().map_err(from_sink)?,
        rate,
        channels: track.channels,
        skipped_packets: skipped,
        cut_short,
    })
}

/// The first audio track of a probed stream, its decoder, and what its container declares.
struct Track {
    format: Box<dyn FormatReader>,
    decoder: Box<dyn Decoder>,
    id: u32,
    declared_rate: u32,
    declared_ms: Option<u64>,
    frames: Option<u64>,
    /// The declared count until a packet decodes, then the decoded one.
    channels: u16,
}

impl Track {
    /// Probes `source` and opens its first audio track; refuses one declared longer than
    /// `max_secs` before decoding anything.
    fn open(
        source: Box<dyn MediaSource>,
        extension: Option<&str>,
        max_secs: u64,
    ) -> Result<Track, DecodeError> {
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
        let format = probed.format;
        let track = format
            .tracks()
            .iter()
            .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
            .ok_or(DecodeError::Empty)?;
        let params = &track.codec_params;
        let declared_rate = params.sample_rate.unwrap_or(0);
        let declared_ms = params
            .n_frames
            .filter(|_| declared_rate > 0)
            .map(|n| n.saturating_mul(1000) / u64::from(declared_rate));
        if let Some(n) = params.n_frames
            && over_cap(n, declared_rate, max_secs)
        {
            return Err(DecodeError::TooLong(declared_ms));
        }
        let decoder = symphonia::default::get_codecs()
            .make(params, &DecoderOptions::default())
            .map_err(|e| DecodeError::Invalid(format!("its codec is not supported ({e})")))?;
        Ok(Track {
            id: track.id,
            declared_rate,
            declared_ms,
            frames: params.n_frames,
            channels: params.channels.map_or(0, |c| c.count() as u16),
            decoder,
            format,
        })
    }

    /// Where decoding stopped short of the stream's end, if it did: after a damaged tail,
    /// or short of the declared length.
    fn cut_short(&self, at_ms: u64, ogg_cut: bool, damaged_tail: bool) -> Option<CutShort> {
        if ogg_cut {
            // symphonia takes an Ogg stream's length from its last page, which in a cut file
            // is wherever the cut fell: it says nothing true about the length.
            return Some(CutShort {
                at_ms,
                expected_ms: None,
            });
        }
        let short_of_declared = self
            .declared_ms
            .is_some_and(|d| at_ms + LENGTH_SLACK_MS < d);
        (damaged_tail || short_of_declared).then_some(CutShort {
            at_ms,
            expected_ms: self.declared_ms,
        })
    }
}

/// The sink for a packet at `rate`: made at the first packet (taking `tap`, expecting
/// `expected` frames), the same one after; a rate outside 1-384 kHz or one that changes
/// is refused.
fn sink_at<'s, 't>(
    sink: &'s mut Option<Sink<'t>>,
    rate: u32,
    max_secs: u64,
    expected: Option<u64>,
    tap: &mut Option<Tap<'t>>,
) -> Result<&'s mut Sink<'t>, DecodeError> {
    if !(1000..=384_000).contains(&rate) {
        return Err(DecodeError::Invalid(format!("a sample rate of {rate} Hz")));
    }
    match sink {
        Some(s) if s.rate() != rate => Err(DecodeError::Invalid(format!(
            "its sample rate changes from {} to {rate} Hz",
            s.rate()
        ))),
        Some(s) => Ok(s),
        None => {
            Ok(sink.insert(Sink::new(rate, max_secs, expected, tap.take()).map_err(from_sink)?))
        }
    }
}

/// Mixes decoded packets down to one channel in -1..1 (a sample that is not finite
/// becomes silence), reusing its buffers from packet to packet.
#[derive(Default)]
struct Downmix {
    interleaved: Option<SampleBuffer<f32>>,
    mono: Vec<f32>,
}

impl Downmix {
    fn mono(&mut self, audio: AudioBufferRef<'_>) -> &[f32] {
        let spec = *audio.spec();
        let ch = spec.channels.count().max(1);
        if self
            .interleaved
            .as_ref()
            .is_none_or(|b| b.capacity() < audio.capacity() * ch)
        {
            self.interleaved = Some(SampleBuffer::new(audio.capacity() as u64, spec));
        }
        let b = self.interleaved.as_mut().expect("made above");
        b.copy_interleaved_ref(audio);
        self.mono.clear();
        self.mono.extend(b.samples().chunks_exact(ch).map(|c| {
            let s = c.iter().sum::<f32>() / ch as f32;
            if s.is_finite() {
                s.clamp(-1.0, 1.0)
            } else {
                0.0
            }
        }));
        &self.mono
    }
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
