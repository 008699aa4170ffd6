//! The dongle's behaviour as timelines: what the microphone, the LED and the wire do as
//! the bus sleeps and wakes, the host comes and goes, and captures start and end.

use yazses_boards::device::{Device, Event, Outputs};
use yazses_boards::ptt::Status;
use yazses_core::dongle::Identity;
use yazses_core::end::End;
use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::wire::{BUTTON_CAPTURE, DeviceMessage, HostMessage};

const SILENCE: Frame = [0; FRAME_SAMPLES];

/// A device and everything it sent, as short strings.
struct Dongle {
    device: Device,
    sent: Vec<String>,
}

impl Dongle {
    fn new() -> Dongle {
        Dongle {
            device: Device::new(Identity {
                board: "test",
                fw_version: "0",
            }),
            sent: Vec::new(),
        }
    }

    fn on(&mut self, event: Event<'_>) -> Outputs {
        let sent = &mut self.sent;
        self.device.on(event, |m| {
            sent.push(match m {
                DeviceMessage::Audio { capture, seq, .. } => format!("audio {capture:x}/{seq}"),
                DeviceMessage::Vad { .. } => return,
                DeviceMessage::EndOfSpeech {
                    capture, reason, ..
                } => format!("end {capture:x} {reason:?}"),
                DeviceMessage::Button { pressed, capture } => {
                    format!("button {pressed} {capture:x?}")
                }
                other => format!("{other:?}"),
            })
        })
    }

    fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.sent)
    }
}

const fn out(mic: bool, led: Option<Status>, heartbeat: bool) -> Outputs {
    Outputs {
        mic,
        led,
        heartbeat,
    }
}

#[test]
fn a_suspend_mid_capture_ends_it_stops_the_mic_and_darkens_everything_until_resume() {
    let mut d = Dongle::new();
    assert_eq!(
        d.on(Event::Host(true)),
        out(false, Some(Status::Idle), true)
    );
    assert_eq!(
        d.on(Event::Command(HostMessage::Start { capture: 7 })),
        out(true, Some(Status::Listening), false)
    );
    d.on(Event::Frame(&SILENCE));
    // t = 10 ms: the host's laptop goes to sleep.
    assert_eq!(d.on(Event::Suspend), out(false, None, false));
    assert_eq!(d.take(), ["audio 7/0", "end 7 Suspended"]);
    // Asleep: frames still in the DMA buffer, the button, even a stray Start do nothing.
    d.on(Event::Frame(&SILENCE));
    d.on(Event::Button(true));
    d.on(Event::Button(false));
    assert_eq!(
        d.on(Event::Command(HostMessage::Start { capture: 8 })),
        out(false, None, false)
    );
    assert!(d.take().is_empty());
    // Resume: idle, as before, with the host still there; the next capture works.
    assert_eq!(d.on(Event::Resume), out(false, Some(Status::Idle), true));
    assert_eq!(
        d.on(Event::Command(HostMessage::Start { capture: 9 })),
        out(true, Some(Status::Listening), false)
    );
    d.on(Event::Frame(&SILENCE));
    assert_eq!(d.take(), ["audio 9/0"]);
}

#[test]
fn a_suspend_while_idle_only_sleeps() {
    let mut d = Dongle::new();
    d.on(Event::Host(true));
    assert_eq!(d.on(Event::Suspend), out(false, None, false));
    assert_eq!(d.on(Event::Resume), out(false, Some(Status::Idle), true));
    assert!(d.take().is_empty());
}

#[test]
fn the_host_closing_its_port_ends_the_capture_and_the_button_then_starts_nothing() {
    let mut d = Dongle::new();
    d.on(Event::Host(true));
    assert_eq!(
        d.on(Event::Button(true)),
        out(true, Some(Status::Listening), false)
    );
    assert_eq!(
        d.on(Event::Host(false)),
        out(false, Some(Status::NoHost), false)
    );
    let b1 = BUTTON_CAPTURE | 1;
    assert_eq!(
        d.take(),
        [
            format!("button true Some({b1:x})"),
            format!("end {b1:x} Stopped")
        ]
    );
    assert_eq!(
        d.on(Event::Button(true)),
        out(false, Some(Status::NoHost), false)
    );
    assert!(d.take().is_empty());
}

#[test]
fn the_led_follows_the_capture_through_speech_to_its_end() {
    let mut d = Dongle::new();
    assert_eq!(d.device.outputs(), out(false, Some(Status::NoHost), false));
    d.on(Event::Host(true));
    d.on(Event::Command(HostMessage::Configure {
        preset: yazses_core::wire::WirePreset::Default,
        end_silence_ms: 200,
        no_speech_ms: 8000,
        timeout_ms: 30_000,
    }));
    d.on(Event::Command(HostMessage::Start { capture: 3 }));
    // A quiet room for 1 s, a syllable-like 440 Hz tone for 1 s, then the room again.
    let mut seed = 1u32;
    let mut statuses = Vec::new();
    for n in 0..400 {
        let frame: Frame = core::array::from_fn(|i| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let room = (seed >> 16) as i32 % 100;
            let t = (n * FRAME_SAMPLES + i) as f32 / 16_000.0;
            let env = 0.6 + 0.4 * (std::f32::consts::TAU * 4.0 * t).sin();
            let tone = 4000.0 * env * (std::f32::consts::TAU * 440.0 * t).sin();
            let voiced = (100..200).contains(&n);
            (room + if voiced { tone as i32 } else { 0 }) as i16
        });
        let o = d.on(Event::Frame(&frame));
        if statuses.last() != Some(&o.led) {
            statuses.push(o.led);
        }
        if !o.mic {
            break;
        }
    }
    assert_eq!(
        statuses,
        [
            Some(Status::Listening),
            Some(Status::Speech),
            Some(Status::Idle)
        ]
    );
    assert!(
        d.take()
            .last()
            .unwrap()
            .ends_with(&format!("{:?}", End::EndOfSpeech))
    );
}
