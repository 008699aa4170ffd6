//! The dongle's wire protocol: one definition for the firmware and the host.
//!
//! A frame on the wire is `0x00, COBS(postcard(message) ++ crc32_le), 0x00`:
//!
//! - [`postcard`] gives a compact, versionable encoding of the message enums (variant
//!   index first, varint integers, audio as raw little-endian bytes);
//! - a CRC-32 (ISO-HDLC, the zlib one) over the postcard bytes rejects corrupt frames;
//! - COBS removes every zero byte, so `0x00` only ever delimits frames and a reader that
//!   joins mid-stream, or meets garbage, resynchronises on the next delimiter.
//!
//! The delimiter on both sides costs one byte per frame and lets a reader that has just
//! joined take the very next frame, without a convention about who speaks first.
//!
//! [`FrameReader`] is the streaming decoder (fixed buffer, no allocation); it counts
//! what it drops. [`SeqTracker`] turns the audio sequence numbers into a count of lost
//! frames. Nothing here reads a clock or touches I/O.
//!
//! Protocol version [`PROTOCOL_VERSION`] is announced in [`DeviceMessage::Hello`]; a host
//! refuses a dongle that speaks another version, naming both. Both `Hello`s keep their
//! place (variant 0) and their fields in every version, so each side can always read the
//! other's version, whatever else changed.
//!
//! Version 2 numbers captures: the host chooses the id of each capture it starts
//! ([`HostMessage::Start`]), the dongle numbers the ones its button starts (top bit set,
//! [`BUTTON_CAPTURE`]), and every message about a capture carries its id. A host drops
//! whatever is not about its current capture, so audio still in flight from a cancelled
//! capture never becomes the start of the next one.

use serde::{Deserialize, Serialize};

use crate::end::End;
use crate::frame::FRAME_SAMPLES;

/// The dongle's USB vendor id: pid.codes, the vendor id shared by open-source hardware.
pub const USB_VID: u16 = 0x1209;
/// The dongle's USB product id: pid.codes' test id until yazses has its own.
pub const USB_PID: u16 = 0x0001;

/// The protocol version this crate speaks, announced in `Hello`.
pub const PROTOCOL_VERSION: u16 = 2;

/// The bit set in the ids of captures the dongle's button started; a host keeps it clear
/// in the ids it chooses, so the two never collide.
pub const BUTTON_CAPTURE: u32 = 0x8000_0000;

/// The largest payload (postcard bytes plus CRC) a frame may carry, in bytes. An audio
/// frame is the largest message: 1 tag + up to 5 capture id + up to 5 seq + 2 length +
/// 320 sample bytes.
pub const MAX_PAYLOAD: usize = 1 + 5 + 5 + 2 + 2 * FRAME_SAMPLES + CRC_LEN;

/// The largest frame on the wire, both delimiters included.
pub const MAX_FRAME: usize = cobs::max_encoding_length(MAX_PAYLOAD) + 2;

const CRC_LEN: usize = 4;
const CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// One frame of audio: [`FRAME_SAMPLES`] samples (10 ms at 16 kHz), `i16` little-endian,
/// borrowed from the sender's buffer or the reader's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioBytes<'a>(#[serde(borrow)] pub &'a [u8]);

impl<'a> AudioBytes<'a> {
    /// Views `samples` as the bytes of a little-endian frame, writing them into `scratch`.
    pub fn encode(samples: &[i16], scratch: &'a mut [u8; 2 * FRAME_SAMPLES]) -> AudioBytes<'a> {
        let n = samples.len().min(FRAME_SAMPLES);
        for (pair, s) in scratch.chunks_exact_mut(2).zip(&samples[..n]) {
            pair.copy_from_slice(&s.to_le_bytes());
        }
        AudioBytes(&scratch[..2 * n])
    }

    /// The samples, in order.
    pub fn samples(&self) -> impl Iterator<Item = i16> + 'a {
        self.0
            .chunks_exact(2)
            .map(|pair| i16::from_le_bytes([pair[0], pair[1]]))
    }

    /// How many samples the frame holds.
    pub fn len(&self) -> usize {
        self.0.len() / 2
    }

    /// Whether the frame holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the dongle sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeviceMessage<'a> {
    /// Sent when the host opens the port and answers `Hello` from the host: who is talking.
    Hello {
        /// [`PROTOCOL_VERSION`] of the firmware.
        protocol: u16,
        /// The board, e.g. `"rp2040-pico"` or `"nrf52840-sense"`.
        board: &'a str,
        /// The firmware's version.
        fw_version: &'a str,
        /// Samples per second of `Audio` (16,000).
        sample_rate: u32,
    },
    /// One 10 ms frame of a capture; `seq` counts up from 0 at each `Start` or button press.
    Audio {
        /// The capture.
        capture: u32,
        /// Frame number within the capture.
        seq: u32,
        /// The samples.
        #[serde(borrow)]
        samples: AudioBytes<'a>,
    },
    /// The on-chip detector's decision for frame `seq`.
    Vad {
        /// The capture.
        capture: u32,
        /// Frame number the decision is for.
        seq: u32,
        /// Whether the frame is speech (hangover included).
        speech: bool,
    },
    /// Speech started at frame `seq` (after `min_speech`).
    SpeechStart {
        /// The capture.
        capture: u32,
        /// The first frame of the speech run.
        seq: u32,
    },
    /// The capture ended; no `Audio` of it follows.
    EndOfSpeech {
        /// The capture.
        capture: u32,
        /// Why it ended.
        reason: End,
        /// The last frame of speech, when there was speech.
        speech_end_seq: Option<u32>,
    },
    /// The push-to-talk button changed.
    Button {
        /// Pressed now.
        pressed: bool,
        /// Pressed: the capture the press started, or the one already running that it
        /// joined. Released: the capture the release ended, if one was running.
        capture: Option<u32>,
    },
    /// Sent every second while idle, so the host can tell a quiet dongle from a dead one.
    Heartbeat {
        /// Milliseconds since the dongle booted.
        uptime_ms: u32,
    },
}

/// Detector presets the host can pick by name on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum WirePreset {
    /// [`crate::vad::Vad::DEFAULT`].
    Default,
    /// [`crate::vad::Vad::QUIET_ROOM`].
    QuietRoom,
    /// [`crate::vad::Vad::NOISY`].
    Noisy,
}

/// What the host sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HostMessage {
    /// Asks the dongle to announce itself.
    Hello {
        /// The host's [`PROTOCOL_VERSION`].
        protocol: u16,
    },
    /// Starts capture `capture` (ending any capture running, as `Stopped`).
    Start {
        /// Its id, chosen by the host with [`BUTTON_CAPTURE`] clear.
        capture: u32,
    },
    /// Ends capture `capture` now (`EndOfSpeech { reason: Stopped }`), if it is running.
    Stop {
        /// The capture to end; another one running is left alone.
        capture: u32,
    },
    /// Sets the detector and the policy for the next captures.
    Configure {
        /// The detector preset.
        preset: WirePreset,
        /// Trailing silence that ends speech, in ms.
        end_silence_ms: u32,
        /// How long to wait for speech to start, in ms.
        no_speech_ms: u32,
        /// Longest capture, in ms (the firmware caps it at 120 s).
        timeout_ms: u32,
    },
}

/// Why [`encode`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EncodeError {
    /// The message does not fit [`MAX_PAYLOAD`] or the output buffer.
    TooLarge,
}

/// Writes `message` as one frame (delimiters included) into `out`; returns its length.
/// `out` of [`MAX_FRAME`] bytes always suffices for a message within [`MAX_PAYLOAD`].
pub fn encode<T: Serialize>(message: &T, out: &mut [u8]) -> Result<usize, EncodeError> {
    let mut payload = [0u8; MAX_PAYLOAD];
    let body = postcard::to_slice(message, &mut payload[..MAX_PAYLOAD - CRC_LEN])
        .map_err(|_| EncodeError::TooLarge)?
        .len();
    let crc = CRC.checksum(&payload[..body]);
    payload[body..body + CRC_LEN].copy_from_slice(&crc.to_le_bytes());
    let payload = &payload[..body + CRC_LEN];
    if out.len() < cobs::max_encoding_length(payload.len()) + 2 {
        return Err(EncodeError::TooLarge);
    }
    Ok(cobs::encode_including_sentinels(payload, out))
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FrameError {
    /// Longer than [`MAX_FRAME`] before a delimiter came.
    Overflow,
    /// Not valid COBS.
    Cobs,
    /// The CRC did not match (or the frame was shorter than one).
    Crc,
    /// The CRC matched but the bytes are not a message this version knows.
    Message,
}

/// What a [`FrameReader`] has seen so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FrameStats {
    /// Frames decoded.
    pub frames: u32,
    /// Frames dropped, for any [`FrameError`].
    pub dropped: u32,
    /// Bytes skipped before the first delimiter (joining mid-stream).
    pub skipped: u32,
}

/// A streaming frame decoder with a fixed buffer.
///
/// Before the first delimiter it skips bytes (it may have joined mid-frame); after garbage
/// it is back in step at the next delimiter, so the first whole frame after the garbage is
/// always read. Messages borrow from the reader's buffer, so they are taken one at a time:
///
/// ```
/// use yazses_core::wire::{self, DeviceMessage, FrameReader, MAX_FRAME};
///
/// let mut wire_bytes = [0u8; 2 * MAX_FRAME];
/// let a = wire::encode(&DeviceMessage::Button { pressed: true, capture: Some(1) }, &mut wire_bytes).unwrap();
/// let b = wire::encode(&DeviceMessage::Heartbeat { uptime_ms: 7 }, &mut wire_bytes[a..]).unwrap();
///
/// let mut reader = FrameReader::new();
/// let mut rest = &wire_bytes[..a + b];
/// let mut seen = 0;
/// while !rest.is_empty() {
///     let (used, message) = reader.read::<DeviceMessage>(rest);
///     rest = &rest[used..];
///     if let Some(Ok(_message)) = message {
///         seen += 1;
///     }
/// }
/// assert_eq!(seen, 2);
/// assert_eq!(reader.stats().dropped, 0);
/// ```
#[derive(Debug)]
pub struct FrameReader {
    buf: [u8; MAX_FRAME],
    len: usize,
    synced: bool,
    overflowed: bool,
    stats: FrameStats,
}

impl Default for FrameReader {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameReader {
    /// A reader that has not yet seen a delimiter.
    pub const fn new() -> FrameReader {
        FrameReader {
            buf: [0; MAX_FRAME],
            len: 0,
            synced: false,
            overflowed: false,
            stats: FrameStats {
                frames: 0,
                dropped: 0,
                skipped: 0,
            },
        }
    }

    /// Counts so far.
    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    /// Forgets a partial frame and waits for the next delimiter, as after a reconnect.
    pub fn resync(&mut self) {
        self.len = 0;
        self.overflowed = false;
        self.synced = false;
    }

    /// Consumes bytes from `bytes` up to and including the end of the next frame.
    ///
    /// Returns how many bytes it consumed and, when a frame ended, its message or why it
    /// was dropped. Call again with the rest of `bytes` once done with the message.
    pub fn read<'s, T: Deserialize<'s>>(
        &'s mut self,
        bytes: &[u8],
    ) -> (usize, Option<Result<T, FrameError>>) {
        for (i, &byte) in bytes.iter().enumerate() {
            if byte != 0 {
                if !self.synced {
                    self.stats.skipped = self.stats.skipped.saturating_add(1);
                } else if self.len < MAX_FRAME {
                    self.buf[self.len] = byte;
                    self.len += 1;
                } else {
                    self.overflowed = true;
                }
                continue;
            }
            if !self.synced {
                self.synced = true;
                continue;
            }
            let len = core::mem::take(&mut self.len);
            let overflowed = core::mem::take(&mut self.overflowed);
            if len == 0 && !overflowed {
                continue; // the delimiter pair between two frames
            }
            let result = if overflowed {
                Err(FrameError::Overflow)
            } else {
                open_frame(&mut self.buf[..len]).and_then(|body| {
                    postcard::from_bytes::<T>(&self.buf[..body]).map_err(|_| FrameError::Message)
                })
            };
            match result {
                Ok(_) => self.stats.frames = self.stats.frames.saturating_add(1),
                Err(_) => self.stats.dropped = self.stats.dropped.saturating_add(1),
            }
            return (i + 1, Some(result));
        }
        (bytes.len(), None)
    }
}

/// Undoes COBS in place and checks the CRC; returns the length of the postcard bytes.
fn open_frame(frame: &mut [u8]) -> Result<usize, FrameError> {
    let len = cobs::decode_in_place(frame).map_err(|_| FrameError::Cobs)?;
    if len < CRC_LEN + 1 {
        return Err(FrameError::Crc);
    }
    let body = len - CRC_LEN;
    let mut sent = [0u8; CRC_LEN];
    sent.copy_from_slice(&frame[body..len]);
    if CRC.checksum(&frame[..body]) != u32::from_le_bytes(sent) {
        return Err(FrameError::Crc);
    }
    Ok(body)
}

/// Turns audio sequence numbers into a count of lost frames.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SeqTracker {
    next: Option<u32>,
    lost: u32,
}

impl SeqTracker {
    /// A tracker for a new capture.
    pub const fn new() -> SeqTracker {
        SeqTracker {
            next: None,
            lost: 0,
        }
    }

    /// Records frame `seq`; returns how many frames were lost just before it.
    /// A sequence number that goes backwards starts a new count (the dongle restarted).
    pub fn see(&mut self, seq: u32) -> u32 {
        let gap = match self.next {
            Some(next) if seq >= next => seq - next,
            _ => 0,
        };
        self.lost = self.lost.saturating_add(gap);
        self.next = Some(seq.wrapping_add(1));
        gap
    }

    /// Frames lost so far.
    pub fn lost(&self) -> u32 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of<T: Serialize>(message: &T) -> ([u8; MAX_FRAME], usize) {
        let mut out = [0u8; MAX_FRAME];
        let n = encode(message, &mut out).unwrap();
        (out, n)
    }

    /// Reads every frame in `bytes`, giving each message (or error) to `each`.
    fn read_all(
        reader: &mut FrameReader,
        mut bytes: &[u8],
        mut each: impl FnMut(Result<DeviceMessage<'_>, FrameError>),
    ) {
        while !bytes.is_empty() {
            let (used, message) = reader.read::<DeviceMessage>(bytes);
            bytes = &bytes[used..];
            if let Some(message) = message {
                each(message);
            }
        }
    }

    /// The non-borrowing messages these tests use, as plain values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Plain {
        Heartbeat(u32),
        Button(bool),
        Other,
    }

    fn plain(m: Result<DeviceMessage<'_>, FrameError>) -> Result<Plain, FrameError> {
        m.map(|m| match m {
            DeviceMessage::Heartbeat { uptime_ms } => Plain::Heartbeat(uptime_ms),
            DeviceMessage::Button { pressed, .. } => Plain::Button(pressed),
            _ => Plain::Other,
        })
    }

    #[test]
    fn a_full_audio_frame_fits_the_largest_frame_and_survives_the_trip() {
        let samples: [i16; FRAME_SAMPLES] = core::array::from_fn(|i| (i as i16 - 80) * 409);
        let mut scratch = [0u8; 2 * FRAME_SAMPLES];
        let message = DeviceMessage::Audio {
            capture: u32::MAX,
            seq: u32::MAX,
            samples: AudioBytes::encode(&samples, &mut scratch),
        };
        let (wire, n) = frame_of(&message);
        assert!(n <= MAX_FRAME);
        assert_eq!((wire[0], wire[n - 1]), (0, 0));
        assert!(wire[1..n - 1].iter().all(|&b| b != 0));
        let mut reader = FrameReader::new();
        let mut got = 0;
        read_all(&mut reader, &wire[..n], |m| {
            let Ok(DeviceMessage::Audio {
                seq,
                samples: bytes,
                ..
            }) = m
            else {
                panic!("{m:?}")
            };
            assert_eq!(seq, u32::MAX);
            assert!(bytes.samples().eq(samples.iter().copied()));
            got += 1;
        });
        assert_eq!(got, 1);
    }

    #[test]
    fn every_message_kind_round_trips() {
        let mut scratch = [0u8; 2 * FRAME_SAMPLES];
        let messages = [
            DeviceMessage::Hello {
                protocol: PROTOCOL_VERSION,
                board: "rp2040-pico",
                fw_version: "0.1.0",
                sample_rate: 16_000,
            },
            DeviceMessage::Audio {
                capture: 7,
                seq: 3,
                samples: AudioBytes::encode(&[0, -1, i16::MIN, i16::MAX], &mut scratch),
            },
            DeviceMessage::Vad {
                capture: 7,
                seq: 4,
                speech: true,
            },
            DeviceMessage::SpeechStart { capture: 7, seq: 5 },
            DeviceMessage::EndOfSpeech {
                capture: BUTTON_CAPTURE | 1,
                reason: End::Suspended,
                speech_end_seq: Some(9),
            },
            DeviceMessage::Button {
                pressed: false,
                capture: None,
            },
            DeviceMessage::Heartbeat { uptime_ms: 1 },
        ];
        for message in messages {
            let (wire, n) = frame_of(&message);
            let mut reader = FrameReader::new();
            read_all(&mut reader, &wire[..n], |m| assert_eq!(m, Ok(message)));
            assert_eq!(reader.stats().frames, 1);
        }
        let configure = HostMessage::Configure {
            preset: WirePreset::Noisy,
            end_silence_ms: 1200,
            no_speech_ms: 8000,
            timeout_ms: 30_000,
        };
        for message in [
            configure,
            HostMessage::Start { capture: 9 },
            HostMessage::Stop { capture: 9 },
        ] {
            let (wire, n) = frame_of(&message);
            let mut reader = FrameReader::new();
            let (used, m) = reader.read::<HostMessage>(&wire[..n]);
            assert_eq!((used, m), (n, Some(Ok(message))));
        }
    }

    #[test]
    fn a_reader_joining_mid_frame_skips_to_the_next_delimiter_and_counts_no_drop() {
        let (a, na) = frame_of(&DeviceMessage::Button {
            pressed: true,
            capture: Some(3),
        });
        let (b, nb) = frame_of(&DeviceMessage::Heartbeat { uptime_ms: 42 });
        let mut stream = [0u8; 2 * MAX_FRAME];
        stream[..na].copy_from_slice(&a[..na]);
        stream[na..na + nb].copy_from_slice(&b[..nb]);
        // Join after the first frame's leading delimiter and two bytes.
        let mut reader = FrameReader::new();
        let mut seen = [None; 2];
        let mut i = 0;
        read_all(&mut reader, &stream[3..na + nb], |m| {
            seen[i] = Some(plain(m));
            i += 1;
        });
        // The tail of frame a ends in a delimiter: that is where the reader syncs.
        assert_eq!(seen[0], Some(Ok(Plain::Heartbeat(42))));
        assert_eq!(reader.stats().dropped, 0);
        assert_eq!(reader.stats().skipped as usize, na - 4);
    }

    #[test]
    fn a_flipped_bit_is_a_crc_drop_and_the_next_frame_still_arrives() {
        let (mut a, na) = frame_of(&DeviceMessage::Heartbeat {
            uptime_ms: 0x0102_0304,
        });
        let (b, nb) = frame_of(&DeviceMessage::Button {
            pressed: true,
            capture: Some(3),
        });
        a[2] ^= 0x10; // stays non-zero
        assert_ne!(a[2], 0);
        let mut stream = [0u8; 2 * MAX_FRAME];
        stream[..na].copy_from_slice(&a[..na]);
        stream[na..na + nb].copy_from_slice(&b[..nb]);
        let mut reader = FrameReader::new();
        let mut results = [None; 2];
        let mut i = 0;
        read_all(&mut reader, &stream[..na + nb], |m| {
            results[i] = Some(plain(m));
            i += 1;
        });
        assert!(matches!(
            results[0],
            Some(Err(FrameError::Crc | FrameError::Cobs))
        ));
        assert_eq!(results[1], Some(Ok(Plain::Button(true))));
        assert_eq!(reader.stats().dropped, 1);
    }

    #[test]
    fn a_run_of_bytes_longer_than_any_frame_is_one_overflow_drop() {
        let mut reader = FrameReader::new();
        let mut garbage = [0x55u8; 3 * MAX_FRAME];
        garbage[0] = 0;
        *garbage.last_mut().unwrap() = 0;
        let mut errors = 0;
        read_all(&mut reader, &garbage, |m| {
            assert_eq!(m, Err(FrameError::Overflow));
            errors += 1;
        });
        assert_eq!(errors, 1);
    }

    #[test]
    fn a_frame_with_a_good_crc_but_an_unknown_message_is_dropped_as_a_message_error() {
        // A future variant index (99) the current enum does not know.
        let body = [99u8, 1, 2];
        let mut payload = [0u8; 7];
        payload[..3].copy_from_slice(&body);
        payload[3..].copy_from_slice(&CRC.checksum(&body).to_le_bytes());
        let mut wire = [0u8; 16];
        let n = cobs::encode_including_sentinels(&payload, &mut wire);
        let mut reader = FrameReader::new();
        let (_, m) = reader.read::<DeviceMessage>(&wire[..n]);
        assert_eq!(m, Some(Err(FrameError::Message)));
    }

    #[test]
    fn sequence_gaps_count_lost_frames_and_a_restart_counts_none() {
        let mut seq = SeqTracker::new();
        assert_eq!(seq.see(0), 0);
        assert_eq!(seq.see(1), 0);
        assert_eq!(seq.see(4), 2);
        assert_eq!(seq.see(0), 0);
        assert_eq!(seq.see(1), 0);
        assert_eq!(seq.lost(), 2);
    }

    /// The version-1 messages, as a version-1 program decodes them: only `Hello` matters,
    /// the one message both sides must always be able to read.
    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    enum V1Device<'a> {
        Hello {
            protocol: u16,
            board: &'a str,
            fw_version: &'a str,
            sample_rate: u32,
        },
    }

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    enum V1Host {
        Hello { protocol: u16 },
        Start,
        Stop,
    }

    #[test]
    fn each_version_reads_the_others_hello_and_so_can_name_both_versions() {
        // A version-1 host reads this dongle's Hello: it learns the dongle speaks 2.
        let (wire, n) = frame_of(&DeviceMessage::Hello {
            protocol: PROTOCOL_VERSION,
            board: "rp2040-pico",
            fw_version: "0.2.0",
            sample_rate: 16_000,
        });
        let mut reader = FrameReader::new();
        let (_, m) = reader.read::<V1Device>(&wire[..n]);
        assert_eq!(
            m,
            Some(Ok(V1Device::Hello {
                protocol: 2,
                board: "rp2040-pico",
                fw_version: "0.2.0",
                sample_rate: 16_000
            }))
        );
        // This host reads a version-1 dongle's Hello.
        let (wire, n) = frame_of(&V1Device::Hello {
            protocol: 1,
            board: "rp2040-pico",
            fw_version: "0.1.0",
            sample_rate: 16_000,
        });
        let mut reader = FrameReader::new();
        let (_, m) = reader.read::<DeviceMessage>(&wire[..n]);
        assert!(matches!(
            m,
            Some(Ok(DeviceMessage::Hello { protocol: 1, .. }))
        ));
        // Both Hellos from the hosts read the same way.
        let (wire, n) = frame_of(&V1Host::Hello { protocol: 1 });
        let mut reader = FrameReader::new();
        let (_, m) = reader.read::<HostMessage>(&wire[..n]);
        assert_eq!(m, Some(Ok(HostMessage::Hello { protocol: 1 })));
        // A version-1 Start (no capture id) is not mistaken for a version-2 one.
        let (wire, n) = frame_of(&V1Host::Start);
        let mut reader = FrameReader::new();
        let (_, m) = reader.read::<HostMessage>(&wire[..n]);
        assert_eq!(m, Some(Err(FrameError::Message)));
    }
}
