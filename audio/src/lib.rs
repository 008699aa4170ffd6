//! Reading audio files into the core's contract: 16 kHz mono `i16`.
//!
//! [`read`] takes WAV, FLAC, MP3 and Ogg/Vorbis. WAV is decoded with `hound`
//! (8/16/24/32-bit integer and 32-bit float PCM), which tells a truncated file from a
//! corrupt one; the rest, and WAV encodings hound does not read, go through `symphonia`
//! ([`decode`]). Channels are averaged to mono and the result resampled with `rubato` when
//! the rate is not 16 kHz. Everything that can go wrong with a file becomes an
//! [`AudioError`] that names the file and says what is wrong, in one sentence; files over
//! the caller's [`Limits`] are refused before they are decoded (size) or as soon as the
//! decoder passes the duration cap.

pub mod decode;
pub mod resample;
mod sink;
mod wav;

use std::fs;
use std::io::{self, BufReader, Read, SeekFrom};
use std::path::{Path, PathBuf};

use symphonia::core::io::MediaSource;
use yazses_core::frame::SAMPLE_RATE_HZ;

pub use resample::resample;
pub use sink::{Chunk, Tap};

/// Mono 16 kHz PCM, ready for the detector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Audio {
    /// The samples, at [`SAMPLE_RATE_HZ`].
    pub samples: Vec<i16>,
    /// The file's own sample rate before resampling.
    pub source_rate: u32,
    /// The file's channel count before downmixing.
    pub source_channels: u16,
    /// Where a damaged or missing tail cut the audio short, in milliseconds, when the
    /// caller accepted partial audio ([`Limits::accept_partial`]); `None` for a whole file.
    pub cut_short_ms: Option<u64>,
}

impl Audio {
    /// The length in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.samples.len() as u64 * 1000 / u64::from(SAMPLE_RATE_HZ)
    }
}

/// Why a file could not be read as audio.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The path names a directory, a device or something else that is not a file.
    #[error("{path} is not a regular file")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file is not a WAV file hound can parse.
    #[error("{path} is not a readable WAV file: {reason}")]
    NotWav {
        /// The file.
        path: PathBuf,
        /// What the parser found.
        reason: String,
    },
    /// The header promises more audio than the file holds.
    #[error(
        "{path} is truncated: its header promises {promised} samples but the data ends after {found}"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Samples the header declares.
        promised: u64,
        /// Samples actually present.
        found: u64,
    },
    /// A valid WAV file with no samples.
    #[error("{path} holds no audio (zero samples)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A WAV format that is valid but not supported here.
    #[error("{path} uses an unsupported sample format: {format}")]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The format, in words.
        format: String,
    },
    /// Not a format yazses reads.
    #[error("{path} is not an audio file yazses can read (WAV, FLAC, MP3 or Ogg/Vorbis)")]
    Unrecognised {
        /// The file.
        path: PathBuf,
    },
    /// A recognised format whose contents are damaged.
    #[error("{path} is damaged: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the decoder found.
        reason: String,
    },
    /// Larger than the caller accepts.
    #[error("{path} is {bytes} bytes, over the limit of {limit}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// Longer than the caller accepts.
    #[error(
        "{path} is {}, over the limit of {limit_secs} s; transcribe takes longer files with --max-duration-s (the config's [transcribe] max_duration_s)",
        length_words(*length_ms, *limit_secs)
    )]
    TooLong {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit_secs: u64,
        /// How long the file says it is, when its header says; `None` when decoding
        /// passed the limit.
        length_ms: Option<u64>,
    },
    /// Decoding stopped before the end of the audio: a damaged or missing tail.
    #[error("{path} is cut short: {}", cut_short_words(*at_ms, *expected_ms))]
    CutShort {
        /// The file.
        path: PathBuf,
        /// How much decoded, in milliseconds.
        at_ms: u64,
        /// How long the file says it is, when it says.
        expected_ms: Option<u64>,
    },
    /// The caller's [`Tap`] wanted no more audio (it says why itself).
    #[error("reading {path} was stopped")]
    Stopped {
        /// The file.
        path: PathBuf,
    },
    /// The resampler refused the audio.
    #[error("cannot resample {path} from {rate} Hz to 16 kHz: {reason}")]
    Resample {
        /// The file.
        path: PathBuf,
        /// The file's rate.
        rate: u32,
        /// The resampler's reason.
        reason: String,
    },
}

/// A length as a person says it: "3 h 1 min", "4 min 12 s", "9.5 s".
fn spoken_length(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        3600.. => format!("{} h {} min", s / 3600, s % 3600 / 60),
        60.. => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{s}.{} s", ms % 1000 / 100),
    }
}

fn length_words(length_ms: Option<u64>, limit_secs: u64) -> String {
    match length_ms {
        Some(ms) => format!("{} long by its header", spoken_length(ms)),
        None => format!("longer than {}", spoken_length(limit_secs * 1000)),
    }
}

fn cut_short_words(at_ms: u64, expected_ms: Option<u64>) -> String {
    let secs = |ms: u64| format!("{}.{} s", ms / 1000, ms % 1000 / 100);
    match expected_ms {
        Some(e) => format!(
            "decoding stopped at {} of the {} it says it holds (a damaged or missing tail); ask for partial output (--partial, or partial = true) to transcribe what is there",
            secs(at_ms),
            secs(e)
        ),
        None => format!(
            "decoding stopped at a damaged packet after {}; ask for partial output (--partial, or partial = true) to transcribe what is there",
            secs(at_ms)
        ),
    }
}

/// Caps on what a caller will decode, and whether a file cut short is acceptable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest file accepted, in bytes.
    pub max_bytes: u64,
    /// Longest audio accepted, in seconds.
    pub max_secs: u64,
    /// Return what decoded from a file with a damaged or missing tail (saying where it
    /// stops, [`Audio::cut_short_ms`]) instead of refusing it.
    pub accept_partial: bool,
}

impl Default for Limits {
    /// 1 GiB and 3 hours; a file cut short is refused.
    fn default() -> Self {
        Limits {
            max_bytes: 1 << 30,
            max_secs: 3 * 3600,
            accept_partial: false,
        }
    }
}

/// Reads an audio file of any supported format and converts it to 16 kHz mono, streaming
/// from the file: what it costs in memory is its 16 kHz length, which `limits` caps.
pub fn read(path: &Path, limits: &Limits) -> Result<Audio, AudioError> {
    let file = open(path, limits)?;
    decode_source(file.0, file.1, path, limits, None)
}

/// Audio named on the command line: a file, decoded as it is read, or a stream (`-` for
/// standard input, a pipe or FIFO such as `/dev/stdin` or a shell's `<(ffmpeg ...)`),
/// read whole first within the size cap, since a stream cannot be sought in.
#[derive(Debug)]
pub enum Input {
    /// A file on disk.
    File(PathBuf),
    /// What a stream held.
    Read {
        /// The stream's name in messages.
        name: PathBuf,
        /// Its bytes.
        bytes: Vec<u8>,
    },
}

/// How standard input is named in messages.
const STDIN_NAME: &str = "standard input";

impl Input {
    /// Standard input, read whole now; a terminal is refused, since it is not audio.
    pub fn stdin(limits: &Limits) -> Result<Input, AudioError> {
        let name = PathBuf::from(STDIN_NAME);
        let stdin = io::stdin();
        if io::IsTerminal::is_terminal(&stdin) {
            return Err(AudioError::Io {
                path: name,
                source: io::Error::other(
                    "it is a terminal, not audio; pipe a recording in (`ffmpeg -i talk.m4a -f wav - | yazses transcribe -`)",
                ),
            });
        }
        let bytes = read_stream(stdin.lock(), &name, limits)?;
        Ok(Input::Read { name, bytes })
    }

    /// The pipe or socket at `path` (a FIFO, a shell's `<(...)`), read whole now: a stream
    /// has no length to check before it is decoded.
    pub fn stream_at(path: &Path, limits: &Limits) -> Result<Input, AudioError> {
        let io_err = |source| AudioError::Io {
            path: path.to_owned(),
            source,
        };
        let file = fs::File::open(path).map_err(io_err)?;
        let bytes = read_stream(file, path, limits)?;
        Ok(Input::Read {
            name: path.to_owned(),
            bytes,
        })
    }

    /// Decodes it whole, as [`read`] does a file.
    pub fn read(self, limits: &Limits) -> Result<Audio, AudioError> {
        match self {
            Input::File(path) => read(&path, limits),
            Input::Read { name, bytes } => decode_bytes(bytes, &name, limits),
        }
    }

    /// Decodes it through `tap`, as [`stream`] does a file.
    pub fn stream(self, limits: &Limits, tap: Tap<'_>) -> Result<Streamed, AudioError> {
        match self {
            Input::File(path) => stream(&path, limits, tap),
            Input::Read { name, bytes } => stream_bytes(bytes, &name, limits, tap),
        }
    }
}

/// Reads a stream to its end, refusing one over the size cap as soon as it passes it.
fn read_stream(reader: impl io::Read, name: &Path, limits: &Limits) -> Result<Vec<u8>, AudioError> {
    let mut bytes = Vec::new();
    reader
        .take(limits.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| AudioError::Io {
            path: name.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limits.max_bytes {
        return Err(AudioError::TooLarge {
            path: name.to_owned(),
            bytes: bytes.len() as u64,
            limit: limits.max_bytes,
        });
    }
    Ok(bytes)
}

/// What a file streamed through a [`Tap`] was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streamed {
    /// The file's own sample rate before resampling.
    pub source_rate: u32,
    /// The file's channel count before downmixing.
    pub source_channels: u16,
    /// Where a damaged or missing tail cut the audio short, in milliseconds, when the
    /// caller accepted partial audio; `None` for a whole file.
    pub cut_short_ms: Option<u64>,
}

impl Streamed {
    /// What a tapped decode's (sample-less) [`Audio`] says of the file.
    fn of(audio: Audio) -> Streamed {
        Streamed {
            source_rate: audio.source_rate,
            source_channels: audio.source_channels,
            cut_short_ms: audio.cut_short_ms,
        }
    }
}

/// Reads an audio file as [`read`] does, but hands the 16 kHz audio to `tap` piece by
/// piece as it decodes instead of keeping it: a file of any length costs the decoder's
/// buffers, a few kilobytes. The checks are [`read`]'s; one that only the end of the file
/// can fail (a cut-short tail) fails after the tap has had what came before it.
pub fn stream(path: &Path, limits: &Limits, tap: Tap<'_>) -> Result<Streamed, AudioError> {
    let file = open(path, limits)?;
    decode_source(file.0, file.1, path, limits, Some(tap)).map(Streamed::of)
}

/// Streams a whole file held in memory through `tap`, as [`stream`] does a file on disk;
/// `path` names it in errors and its extension helps recognise the format.
pub fn stream_bytes(
    bytes: Vec<u8>,
    path: &Path,
    limits: &Limits,
    tap: Tap<'_>,
) -> Result<Streamed, AudioError> {
    let len = bytes.len() as u64;
    decode_source(io::Cursor::new(bytes), len, path, limits, Some(tap)).map(Streamed::of)
}

/// Opens a regular file within the size cap, with its length.
fn open(path: &Path, limits: &Limits) -> Result<(fs::File, u64), AudioError> {
    let io_err = |source| AudioError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = fs::metadata(path).map_err(io_err)?;
    if !meta.is_file() {
        return Err(AudioError::NotAFile {
            path: path.to_owned(),
        });
    }
    if meta.len() > limits.max_bytes {
        return Err(AudioError::TooLarge {
            path: path.to_owned(),
            bytes: meta.len(),
            limit: limits.max_bytes,
        });
    }
    let file = fs::File::open(path).map_err(io_err)?;
    Ok((file, meta.len()))
}

/// Decodes a whole file held in memory; `path` names it in errors and its extension
/// helps recognise the format.
pub fn decode_bytes(bytes: Vec<u8>, path: &Path, limits: &Limits) -> Result<Audio, AudioError> {
    let len = bytes.len() as u64;
    decode_source(io::Cursor::new(bytes), len, path, limits, None)
}

fn decode_source<S: MediaSource + 'static>(
    mut source: S,
    byte_len: u64,
    path: &Path,
    limits: &Limits,
    mut tap: Option<Tap<'_>>,
) -> Result<Audio, AudioError> {
    let io_err = |source| AudioError::Io {
        path: path.to_owned(),
        source,
    };
    // A WAV file hound gives up on partway is tried again with symphonia, which must not
    // hand the tap audio it already had.
    let tapping = tap.is_some();
    let tapped = std::cell::Cell::new(0u64);
    let mut counted = |c: Chunk<'_>| {
        tapped.set(tapped.get() + c.samples.len() as u64);
        tap.as_mut().is_none_or(|t| t(c))
    };
    if byte_len == 0 {
        return Err(AudioError::Empty {
            path: path.to_owned(),
        });
    }
    let mut magic = [0u8; 12];
    let is_riff =
        source.read_exact(&mut magic).is_ok() && &magic[..4] == b"RIFF" && &magic[8..] == b"WAVE";
    source.seek(SeekFrom::Start(0)).map_err(io_err)?;
    let wav_error = if is_riff {
        let wav_tap: Option<Tap<'_>> = if tapping { Some(&mut counted) } else { None };
        // A header written to a pipe gives no length: the data runs to the file's end.
        let mut header = Vec::with_capacity(wav::HEADER_SCAN);
        (&mut source)
            .take(wav::HEADER_SCAN as u64)
            .read_to_end(&mut header)
            .map_err(io_err)?;
        let data_len = wav::streamed_data_len(&header, byte_len);
        if let Some((at, len)) = data_len {
            tracing::debug!(
                path = %path.display(),
                bytes = len,
                "the WAV header gives no length (written to a pipe); reading to the end"
            );
            header[at..at + 4].copy_from_slice(&len.to_le_bytes());
        }
        source
            .seek(SeekFrom::Start(header.len() as u64))
            .map_err(io_err)?;
        let reader = io::Cursor::new(header).chain(BufReader::new(&mut source));
        match wav::decode(reader, Some(byte_len), path, limits, wav_tap) {
            Ok(audio) => return Ok(audio),
            // hound reads PCM and float; other WAV encodings may still be symphonia's.
            Err(e @ (AudioError::NotWav { .. } | AudioError::Unsupported { .. }))
                if tapped.get() == 0 =>
            {
                Some(e)
            }
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    source.seek(SeekFrom::Start(0)).map_err(io_err)?;
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_owned);
    let sym_tap: Option<Tap<'_>> = if tapping { Some(&mut counted) } else { None };
    let decoded = decode::decode(
        Box::new(source),
        extension.as_deref(),
        limits.max_secs,
        sym_tap,
    );
    let decoded = match (decoded, wav_error) {
        (Ok(d), _) => d,
        (Err(_), Some(wav)) => return Err(wav),
        (Err(e), None) => {
            let path = path.to_owned();
            return Err(match e {
                decode::DecodeError::Unrecognised => AudioError::Unrecognised { path },
                decode::DecodeError::Invalid(reason) => AudioError::Corrupt { path, reason },
                decode::DecodeError::Empty => AudioError::Empty { path },
                decode::DecodeError::TooLong(length_ms) => AudioError::TooLong {
                    path,
                    limit_secs: limits.max_secs,
                    length_ms,
                },
                decode::DecodeError::Resample { rate, reason } => {
                    AudioError::Resample { path, rate, reason }
                }
                decode::DecodeError::Stopped => AudioError::Stopped { path },
            });
        }
    };
    if decoded.skipped_packets > 0 {
        tracing::warn!(
            path = %path.display(),
            skipped = decoded.skipped_packets,
            "some packets could not be decoded and were skipped"
        );
    }
    if let Some(cut) = decoded.cut_short
        && !limits.accept_partial
    {
        return Err(AudioError::CutShort {
            path: path.to_owned(),
            at_ms: cut.at_ms,
            expected_ms: cut.expected_ms,
        });
    }
    Ok(Audio {
        samples: decoded.samples,
        source_rate: decoded.rate,
        source_channels: decoded.channels,
        cut_short_ms: decoded.cut_short.map(|c| c.at_ms),
    })
}

/// Reads a WAV file and converts it to 16 kHz mono.
pub fn read_wav(path: &Path) -> Result<Audio, AudioError> {
    let meta = fs::metadata(path).map_err(|source| AudioError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(AudioError::NotAFile {
            path: path.to_owned(),
        });
    }
    let file = fs::File::open(path).map_err(|source| AudioError::Io {
        path: path.to_owned(),
        source,
    })?;
    wav::decode(
        BufReader::new(file),
        Some(meta.len()),
        path,
        &Limits::default(),
        None,
    )
}

/// Decodes WAV bytes from any reader; `path` only names the source in errors.
pub fn decode_wav<R: io::Read>(reader: R, path: &Path) -> Result<Audio, AudioError> {
    wav::decode(reader, None, path, &Limits::default(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn wav_bytes(spec: hound::WavSpec, samples: &[i16]) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        let mut w = hound::WavWriter::new(&mut buf, spec).unwrap();
        for &s in samples {
            w.write_sample(s).unwrap();
        }
        w.finalize().unwrap();
        buf.into_inner()
    }

    fn spec(rate: u32, channels: u16) -> hound::WavSpec {
        hound::WavSpec {
            channels,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        }
    }

    #[test]
    fn sixteen_khz_mono_passes_through_unchanged() {
        let samples: Vec<i16> = (0..1000).map(|i| (i * 31 % 2000 - 1000) as i16).collect();
        let audio = decode_wav(
            Cursor::new(wav_bytes(spec(16_000, 1), &samples)),
            Path::new("x.wav"),
        )
        .unwrap();
        assert_eq!(audio.samples, samples);
    }

    #[test]
    fn stereo_is_averaged() {
        let audio = decode_wav(
            Cursor::new(wav_bytes(spec(16_000, 2), &[1000, 3000, -2000, 0])),
            Path::new("s.wav"),
        )
        .unwrap();
        assert_eq!(audio.samples, vec![2000, -1000]);
    }

    #[test]
    fn a_48khz_tone_keeps_its_length_timing_and_level() {
        let tone: Vec<i16> = (0..48_000)
            .map(|i| {
                (10_000.0 * (i as f32 * 440.0 * 2.0 * std::f32::consts::PI / 48_000.0).sin()) as i16
            })
            .collect();
        let audio = decode_wav(
            Cursor::new(wav_bytes(spec(48_000, 1), &tone)),
            Path::new("t.wav"),
        )
        .unwrap();
        assert_eq!(audio.samples.len(), 16_000);
        let peak = audio.samples[2000..14_000]
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap();
        assert!((9500..=10_500).contains(&peak), "peak {peak}");
    }

    #[test]
    fn truncated_data_is_named_truncated() {
        let mut bytes = wav_bytes(spec(16_000, 1), &[7; 800]);
        bytes.truncate(bytes.len() - 301);
        let err = decode_wav(Cursor::new(bytes), Path::new("cut.wav")).unwrap_err();
        assert!(
            matches!(err, AudioError::Truncated { promised: 800, .. }),
            "{err}"
        );
    }

    #[test]
    fn empty_and_garbage_files_are_refused() {
        let empty = wav_bytes(spec(16_000, 1), &[]);
        assert!(matches!(
            decode_wav(Cursor::new(empty), Path::new("e.wav")),
            Err(AudioError::Empty { .. })
        ));
        for bytes in [
            &b""[..],
            b"RIFF",
            b"hello, this is not audio at all, not even close",
        ] {
            let err = decode_wav(Cursor::new(bytes.to_vec()), Path::new("g.wav")).unwrap_err();
            assert!(matches!(err, AudioError::NotWav { .. }), "{err}");
        }
    }

    /// Found by the fuzzer: a 44.1 kHz WAV cut after one frame, read with partial output
    /// allowed, decoded to one frame, which is no 16 kHz sample at all; it came back as a
    /// success without audio.
    #[test]
    fn audio_too_short_for_one_16khz_sample_is_refused_as_empty() {
        let mut bytes = wav_bytes(spec(44_100, 2), &[32, 32, 974, -50, 7, 7]);
        bytes.truncate(bytes.len() - 5);
        for path in ["one-frame.wav", "one-frame.bin"] {
            let limits = Limits {
                accept_partial: true,
                ..Limits::default()
            };
            let err = decode_bytes(bytes.clone(), Path::new(path), &limits).unwrap_err();
            assert!(matches!(err, AudioError::Empty { .. }), "{path}: {err}");
        }
    }

    /// A file removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// A 48 kHz stereo WAV of `secs` seconds on disk.
    fn wav_file(name: &str, secs: usize) -> (Scratch, PathBuf) {
        let path = std::env::temp_dir().join(format!("yazses-{}-{name}", std::process::id()));
        let samples: Vec<i16> = (0..48_000 * 2 * secs)
            .map(|i| (((i / 2) as f32 * 0.05).sin() * 8000.0) as i16)
            .collect();
        std::fs::write(&path, wav_bytes(spec(48_000, 2), &samples)).unwrap();
        (Scratch(path.clone()), path)
    }

    #[test]
    fn streaming_hands_over_the_same_audio_read_keeps_in_pieces_with_the_expected_length() {
        let (_dir, path) = wav_file("s.wav", 3);
        let whole = read(&path, &Limits::default()).unwrap();
        let mut got = Vec::new();
        let mut pieces = 0;
        let mut expected = None;
        let streamed = stream(&path, &Limits::default(), &mut |c: Chunk<'_>| {
            got.extend_from_slice(c.samples);
            pieces += 1;
            expected = c.expected;
            true
        })
        .unwrap();
        assert_eq!(got, whole.samples);
        assert!(pieces > 10, "{pieces} pieces");
        assert_eq!(expected, Some(48_000));
        assert_eq!(
            (streamed.source_rate, streamed.source_channels),
            (48_000, 2)
        );
    }

    #[test]
    fn a_tap_that_says_stop_stops_the_decoding() {
        let (_dir, path) = wav_file("stop.wav", 3);
        let mut taken = 0usize;
        let err = stream(&path, &Limits::default(), &mut |c: Chunk<'_>| {
            taken += c.samples.len();
            taken < 4000
        })
        .unwrap_err();
        assert!(matches!(err, AudioError::Stopped { .. }), "{err}");
        assert!(taken < 16_000, "{taken}");
    }

    #[test]
    fn a_file_cut_short_fails_at_its_end_after_the_tap_had_what_came_before() {
        let (_dir, path) = wav_file("cut.wav", 2);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let mut taken = 0usize;
        let err = stream(&path, &Limits::default(), &mut |c: Chunk<'_>| {
            taken += c.samples.len();
            true
        })
        .unwrap_err();
        assert!(matches!(err, AudioError::Truncated { .. }), "{err}");
        assert!((15_000..=16_000).contains(&taken), "{taken}");
    }
}
