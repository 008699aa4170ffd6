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

use std::fs;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use rubato::{
    Resampler, SincFixedIn, SincInterpolationParameters, SincInterpolationType, WindowFunction,
};
use yazses_core::frame::SAMPLE_RATE_HZ;

/// Mono 16 kHz PCM, ready for the detector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Audio {
    /// The samples, at [`SAMPLE_RATE_HZ`].
    pub samples: Vec<i16>,
    /// The file's own sample rate before resampling.
    pub source_rate: u32,
    /// The file's channel count before downmixing.
    pub source_channels: u16,
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
    #[error("{path} is longer than the limit of {limit_secs} s")]
    TooLong {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit_secs: u64,
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

/// Caps on what a caller will decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest file accepted, in bytes.
    pub max_bytes: u64,
    /// Longest audio accepted, in seconds.
    pub max_secs: u64,
}

impl Default for Limits {
    /// 1 GiB and 3 hours.
    fn default() -> Self {
        Limits {
            max_bytes: 1 << 30,
            max_secs: 3 * 3600,
        }
    }
}

/// Reads an audio file of any supported format and converts it to 16 kHz mono.
pub fn read(path: &Path, limits: &Limits) -> Result<Audio, AudioError> {
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
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    fs::File::open(path)
        .and_then(|f| f.take(limits.max_bytes + 1).read_to_end(&mut bytes))
        .map_err(io_err)?;
    decode_bytes(bytes, path, limits)
}

/// Decodes a whole file held in memory; `path` names it in errors and its extension
/// helps recognise the format.
pub fn decode_bytes(bytes: Vec<u8>, path: &Path, limits: &Limits) -> Result<Audio, AudioError> {
    if bytes.is_empty() {
        return Err(AudioError::Empty {
            path: path.to_owned(),
        });
    }
    let is_riff = bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE";
    let wav_error = if is_riff {
        match decode_wav(io::Cursor::new(&bytes), path) {
            Ok(audio) => return check_duration(audio, path, limits),
            // hound reads PCM and float; other WAV encodings may still be symphonia's.
            Err(e @ (AudioError::NotWav { .. } | AudioError::Unsupported { .. })) => Some(e),
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_owned);
    let decoded = decode::decode(
        Box::new(io::Cursor::new(bytes)),
        extension.as_deref(),
        limits.max_secs,
    );
    let decoded = match (decoded, wav_error) {
        (Ok(d), _) => d,
        (Err(_), Some(wav)) => return Err(wav),
        (Err(e), None) => {
            return Err(match e {
                decode::DecodeError::Unrecognised => AudioError::Unrecognised {
                    path: path.to_owned(),
                },
                decode::DecodeError::Invalid(reason) => AudioError::Corrupt {
                    path: path.to_owned(),
                    reason,
                },
                decode::DecodeError::Empty => AudioError::Empty {
                    path: path.to_owned(),
                },
                decode::DecodeError::TooLong { limit_secs } => AudioError::TooLong {
                    path: path.to_owned(),
                    limit_secs,
                },
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
    let samples = to_16k(decoded.mono, decoded.rate, path)?;
    check_duration(
        Audio {
            samples,
            source_rate: decoded.rate,
            source_channels: decoded.channels,
        },
        path,
        limits,
    )
}

fn check_duration(audio: Audio, path: &Path, limits: &Limits) -> Result<Audio, AudioError> {
    if audio.duration_ms() > limits.max_secs.saturating_mul(1000) {
        return Err(AudioError::TooLong {
            path: path.to_owned(),
            limit_secs: limits.max_secs,
        });
    }
    Ok(audio)
}

fn to_16k(mono: Vec<f32>, rate: u32, path: &Path) -> Result<Vec<i16>, AudioError> {
    let resampled = if rate == SAMPLE_RATE_HZ {
        mono
    } else {
        resample(&mono, rate).map_err(|reason| AudioError::Resample {
            path: path.to_owned(),
            rate,
            reason,
        })?
    };
    Ok(resampled.iter().map(|&s| to_i16(s)).collect())
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
    decode_wav(BufReader::new(file), path)
}

/// Decodes WAV bytes from any reader; `path` only names the source in errors.
pub fn decode_wav<R: io::Read>(reader: R, path: &Path) -> Result<Audio, AudioError> {
    let not_wav = |e: hound::Error| AudioError::NotWav {
        path: path.to_owned(),
        reason: describe_hound(&e),
    };
    let mut wav = hound::WavReader::new(reader).map_err(not_wav)?;
    let spec = wav.spec();
    let channels = spec.channels;
    if channels == 0 {
        return Err(AudioError::Unsupported {
            path: path.to_owned(),
            format: "zero channels".into(),
        });
    }
    if spec.sample_rate < 1000 || spec.sample_rate > 384_000 {
        return Err(AudioError::Unsupported {
            path: path.to_owned(),
            format: format!("a sample rate of {} Hz", spec.sample_rate),
        });
    }
    let promised = u64::from(wav.len());
    let interleaved = read_samples(&mut wav, spec, path, promised)?;
    if interleaved.is_empty() {
        return Err(AudioError::Empty {
            path: path.to_owned(),
        });
    }
    let mono = downmix(&interleaved, usize::from(channels));
    let samples = to_16k(mono, spec.sample_rate, path)?;
    Ok(Audio {
        samples,
        source_rate: spec.sample_rate,
        source_channels: channels,
    })
}

/// Samples as `f32` in -1..1, interleaved.
fn read_samples<R: io::Read>(
    wav: &mut hound::WavReader<R>,
    spec: hound::WavSpec,
    path: &Path,
    promised: u64,
) -> Result<Vec<f32>, AudioError> {
    // The header's length is a claim, not a fact: reserve at most 4 Mi samples up front.
    let mut out = Vec::with_capacity(promised.min(1 << 22) as usize);
    let mut fail: Option<hound::Error> = None;
    match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => {
            for s in wav.samples::<f32>() {
                match s {
                    Ok(v) if v.is_finite() => out.push(v.clamp(-1.0, 1.0)),
                    Ok(_) => out.push(0.0),
                    Err(e) => {
                        fail = Some(e);
                        break;
                    }
                }
            }
        }
        (hound::SampleFormat::Int, bits @ 1..=32) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            for s in wav.samples::<i32>() {
                match s {
                    Ok(v) => out.push(v as f32 * scale),
                    Err(e) => {
                        fail = Some(e);
                        break;
                    }
                }
            }
        }
        (format, bits) => {
            return Err(AudioError::Unsupported {
                path: path.to_owned(),
                format: format!(
                    "{bits}-bit {}",
                    if format == hound::SampleFormat::Float {
                        "float"
                    } else {
                        "integer"
                    }
                ),
            });
        }
    }
    match fail {
        None => Ok(out),
        // hound reports a short data chunk as a read error partway through the samples.
        Some(_) if (out.len() as u64) < promised => Err(AudioError::Truncated {
            path: path.to_owned(),
            promised,
            found: out.len() as u64,
        }),
        Some(e) => Err(AudioError::NotWav {
            path: path.to_owned(),
            reason: describe_hound(&e),
        }),
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

fn downmix(interleaved: &[f32], channels: usize) -> Vec<f32> {
    if channels == 1 {
        return interleaved.to_vec();
    }
    interleaved
        .chunks_exact(channels)
        .map(|c| c.iter().sum::<f32>() / channels as f32)
        .collect()
}

/// Resamples mono `f32` audio to 16 kHz with a windowed-sinc filter. The output has the
/// input's duration and timing (pinned by a test with an impulse), so times measured on it
/// are times in the file.
pub fn resample(mono: &[f32], rate: u32) -> Result<Vec<f32>, String> {
    const CHUNK: usize = 1024;
    let ratio = f64::from(SAMPLE_RATE_HZ) / f64::from(rate);
    let params = SincInterpolationParameters {
        sinc_len: 128,
        f_cutoff: 0.925,
        interpolation: SincInterpolationType::Cubic,
        oversampling_factor: 128,
        window: WindowFunction::BlackmanHarris2,
    };
    let mut resampler =
        SincFixedIn::<f32>::new(ratio, 1.0, params, CHUNK, 1).map_err(|e| e.to_string())?;
    let expected = (mono.len() as f64 * ratio).round() as usize;
    let mut out = Vec::with_capacity(expected + 2 * CHUNK);
    let mut chunks = mono.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        let r = resampler
            .process(&[chunk], None)
            .map_err(|e| e.to_string())?;
        out.extend_from_slice(&r[0]);
    }
    let r = resampler
        .process_partial(Some(&[chunks.remainder()]), None)
        .map_err(|e| e.to_string())?;
    out.extend_from_slice(&r[0]);
    // rubato 0.16's sinc resampler starts aligned (its output_delay() does not apply to the
    // samples it returns), so only the tail needs flushing out of the filter.
    while out.len() < expected {
        let r = resampler
            .process_partial::<&[f32]>(None, None)
            .map_err(|e| e.to_string())?;
        if r[0].is_empty() {
            break;
        }
        out.extend_from_slice(&r[0]);
    }
    out.truncate(expected);
    Ok(out)
}

fn to_i16(s: f32) -> i16 {
    (s * 32768.0).round().clamp(-32768.0, 32767.0) as i16
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
    fn resampling_keeps_time_an_impulse_stays_where_it_was() {
        for rate in [8_000u32, 22_050, 44_100, 48_000] {
            let mut x = vec![0f32; rate as usize];
            x[rate as usize / 2] = 1.0;
            let out = resample(&x, rate).unwrap();
            assert_eq!(out.len(), 16_000);
            let peak = (0..out.len())
                .max_by(|&a, &b| out[a].total_cmp(&out[b]))
                .unwrap();
            assert!(
                (7999..=8001).contains(&peak),
                "{rate} Hz: impulse at {peak}, not 8000"
            );
        }
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
}
