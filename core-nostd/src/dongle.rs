//! The dongle's capture-and-signal logic, sans-IO: the same state machine runs in the
//! firmware (fed by the mic driver, the button and USB) and in the host-side simulator.
//!
//! Idle until a button press or a host `Start`; then every frame goes out as `Audio`,
//! with the on-chip detector's `Vad`, a `SpeechStart` once speech counts as started, and
//! one `EndOfSpeech` when the policy stops, the button is released, the host says `Stop`
//! or starts another capture, or the firmware ends it ([`Dongle::end_capture`]: the host
//! went away or to sleep). Back to idle after that: the firmware turns the microphone off
//! and sleeps. Every message about a capture carries its id: the host's for a capture it
//! started, the dongle's own (with [`BUTTON_CAPTURE`] set) for one its button started.

use crate::autostop::Autostop;
use crate::end::End;
use crate::endpoint::EndpointConfig;
use crate::frame::{FRAME_SAMPLES, Frame};
use crate::time::{Duration, Instant};
use crate::vad::{Vad, VadConfig};
use crate::wire::{
    AudioBytes, BUTTON_CAPTURE, DeviceMessage, HostMessage, PROTOCOL_VERSION, WirePreset,
};

/// Who the dongle is, for `Hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Board name, e.g. `"rp2040-pico"`.
    pub board: &'static str,
    /// Firmware version.
    pub fw_version: &'static str,
}

/// The dongle's state.
#[derive(Debug)]
pub struct Dongle {
    identity: Identity,
    vad: VadConfig,
    endpoint: EndpointConfig,
    capture: Option<Capture>,
    presses: u32,
    scratch: [u8; 2 * FRAME_SAMPLES],
}

#[derive(Debug)]
struct Capture {
    id: u32,
    autostop: Autostop,
    seq: u32,
    speech_reported: bool,
}

impl Dongle {
    /// An idle dongle with the default detector and policy.
    pub fn new(identity: Identity) -> Dongle {
        Dongle {
            identity,
            vad: Vad::DEFAULT,
            endpoint: EndpointConfig::default(),
            capture: None,
            presses: 0,
            scratch: [0; 2 * FRAME_SAMPLES],
        }
    }

    /// Whether a capture is running (the microphone must be on).
    pub fn is_capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// The running capture's id.
    pub fn capture_id(&self) -> Option<u32> {
        self.capture.as_ref().map(|c| c.id)
    }

    /// The `Hello` this dongle sends.
    pub fn hello(&self) -> DeviceMessage<'static> {
        DeviceMessage::Hello {
            protocol: PROTOCOL_VERSION,
            board: self.identity.board,
            fw_version: self.identity.fw_version,
            sample_rate: crate::frame::SAMPLE_RATE_HZ,
        }
    }

    /// A message from the host.
    pub fn on_host(&mut self, message: HostMessage, mut send: impl FnMut(DeviceMessage<'_>)) {
        match message {
            HostMessage::Hello { .. } => send(self.hello()),
            HostMessage::Start { capture } => {
                self.end_capture(End::Stopped, &mut send);
                self.start(capture);
            }
            HostMessage::Stop { capture } => {
                if self.capture_id() == Some(capture) {
                    self.end_capture(End::Stopped, &mut send);
                }
            }
            HostMessage::Configure {
                preset,
                end_silence_ms,
                no_speech_ms,
                timeout_ms,
            } => {
                self.vad = match preset {
                    WirePreset::Default => Vad::DEFAULT,
                    WirePreset::QuietRoom => Vad::QUIET_ROOM,
                    WirePreset::Noisy => Vad::NOISY,
                };
                self.endpoint = EndpointConfig {
                    end_silence: Duration::from_millis(u64::from(end_silence_ms)),
                    no_speech: Duration::from_millis(u64::from(no_speech_ms)),
                    timeout: Some(Duration::from_millis(u64::from(timeout_ms))),
                    ..EndpointConfig::default()
                };
            }
        }
    }

    /// The push-to-talk button changed: a press starts a capture (or joins the one
    /// running), a release ends it.
    pub fn on_button(&mut self, pressed: bool, mut send: impl FnMut(DeviceMessage<'_>)) {
        if pressed && self.capture.is_none() {
            self.presses = self.presses.wrapping_add(1);
            self.start(BUTTON_CAPTURE | (self.presses & !BUTTON_CAPTURE));
        }
        send(DeviceMessage::Button {
            pressed,
            capture: self.capture_id(),
        });
        if !pressed {
            self.end_capture(End::Released, &mut send);
        }
    }

    /// One frame from the microphone; ignored while idle.
    pub fn on_frame(&mut self, frame: &Frame, mut send: impl FnMut(DeviceMessage<'_>)) {
        let Some(capture) = self.capture.as_mut() else {
            return;
        };
        let (id, seq) = (capture.id, capture.seq);
        capture.seq = capture.seq.wrapping_add(1);
        send(DeviceMessage::Audio {
            capture: id,
            seq,
            samples: AudioBytes::encode(frame, &mut self.scratch),
        });
        let report = capture.autostop.push_frame(frame);
        send(DeviceMessage::Vad {
            capture: id,
            seq,
            speech: report.vad.speech,
        });
        if !capture.speech_reported
            && let Some(start) = capture.autostop.endpoint().speech_start()
        {
            capture.speech_reported = true;
            send(DeviceMessage::SpeechStart {
                capture: id,
                seq: (start.total_millis() / 10) as u32,
            });
        }
        if let Some(stop) = report.decision.stop() {
            self.capture = None;
            send(DeviceMessage::EndOfSpeech {
                capture: id,
                reason: stop.reason.into(),
                speech_end_seq: stop
                    .speech_end
                    .map(|end| (end.total_millis() / 10).saturating_sub(1) as u32),
            });
        }
    }

    fn start(&mut self, id: u32) {
        self.capture = Some(Capture {
            id,
            autostop: Autostop::new(self.vad, self.endpoint, Instant::ZERO),
            seq: 0,
            speech_reported: false,
        });
    }

    /// Ends the running capture, if any, for `reason` (sending its `EndOfSpeech`): for the
    /// firmware's own reasons, such as the host closing the port or suspending the bus.
    pub fn end_capture(&mut self, reason: End, mut send: impl FnMut(DeviceMessage<'_>)) {
        if let Some(capture) = self.capture.take() {
            send(DeviceMessage::EndOfSpeech {
                capture: capture.id,
                reason,
                speech_end_seq: capture
                    .autostop
                    .endpoint()
                    .speech_end()
                    .map(|end| (end.total_millis() / 10).saturating_sub(1) as u32),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: Identity = Identity {
        board: "test",
        fw_version: "0",
    };

    /// What a run sent, reduced to the message kinds in order.
    fn kinds(dongle: &mut Dongle, steps: &[Step]) -> ([u8; 64], usize) {
        let mut out = [0u8; 64];
        let mut n = 0;
        let mut record = |m: DeviceMessage<'_>| {
            let k = match m {
                DeviceMessage::Hello { .. } => b'H',
                DeviceMessage::Audio { .. } => b'A',
                DeviceMessage::Vad { .. } => b'v',
                DeviceMessage::SpeechStart { .. } => b'S',
                DeviceMessage::EndOfSpeech { reason, .. } => match reason {
                    End::Released => b'R',
                    End::Stopped => b'T',
                    End::Suspended => b'Z',
                    End::NoSpeech => b'N',
                    _ => b'E',
                },
                DeviceMessage::Button { pressed, .. } => {
                    if pressed {
                        b'P'
                    } else {
                        b'p'
                    }
                }
                DeviceMessage::Heartbeat { .. } => b'h',
            };
            if n < out.len() {
                out[n] = k;
                n += 1;
            }
        };
        for step in steps {
            match *step {
                Step::Host(m) => dongle.on_host(m, &mut record),
                Step::Button(p) => dongle.on_button(p, &mut record),
                Step::Frame(level) => dongle.on_frame(&[level; FRAME_SAMPLES], &mut record),
            }
        }
        (out, n)
    }

    #[derive(Clone, Copy)]
    enum Step {
        Host(HostMessage),
        Button(bool),
        Frame(i16),
    }

    #[test]
    fn idle_frames_send_nothing_and_a_press_release_frames_one_capture() {
        let mut d = Dongle::new(ID);
        let (out, n) = kinds(
            &mut d,
            &[
                Step::Frame(0),
                Step::Button(true),
                Step::Frame(0),
                Step::Frame(0),
                Step::Button(false),
                Step::Frame(0),
            ],
        );
        assert_eq!(&out[..n], b"PAvAvpR");
        assert!(!d.is_capturing());
    }

    #[test]
    fn the_host_can_ask_who_it_is_start_and_stop() {
        let mut d = Dongle::new(ID);
        let (out, n) = kinds(
            &mut d,
            &[
                Step::Host(HostMessage::Hello { protocol: 1 }),
                Step::Host(HostMessage::Start { capture: 5 }),
                Step::Frame(0),
                Step::Host(HostMessage::Stop { capture: 4 }),
                Step::Frame(0),
                Step::Host(HostMessage::Stop { capture: 5 }),
                Step::Host(HostMessage::Stop { capture: 5 }),
            ],
        );
        assert_eq!(&out[..n], b"HAvAvT");
    }

    #[test]
    fn silence_ends_the_capture_on_the_chip_after_no_speech() {
        let mut d = Dongle::new(ID);
        d.on_host(
            HostMessage::Configure {
                preset: WirePreset::Default,
                end_silence_ms: 1200,
                no_speech_ms: 50,
                timeout_ms: 30_000,
            },
            |_| {},
        );
        let steps = [Step::Frame(0); 6];
        let mut all = [Step::Host(HostMessage::Start { capture: 1 }); 7];
        all[1..].copy_from_slice(&steps);
        let (out, n) = kinds(&mut d, &all);
        assert_eq!(&out[..n], b"AvAvAvAvAvN");
        assert!(!d.is_capturing());
    }

    /// Every message a run sent, with the capture it was about.
    fn captures(dongle: &mut Dongle, steps: &[Step]) -> ([(u8, Option<u32>); 32], usize) {
        let mut out = [(0u8, None); 32];
        let mut n = 0;
        for step in steps {
            let mut record = |m: DeviceMessage<'_>| {
                out[n] = match m {
                    DeviceMessage::Audio { capture, .. } => (b'A', Some(capture)),
                    DeviceMessage::Vad { capture, .. } => (b'v', Some(capture)),
                    DeviceMessage::EndOfSpeech { capture, .. } => (b'E', Some(capture)),
                    DeviceMessage::Button { pressed, capture } => {
                        (if pressed { b'P' } else { b'p' }, capture)
                    }
                    _ => (b'?', None),
                };
                n += 1;
            };
            match *step {
                Step::Host(m) => dongle.on_host(m, &mut record),
                Step::Button(p) => dongle.on_button(p, &mut record),
                Step::Frame(level) => dongle.on_frame(&[level; FRAME_SAMPLES], &mut record),
            }
        }
        (out, n)
    }

    #[test]
    fn every_message_names_its_capture_and_a_new_start_ends_the_old_one() {
        let mut d = Dongle::new(ID);
        let b1 = BUTTON_CAPTURE | 1;
        let (out, n) = captures(
            &mut d,
            &[
                Step::Host(HostMessage::Start { capture: 7 }),
                Step::Frame(0),
                // The host gave up on 7 without a Stop, and starts 8.
                Step::Host(HostMessage::Start { capture: 8 }),
                Step::Frame(0),
                // A press during 8 joins it; the release ends it.
                Step::Button(true),
                Step::Button(false),
                // A press while idle starts the button's own capture.
                Step::Button(true),
                Step::Frame(0),
                // A stale Stop for 8 leaves it running.
                Step::Host(HostMessage::Stop { capture: 8 }),
                Step::Button(false),
            ],
        );
        let expected = [
            (b'A', Some(7)),
            (b'v', Some(7)),
            (b'E', Some(7)),
            (b'A', Some(8)),
            (b'v', Some(8)),
            (b'P', Some(8)),
            (b'p', Some(8)),
            (b'E', Some(8)),
            (b'P', Some(b1)),
            (b'A', Some(b1)),
            (b'v', Some(b1)),
            (b'p', Some(b1)),
            (b'E', Some(b1)),
        ];
        assert_eq!(&out[..n], &expected);
    }

    #[test]
    fn the_firmware_can_end_a_capture_for_its_own_reasons() {
        let mut d = Dongle::new(ID);
        d.on_host(HostMessage::Start { capture: 3 }, |_| {});
        let mut ended = None;
        d.end_capture(End::Suspended, |m| {
            if let DeviceMessage::EndOfSpeech {
                capture, reason, ..
            } = m
            {
                ended = Some((capture, reason));
            }
        });
        assert_eq!(ended, Some((3, End::Suspended)));
        assert!(!d.is_capturing());
        d.end_capture(End::Suspended, |_| panic!("nothing to end"));
    }
}
