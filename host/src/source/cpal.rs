//! Live capture from a sound card through `cpal`: the default input or one pinned by name.
//!
//! The stream is opened only while listening and closed when the [`CpalSource`] is dropped.
//! The audio callback does no allocation and takes no lock: it mixes each frame to mono
//! `i16` and pushes it into a lock-free ring buffer (`rtrb`) made before the stream starts;
//! if the ring is full, samples are counted as dropped rather than waited for. The reading
//! side resamples to 16 kHz (when the device cannot run at 16 kHz) and cuts 10 ms frames.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, Sample, SampleFormat, SizedSample};
use yazses_core::frame::{FRAME_SAMPLES, Frame, SAMPLE_RATE_HZ};

use super::{FrameSource, SourceError};
use crate::audio::resample::{Quality, To16k};

/// Seconds of audio the ring holds between the callback and the reader.
const RING_SECONDS: u32 = 4;
/// How long the reader waits for audio before calling the device dead.
const STALL: Duration = Duration::from_secs(3);

/// An input device as `yazses devices` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDevice {
    /// The name to pin it with (`[audio] device`).
    pub name: String,
    /// What the system calls it.
    pub description: String,
    /// Whether it is the default input.
    pub default: bool,
}

/// Runs `f` with alsa-lib's messages on this thread kept from stderr: looking for devices
/// on a machine without a sound card prints a screen of them before the one error that
/// matters. What alsa-lib said goes to the debug log (`YAZSES_LOG=debug`).
#[cfg(target_os = "linux")]
fn quiet<T>(f: impl FnOnce() -> T) -> T {
    let said = alsa::Output::local_error_handler().ok();
    let result = f();
    if let Some(said) = said {
        let text = said.borrow().to_string();
        if !text.trim().is_empty() {
            tracing::debug!(alsa = %text.trim_end(), "alsa-lib said");
        }
    }
    result
}

#[cfg(not(target_os = "linux"))]
fn quiet<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// What to try when no input can be used.
const NO_INPUT_HINT: &str = "`yazses devices` lists the inputs (pin one with audio.device), \
                             and `yazses listen --file FILE` plays a recording instead";

/// ALSA's plugins that are not microphones: the null device (endless silence, at no
/// pace) and converters stacked on another device, which the device itself covers.
const NOT_MICROPHONES: &[&str] = &[
    "null",
    "lavrate",
    "samplerate",
    "speexrate",
    "speex",
    "upmix",
    "vdownmix",
    "a52",
];

/// Why `name` is no microphone, when it is one of [`NOT_MICROPHONES`].
fn not_a_microphone(name: &str) -> Option<String> {
    NOT_MICROPHONES.contains(&name).then(|| {
        if name == "null" {
            "\"null\" is ALSA's null device, which records endless silence, not a microphone".into()
        } else {
            format!("{name:?} is an ALSA converter stacked on another device, not a microphone")
        }
    })
}

/// The input devices of the default host that can be opened for capture: ALSA's
/// converter plugins, and its sound-server plugins when no server runs (pulse, jack,
/// oss), are not listed.
pub fn input_devices() -> Result<Vec<InputDevice>, SourceError> {
    quiet(list_inputs)
}

fn list_inputs() -> Result<Vec<InputDevice>, SourceError> {
    let host = cpal::default_host();
    let default = host
        .default_input_device()
        .and_then(|d| d.id().ok())
        .map(|id| id.id().to_owned());
    let devices = host
        .input_devices()
        .map_err(|e| SourceError::Missing(format!("listing the audio inputs: {e}")))?;
    Ok(devices
        .filter_map(|d| {
            let id = d.id().ok()?;
            let name = id.id().to_owned();
            if not_a_microphone(&name).is_some() || d.default_input_config().is_err() {
                tracing::debug!(name, "not listed: no input opens there");
                return None;
            }
            let description = d
                .description()
                .map(|desc| desc.name().to_owned())
                .unwrap_or_default();
            Some(InputDevice {
                default: default.as_deref() == Some(name.as_str()),
                name,
                description,
            })
        })
        .collect())
}

/// A live microphone as a [`FrameSource`].
pub struct CpalSource {
    stream: cpal::Stream,
    ring: rtrb::Consumer<i16>,
    rate: u32,
    to16k: To16k,
    unconverted: Vec<f32>,
    ready: VecDeque<i16>,
    dropped: Arc<AtomicU64>,
    failure: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for CpalSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpalSource")
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

impl CpalSource {
    /// Opens `device` (by name; empty for the default input) and starts capturing.
    pub fn open(device: &str) -> Result<CpalSource, SourceError> {
        crate::platform::microphone_allowed().map_err(|d| SourceError::Denied(d.0))?;
        quiet(|| CpalSource::open_loudly(device)).map_err(|e| match e {
            SourceError::Missing(why) if !why.contains("yazses devices") => {
                SourceError::Missing(format!("{}; {NO_INPUT_HINT}", why.trim_end_matches('.')))
            }
            e => e,
        })
    }

    fn open_loudly(device: &str) -> Result<CpalSource, SourceError> {
        let dev_err = |what: &str, e: &dyn std::fmt::Display| {
            let msg = format!("{what}: {e}");
            // ALSA says EBUSY in words; cpal has no kind for it.
            if msg.contains("busy") {
                SourceError::Busy(format!("{msg} (another program holds the device)"))
            } else {
                SourceError::Missing(msg)
            }
        };
        if let Some(why) = not_a_microphone(device) {
            return Err(SourceError::Missing(why));
        }
        let host = cpal::default_host();
        let dev = if device.is_empty() {
            host.default_input_device()
                .ok_or_else(|| SourceError::Missing("there is no default input device".into()))?
        } else {
            let devices = host
                .input_devices()
                .map_err(|e| dev_err("listing inputs", &e))?;
            let mut found = None;
            for d in devices {
                let id = d.id().map(|id| id.id().to_owned()).unwrap_or_default();
                let desc = d
                    .description()
                    .map(|x| x.name().to_owned())
                    .unwrap_or_default();
                if id == device || desc == device {
                    found = Some(d);
                    break;
                }
            }
            found.ok_or_else(|| {
                SourceError::Missing(format!(
                    "no input device is named {device:?} (`yazses devices` lists them)"
                ))
            })?
        };
        let config = choose_config(&dev).map_err(|e| {
            // No card at all reads better than cpal's "may have been disconnected".
            if device.is_empty() && list_inputs().is_ok_and(|l| l.is_empty()) {
                SourceError::Missing(
                    "there is no audio input: no sound card was found (or none this user may use)"
                        .into(),
                )
            } else {
                e
            }
        })?;
        let rate = config.sample_rate();
        let channels = usize::from(config.channels()).max(1);
        let (producer, ring) = rtrb::RingBuffer::new((rate * RING_SECONDS) as usize);
        let dropped = Arc::new(AtomicU64::new(0));
        let failure = Arc::new(Mutex::new(None));
        let stream = match config.sample_format() {
            SampleFormat::I16 => {
                build::<i16>(&dev, &config, channels, producer, &dropped, &failure)
            }
            SampleFormat::I32 => {
                build::<i32>(&dev, &config, channels, producer, &dropped, &failure)
            }
            SampleFormat::F32 => {
                build::<f32>(&dev, &config, channels, producer, &dropped, &failure)
            }
            SampleFormat::U16 => {
                build::<u16>(&dev, &config, channels, producer, &dropped, &failure)
            }
            SampleFormat::I8 => build::<i8>(&dev, &config, channels, producer, &dropped, &failure),
            SampleFormat::U8 => build::<u8>(&dev, &config, channels, producer, &dropped, &failure),
            SampleFormat::F64 => {
                build::<f64>(&dev, &config, channels, producer, &dropped, &failure)
            }
            other => {
                return Err(SourceError::Missing(format!(
                    "the device offers only {other} samples, which yazses does not read"
                )));
            }
        }
        .map_err(|e| dev_err("opening the input stream", &e))?;
        stream
            .play()
            .map_err(|e| dev_err("starting the input stream", &e))?;
        let to16k = To16k::new(rate, Quality::Live)
            .map_err(|e| SourceError::Missing(format!("setting up resampling: {e}")))?;
        tracing::info!(rate, channels, format = %config.sample_format(), "microphone open");
        Ok(CpalSource {
            stream,
            ring,
            rate,
            to16k,
            unconverted: Vec::with_capacity(1024),
            ready: VecDeque::with_capacity(FRAME_SAMPLES * 8),
            dropped,
            failure,
        })
    }

    /// Moves what the callback captured into `ready`, resampled to 16 kHz.
    fn drain(&mut self) -> Result<usize, SourceError> {
        let n = self.ring.slots();
        if n == 0 {
            return Ok(0);
        }
        let chunk = self
            .ring
            .read_chunk(n)
            .map_err(|e| SourceError::Gone(e.to_string()))?;
        self.unconverted.clear();
        self.unconverted
            .extend(chunk.into_iter().map(|s| f32::from(s) / 32768.0));
        self.to16k
            .push(&self.unconverted, &mut self.ready)
            .map_err(|e| SourceError::Gone(e.to_string()))?;
        Ok(n)
    }
}

impl FrameSource for CpalSource {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        let mut waiting_since = Instant::now();
        while self.ready.len() < FRAME_SAMPLES {
            if let Some(why) = self.failure.lock().ok().and_then(|f| f.clone()) {
                return Err(SourceError::Gone(why));
            }
            if self.drain()? > 0 {
                waiting_since = Instant::now();
                continue;
            }
            if waiting_since.elapsed() > STALL {
                return Err(SourceError::Gone(format!(
                    "the microphone delivered no audio for {} s (unplugged?)",
                    STALL.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut frame = [0i16; FRAME_SAMPLES];
        for (slot, s) in frame.iter_mut().zip(self.ready.drain(..FRAME_SAMPLES)) {
            *slot = s;
        }
        Ok(Some(frame))
    }
}

impl Drop for CpalSource {
    fn drop(&mut self) {
        let _ = self.stream.pause();
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                dropped,
                "samples were dropped: the reader fell behind the microphone"
            );
        }
        tracing::info!("microphone closed");
    }
}

/// 16 kHz mono when the device offers it (no resampling), else its default.
fn choose_config(dev: &cpal::Device) -> Result<cpal::SupportedStreamConfig, SourceError> {
    let preferred = [SampleFormat::I16, SampleFormat::F32];
    if let Ok(ranges) = dev.supported_input_configs() {
        let ranges: Vec<_> = ranges.collect();
        for format in preferred {
            for channels in [1u16, 2] {
                if let Some(r) = ranges.iter().find(|r| {
                    r.sample_format() == format
                        && r.channels() == channels
                        && r.min_sample_rate() <= SAMPLE_RATE_HZ
                        && r.max_sample_rate() >= SAMPLE_RATE_HZ
                }) {
                    return Ok(r.with_sample_rate(SAMPLE_RATE_HZ));
                }
            }
        }
    }
    dev.default_input_config()
        .map_err(|e| SourceError::Missing(format!("the device has no usable input format: {e}")))
}

fn build<T>(
    dev: &cpal::Device,
    config: &cpal::SupportedStreamConfig,
    channels: usize,
    mut producer: rtrb::Producer<i16>,
    dropped: &Arc<AtomicU64>,
    failure: &Arc<Mutex<Option<String>>>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample,
    i16: FromSample<T>,
{
    let dropped = dropped.clone();
    let failure = failure.clone();
    dev.build_input_stream(
        config.config(),
        move |data: &[T], _: &cpal::InputCallbackInfo| {
            // Real-time context: no allocation, no lock, no waiting.
            for frame in data.chunks_exact(channels) {
                let sum: i32 = frame.iter().map(|&s| i32::from(i16::from_sample(s))).sum();
                let mono = (sum / channels as i32) as i16;
                if producer.push(mono).is_err() {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        },
        move |err: cpal::Error| {
            if let Ok(mut f) = failure.try_lock() {
                f.get_or_insert_with(|| err.to_string());
            }
        },
        None,
    )
}
