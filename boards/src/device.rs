//! The whole dongle as one pure state machine, the same on both boards: the USB bus's
//! power state, the host's port, the button, the host's commands and the microphone's
//! frames go in; whether the microphone runs, what the LED shows, whether heartbeats are
//! due, and the wire messages come out.
//!
//! Suspend (the host put the bus to sleep): any capture ends (`EndOfSpeech` with
//! `Suspended`, read by the host after it wakes), the microphone stops, the LED goes dark,
//! heartbeats stop and the button is ignored, so nothing but the bus's resume (or a reset)
//! wakes the chip. Resume: back to idle, exactly as before the suspend; the host sees the
//! same device without a replug. The host closing its port ends a capture the same way
//! (`Stopped`); without a host the button starts nothing (nobody would hear it).

use yazses_core::dongle::{Dongle, Identity};
use yazses_core::end::End;
use yazses_core::frame::Frame;
use yazses_core::wire::{DeviceMessage, HostMessage};

use crate::ptt::Status;

/// Something that happened to the dongle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// The host suspended the USB bus.
    Suspend,
    /// The host resumed it.
    Resume,
    /// The host opened (`true`) or closed (`false`) the serial port.
    Host(bool),
    /// The button went down (`true`) or up.
    Button(bool),
    /// A message from the host.
    Command(HostMessage),
    /// A frame from the microphone.
    Frame(&'a Frame),
}

/// What the hardware should be doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outputs {
    /// The microphone (and its DMA) runs.
    pub mic: bool,
    /// What the LED shows; `None` while suspended: dark, and nothing to animate.
    pub led: Option<Status>,
    /// A heartbeat is due every second.
    pub heartbeat: bool,
}

/// The dongle.
#[derive(Debug)]
pub struct Device {
    dongle: Dongle,
    host: bool,
    suspended: bool,
    speech: bool,
}

impl Device {
    /// Powered up: no host yet, bus awake, idle.
    pub fn new(identity: Identity) -> Device {
        Device {
            dongle: Dongle::new(identity),
            host: false,
            suspended: false,
            speech: false,
        }
    }

    /// Handles `event`, sending what it causes through `send`; returns the outputs after it.
    pub fn on(&mut self, event: Event<'_>, mut send: impl FnMut(DeviceMessage<'_>)) -> Outputs {
        let speech = &mut self.speech;
        let mut send = |m: DeviceMessage<'_>| {
            match m {
                DeviceMessage::SpeechStart { .. } => *speech = true,
                DeviceMessage::EndOfSpeech { .. } => *speech = false,
                _ => {}
            }
            send(m);
        };
        match event {
            Event::Suspend => {
                self.suspended = true;
                self.dongle.end_capture(End::Suspended, &mut send);
            }
            Event::Resume => self.suspended = false,
            Event::Host(open) => {
                self.host = open;
                if !open {
                    self.dongle.end_capture(End::Stopped, &mut send);
                }
            }
            Event::Button(pressed) => {
                if !self.suspended && self.host {
                    self.dongle.on_button(pressed, &mut send);
                }
            }
            Event::Command(message) => {
                let start = matches!(message, HostMessage::Start { .. });
                if !(self.suspended && start) {
                    self.dongle.on_host(message, &mut send);
                }
            }
            Event::Frame(frame) => {
                if !self.suspended {
                    self.dongle.on_frame(frame, &mut send);
                }
            }
        }
        self.outputs()
    }

    /// The outputs now.
    pub fn outputs(&self) -> Outputs {
        let capturing = self.dongle.is_capturing();
        let led = if self.suspended {
            None
        } else if !self.host {
            Some(Status::NoHost)
        } else if !capturing {
            Some(Status::Idle)
        } else if self.speech {
            Some(Status::Speech)
        } else {
            Some(Status::Listening)
        };
        Outputs {
            mic: capturing && !self.suspended,
            led,
            heartbeat: self.host && !self.suspended && !capturing,
        }
    }

    /// The running capture's id.
    pub fn capture_id(&self) -> Option<u32> {
        self.dongle.capture_id()
    }

    /// The `Hello` this dongle sends.
    pub fn hello(&self) -> DeviceMessage<'static> {
        self.dongle.hello()
    }
}
