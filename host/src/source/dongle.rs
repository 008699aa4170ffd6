//! The USB serial dongle as a capture source (`[audio] source = "serial"`).
//!
//! The dongle runs yazses-core's detector and policy on its chip and speaks the wire
//! protocol of [`yazses_core::wire`] over CDC-ACM. [`SerialSource`] opens the port, asks
//! who is there (`Hello`), configures the policy, starts a capture and turns the frames it
//! reads back into the capture layer's frames. The dongle's own `EndOfSpeech` ends the
//! capture; corrupt frames are dropped and counted, lost audio (a gap in the sequence
//! numbers) is filled with silence and counted. An unplugged dongle, a closed port or a
//! dongle that stops talking ends the capture with an error that says so; the port is
//! closed when the source is dropped, so the next capture opens it again and a replugged
//! dongle is picked up without a restart.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration as StdDuration, Instant as StdInstant};

use yazses_core::endpoint::{EndpointConfig, StopReason};
use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::wire::{
    self, DeviceMessage, EndReason, FrameReader, HostMessage, MAX_FRAME, PROTOCOL_VERSION,
    SeqTracker, WirePreset,
};

use super::{FrameSource, LinkStats, SourceError};

/// The dongle's USB vendor id (pid.codes, the open-source hardware vendor id).
pub const USB_VID: u16 = wire::USB_VID;
/// The dongle's USB product id.
pub const USB_PID: u16 = wire::USB_PID;

/// How long a dongle may stay silent during a capture before it is declared gone. It
/// sends a frame every 10 ms while capturing, and a heartbeat every second while idle.
const SILENCE_LIMIT: StdDuration = StdDuration::from_secs(2);
/// How long to wait for the answer to `Hello`.
const HELLO_WAIT: StdDuration = StdDuration::from_secs(2);

/// What a dongle says about itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DongleInfo {
    /// The port it is on.
    pub port: String,
    /// Its protocol version.
    pub protocol: u16,
    /// Its board.
    pub board: String,
    /// Its firmware version.
    pub fw_version: String,
    /// Its sample rate.
    pub sample_rate: u32,
}

/// Ports whose USB id is the dongle's.
pub fn find_ports() -> Vec<String> {
    // serialport scans /sys/class/tty without libudev, and panics where it is missing.
    if !std::path::Path::new("/sys/class/tty").exists() && cfg!(target_os = "linux") {
        return Vec::new();
    }
    let Ok(ports) = serialport::available_ports() else {
        return Vec::new();
    };
    ports
        .into_iter()
        .filter(|p| {
            matches!(&p.port_type, serialport::SerialPortType::UsbPort(usb)
                if usb.vid == USB_VID && usb.pid == USB_PID)
        })
        .map(|p| p.port_name)
        .collect()
}

/// An owned copy of what the dongle sent. Audio dominates the stream, so it is stored
/// inline rather than boxed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
enum Event {
    Hello(DongleInfo),
    Audio { seq: u32, frame: Frame },
    End(EndReason),
    Button(bool),
    Other,
}

/// The open port and the protocol on it.
struct Link {
    port: Box<dyn serialport::SerialPort>,
    name: String,
    reader: FrameReader,
    pending: Vec<u8>,
    last_heard: StdInstant,
}

impl Link {
    fn open(name: &str) -> Result<Link, SourceError> {
        let port = serialport::new(name, 115_200)
            .timeout(StdDuration::from_millis(50))
            .open()
            .map_err(|e| {
                let msg = format!(
                    "cannot open the dongle's port {name}: {e}; is it plugged in? \
                     (`yazses devices` lists dongles)"
                );
                match e.kind() {
                    serialport::ErrorKind::NoDevice => SourceError::Missing(msg),
                    serialport::ErrorKind::Io(ErrorKind::NotFound) => SourceError::Missing(msg),
                    _ => SourceError::Busy(msg),
                }
            })?;
        Ok(Link {
            port,
            name: name.to_owned(),
            reader: FrameReader::new(),
            pending: Vec::new(),
            last_heard: StdInstant::now(),
        })
    }

    fn send(&mut self, message: &HostMessage) -> Result<(), SourceError> {
        let mut frame = [0u8; MAX_FRAME];
        let n = wire::encode(message, &mut frame).expect("host messages are small");
        self.port
            .write_all(&frame[..n])
            .map_err(|e| self.gone(&e.to_string()))
    }

    fn gone(&self, why: &str) -> SourceError {
        SourceError::Gone(format!(
            "the dongle on {} went away ({why}); plug it back in and try again",
            self.name
        ))
    }

    /// The next event, waiting at most until `deadline`; `Ok(None)` at the deadline.
    fn next_event(&mut self, deadline: StdInstant) -> Result<Option<Event>, SourceError> {
        loop {
            if !self.pending.is_empty() {
                let (used, message) = self.reader.read::<DeviceMessage>(&self.pending);
                let event = message.and_then(|m| m.ok()).map(|m| own(m, &self.name));
                self.pending.drain(..used);
                if let Some(event) = event {
                    return Ok(Some(event));
                }
                continue;
            }
            if StdInstant::now() >= deadline {
                return Ok(None);
            }
            let mut buf = [0u8; 1024];
            match self.port.read(&mut buf) {
                Ok(0) => return Err(self.gone("the port closed")),
                Ok(n) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    self.last_heard = StdInstant::now();
                }
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.gone(&e.to_string())),
            }
        }
    }

    /// Opens `port` (or the first dongle found by USB id when empty), checks the dongle and
    /// sends it the policy.
    fn configured(
        port: &str,
        endpoint: &EndpointConfig,
    ) -> Result<(Link, DongleInfo), SourceError> {
        let name = if port.is_empty() {
            find_ports().into_iter().next().ok_or_else(|| {
                SourceError::Missing(format!(
                    "no yazses dongle found (USB {USB_VID:04x}:{USB_PID:04x}); plug one in \
                     or set [audio] serial_port"
                ))
            })?
        } else {
            port.to_owned()
        };
        let mut link = Link::open(&name)?;
        let info = link.hello()?;
        link.send(&configure(endpoint))?;
        Ok((link, info))
    }

    /// Asks who is there and checks it speaks our protocol.
    fn hello(&mut self) -> Result<DongleInfo, SourceError> {
        self.send(&HostMessage::Hello {
            protocol: PROTOCOL_VERSION,
        })?;
        let deadline = StdInstant::now() + HELLO_WAIT;
        while let Some(event) = self.next_event(deadline)? {
            if let Event::Hello(info) = event {
                if info.protocol != PROTOCOL_VERSION {
                    return Err(SourceError::Protocol(format!(
                        "the dongle on {} speaks protocol {}, this yazses speaks {PROTOCOL_VERSION}; \
                         update the firmware or yazses",
                        self.name, info.protocol
                    )));
                }
                return Ok(info);
            }
        }
        Err(SourceError::Protocol(format!(
            "{} did not answer Hello within {} s; is it a yazses dongle?",
            self.name,
            HELLO_WAIT.as_secs()
        )))
    }
}

fn own(message: DeviceMessage<'_>, port: &str) -> Event {
    match message {
        DeviceMessage::Hello {
            protocol,
            board,
            fw_version,
            sample_rate,
        } => Event::Hello(DongleInfo {
            port: port.to_owned(),
            protocol,
            board: board.to_owned(),
            fw_version: fw_version.to_owned(),
            sample_rate,
        }),
        DeviceMessage::Audio { seq, samples } => {
            let mut frame = [0i16; FRAME_SAMPLES];
            for (dst, s) in frame.iter_mut().zip(samples.samples()) {
                *dst = s;
            }
            Event::Audio { seq, frame }
        }
        DeviceMessage::EndOfSpeech { reason, .. } => Event::End(reason),
        DeviceMessage::Button { pressed } => Event::Button(pressed),
        _ => Event::Other,
    }
}

/// Asks the dongle on `port` who it is.
pub fn probe(port: &str) -> Result<DongleInfo, SourceError> {
    Link::open(port)?.hello()
}

/// A capture from the dongle.
pub struct SerialSource {
    link: Link,
    info: DongleInfo,
    queue: VecDeque<Frame>,
    seq: SeqTracker,
    ended: Option<EndReason>,
}

impl std::fmt::Debug for SerialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerialSource")
            .field("info", &self.info)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl SerialSource {
    /// Opens `port` (or the first dongle found by USB id when `port` is empty), checks the
    /// dongle, sends it the policy and starts a capture.
    pub fn open(port: &str, endpoint: &EndpointConfig) -> Result<SerialSource, SourceError> {
        let (mut link, info) = Link::configured(port, endpoint)?;
        link.send(&HostMessage::Start)?;
        tracing::info!(port = %link.name, board = %info.board, fw = %info.fw_version, "dongle capture started");
        Ok(SerialSource::started(link, info))
    }

    /// A source over a capture the dongle has already started.
    fn started(link: Link, info: DongleInfo) -> SerialSource {
        SerialSource {
            link,
            info,
            queue: VecDeque::new(),
            seq: SeqTracker::new(),
            ended: None,
        }
    }

    /// Who the dongle is.
    pub fn info(&self) -> &DongleInfo {
        &self.info
    }
}

impl FrameSource for SerialSource {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        loop {
            if let Some(frame) = self.queue.pop_front() {
                return Ok(Some(frame));
            }
            if self.ended.is_some() {
                return Ok(None);
            }
            let deadline = StdInstant::now() + SILENCE_LIMIT;
            match self.link.next_event(deadline)? {
                Some(Event::Audio { seq, frame }) => {
                    let lost = self.seq.see(seq);
                    // Keep the timeline: lost frames become silence.
                    for _ in 0..lost.min(100) {
                        self.queue.push_back([0; FRAME_SAMPLES]);
                    }
                    self.queue.push_back(frame);
                }
                Some(Event::End(reason)) => self.ended = Some(reason),
                Some(_) => {}
                None if self.link.last_heard.elapsed() >= SILENCE_LIMIT => {
                    return Err(SourceError::Gone(format!(
                        "the dongle on {} sent nothing for {} s mid-capture; is it still \
                         plugged in?",
                        self.link.name,
                        SILENCE_LIMIT.as_secs()
                    )));
                }
                None => {
                    return Err(SourceError::Protocol(format!(
                        "the dongle on {} sent no valid frame for {} s mid-capture ({} corrupt \
                         frames dropped); is it a yazses dongle with matching firmware?",
                        self.link.name,
                        SILENCE_LIMIT.as_secs(),
                        self.link.reader.stats().dropped
                    )));
                }
            }
        }
    }

    fn decides_end(&self) -> bool {
        true
    }

    fn decided_end(&mut self) -> Option<StopReason> {
        self.ended.map(|reason| match reason {
            EndReason::EndOfSpeech | EndReason::Released => StopReason::EndOfSpeech,
            EndReason::NoSpeech => StopReason::NoSpeech,
            EndReason::Timeout | EndReason::Stopped => StopReason::Timeout,
            EndReason::Cap => StopReason::Cap,
        })
    }

    fn link_stats(&self) -> LinkStats {
        LinkStats {
            corrupt_frames: self.link.reader.stats().dropped,
            lost_frames: self.seq.lost(),
        }
    }
}

/// A dongle held open between captures, waiting for its push-to-talk button (the
/// dictation's `dongle` trigger). A press starts a capture on the dongle itself, whose
/// audio follows the press on the wire, so nothing said after the press is lost while the
/// host gets ready.
pub struct ButtonWatch {
    link: Link,
    info: DongleInfo,
}

impl std::fmt::Debug for ButtonWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ButtonWatch")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl ButtonWatch {
    /// Opens `port` (empty: the first dongle found) and sends it `endpoint`, the policy
    /// for captures the button starts.
    pub fn open(port: &str, endpoint: &EndpointConfig) -> Result<ButtonWatch, SourceError> {
        let (link, info) = Link::configured(port, endpoint)?;
        tracing::info!(port = %link.name, board = %info.board, "waiting for the dongle's button");
        Ok(ButtonWatch { link, info })
    }

    /// Who the dongle is.
    pub fn info(&self) -> &DongleInfo {
        &self.info
    }

    /// Waits until `deadline` for a press: `Ok(true)` when the button went down. A dongle
    /// that goes quiet is not an error here (it sends a heartbeat a second when idle);
    /// a closed port is.
    pub fn wait_press(&mut self, deadline: StdInstant) -> Result<bool, SourceError> {
        while let Some(event) = self.link.next_event(deadline)? {
            if let Event::Button(true) = event {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// After a press: a hold when the button stays down for `tap` (the capture the press
    /// started goes on, and its first frames are kept), a tap when it comes up sooner.
    /// After a tap the dongle is sent `tap_endpoint` and a new capture is started, which
    /// its own end of speech ends.
    pub fn hold_or_tap(
        mut self,
        tap: StdDuration,
        tap_endpoint: &EndpointConfig,
    ) -> Result<(Press, SerialSource), SourceError> {
        let deadline = StdInstant::now() + tap;
        let mut early = VecDeque::new();
        let mut seq = SeqTracker::new();
        while let Some(event) = self.link.next_event(deadline)? {
            match event {
                Event::Audio { seq: n, frame } => {
                    for _ in 0..seq.see(n).min(100) {
                        early.push_back([0; FRAME_SAMPLES]);
                    }
                    early.push_back(frame);
                }
                Event::Button(false) => {
                    // The release ends the press's capture; its end comes next, and must
                    // not be read as the end of the tap's capture.
                    let end_by = StdInstant::now() + SILENCE_LIMIT;
                    while let Some(event) = self.link.next_event(end_by)? {
                        if let Event::End(_) = event {
                            break;
                        }
                    }
                    let (mut link, info) = (self.link, self.info);
                    link.send(&configure(tap_endpoint))?;
                    link.send(&HostMessage::Start)?;
                    return Ok((Press::Tap, SerialSource::started(link, info)));
                }
                _ => {}
            }
        }
        let mut source = SerialSource::started(self.link, self.info);
        source.queue = early;
        source.seq = seq;
        Ok((Press::Hold, source))
    }
}

/// How the button was pressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Press {
    /// Held past the tap time: the release ends the capture.
    Hold,
    /// Let go at once: the dongle's end of speech ends the capture.
    Tap,
}

fn configure(endpoint: &EndpointConfig) -> HostMessage {
    let ms = |d: yazses_core::time::Duration| d.total_millis().min(u64::from(u32::MAX)) as u32;
    HostMessage::Configure {
        preset: WirePreset::Default,
        end_silence_ms: ms(endpoint.end_silence),
        no_speech_ms: ms(endpoint.no_speech),
        timeout_ms: ms(endpoint.timeout.unwrap_or(yazses_core::endpoint::HARD_CAP)),
    }
}

impl Drop for SerialSource {
    fn drop(&mut self) {
        if self.ended.is_none() {
            // Best effort: the dongle may already be gone.
            let _ = self.link.send(&HostMessage::Stop);
        }
    }
}
