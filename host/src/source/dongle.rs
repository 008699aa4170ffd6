//! The USB serial dongle as a capture source (`[audio] source = "serial"`).
//!
//! The dongle runs yazses-core's detector and policy on its chip and speaks the wire
//! protocol of [`yazses_core::wire`] over CDC-ACM. [`SerialSource`] opens the port, asks
//! who is there (`Hello`), configures the policy, starts a capture under an id of its own
//! choosing and turns the frames it reads back into the capture layer's frames. The
//! dongle's own `EndOfSpeech` ends the capture; corrupt frames are dropped and counted,
//! lost audio (a gap in the sequence numbers) is filled with silence and counted, and
//! anything about another capture (a cancelled one's audio still in flight) is dropped
//! and counted. An unplugged dongle, a closed port or a
//! dongle that stops talking ends the capture with an error that says so; the port is
//! closed when the source is dropped, so the next capture opens it again and a replugged
//! dongle is picked up without a restart.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration as StdDuration, Instant as StdInstant};

use yazses_core::end::End;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::frame::{FRAME_SAMPLES, Frame};
use yazses_core::wire::{
    self, BUTTON_CAPTURE, DeviceMessage, FrameReader, HostMessage, MAX_FRAME, PROTOCOL_VERSION,
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
    Audio {
        capture: u32,
        seq: u32,
        frame: Frame,
    },
    End {
        capture: u32,
        reason: End,
    },
    Button {
        pressed: bool,
        capture: Option<u32>,
    },
    Other,
}

/// A new capture id: never one the dongle's button uses, and different from the last
/// ones any yazses process chose (a per-process counter from a random start), so a
/// capture's frames are never taken for another's.
fn new_capture_id() -> u32 {
    static START: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let start = *START.get_or_init(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        now.subsec_nanos()
            ^ (now.as_secs() as u32).rotate_left(16)
            ^ std::process::id().wrapping_mul(0x9E37_79B9)
    });
    let id = start.wrapping_add(COUNT.fetch_add(1, Ordering::Relaxed));
    id & !BUTTON_CAPTURE
}

/// The open port and the protocol on it.
struct Link {
    port: Box<dyn serialport::SerialPort>,
    name: String,
    reader: FrameReader,
    pending: Vec<u8>,
    last_heard: StdInstant,
}

/// How long an open waits for a port another yazses process is letting go: a dictation
/// between presses closes its port within 200 ms of another process asking for the
/// microphone.
const BUSY_GRACE: StdDuration = StdDuration::from_millis(1500);

impl Link {
    fn open(name: &str) -> Result<Link, SourceError> {
        let deadline = StdInstant::now() + BUSY_GRACE;
        loop {
            match Link::open_once(name) {
                Err(SourceError::Busy(_)) if StdInstant::now() < deadline => {
                    std::thread::sleep(StdDuration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    fn open_once(name: &str) -> Result<Link, SourceError> {
        let port = serialport::new(name, 115_200)
            .timeout(StdDuration::from_millis(50))
            .open()
            .map_err(|e| {
                // serialport reports a port another process has locked as NoDevice.
                if e.description.contains("lock") {
                    return SourceError::Busy(format!(
                        "the dongle's port {name} is held by another program ({e})"
                    ));
                }
                // Windows' system messages end in a full stop; the sentence goes on here.
                let why = e.description.trim_end().trim_end_matches('.');
                let msg = format!(
                    "cannot open the dongle's port {name}: {why}; is it plugged in? \
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
                    let update = if info.protocol < PROTOCOL_VERSION {
                        "flash the dongle with this yazses' firmware (docs/firmware.md)"
                    } else {
                        "update yazses to the dongle's version"
                    };
                    return Err(SourceError::Protocol(format!(
                        "the dongle on {} ({} firmware {}) speaks wire protocol version {}, \
                         this yazses speaks version {PROTOCOL_VERSION}; {update}",
                        self.name, info.board, info.fw_version, info.protocol
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
        DeviceMessage::Audio {
            capture,
            seq,
            samples,
        } => {
            let mut frame = [0i16; FRAME_SAMPLES];
            for (dst, s) in frame.iter_mut().zip(samples.samples()) {
                *dst = s;
            }
            Event::Audio {
                capture,
                seq,
                frame,
            }
        }
        DeviceMessage::EndOfSpeech {
            capture, reason, ..
        } => Event::End { capture, reason },
        DeviceMessage::Button { pressed, capture } => Event::Button { pressed, capture },
        _ => Event::Other,
    }
}

/// Asks the dongle on `port` who it is.
pub fn probe(port: &str) -> Result<DongleInfo, SourceError> {
    Link::open(port)?.hello()
}

/// What has arrived of one capture: its frames in order (lost ones as silence, to keep
/// the timeline), its end, and how many frames of other captures were dropped.
#[derive(Debug, Default)]
struct Arrived {
    capture: u32,
    queue: VecDeque<Frame>,
    seq: SeqTracker,
    stale: u32,
    ended: Option<End>,
}

impl Arrived {
    fn of(capture: u32) -> Arrived {
        Arrived {
            capture,
            ..Arrived::default()
        }
    }

    /// Takes the audio and the end of this capture, counts and drops other captures'
    /// audio; gives back every other event.
    fn take(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Audio { capture, .. } if capture != self.capture => {
                self.stale = self.stale.saturating_add(1);
            }
            Event::Audio { seq, frame, .. } => {
                for _ in 0..self.seq.see(seq).min(100) {
                    self.queue.push_back([0; FRAME_SAMPLES]);
                }
                self.queue.push_back(frame);
            }
            Event::End { capture, reason } if capture == self.capture => {
                self.ended = Some(reason);
            }
            other => return Some(other),
        }
        None
    }
}

/// A capture from the dongle.
pub struct SerialSource {
    link: Link,
    info: DongleInfo,
    arrived: Arrived,
}

impl std::fmt::Debug for SerialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerialSource")
            .field("info", &self.info)
            .field("capture", &self.arrived.capture)
            .field("ended", &self.arrived.ended)
            .finish_non_exhaustive()
    }
}

impl SerialSource {
    /// Opens `port` (or the first dongle found by USB id when `port` is empty), checks the
    /// dongle, sends it the policy and starts a capture.
    pub fn open(port: &str, endpoint: &EndpointConfig) -> Result<SerialSource, SourceError> {
        let (link, info) = Link::configured(port, endpoint)?;
        let source = SerialSource::start(link, info)?;
        tracing::info!(port = %source.link.name, board = %source.info.board, fw = %source.info.fw_version, capture = source.arrived.capture, "dongle capture started");
        Ok(source)
    }

    /// Starts a new capture on the dongle.
    fn start(mut link: Link, info: DongleInfo) -> Result<SerialSource, SourceError> {
        let capture = new_capture_id();
        link.send(&HostMessage::Start { capture })?;
        Ok(SerialSource {
            link,
            info,
            arrived: Arrived::of(capture),
        })
    }

    /// Who the dongle is.
    pub fn info(&self) -> &DongleInfo {
        &self.info
    }
}

impl FrameSource for SerialSource {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        loop {
            if let Some(frame) = self.arrived.queue.pop_front() {
                return Ok(Some(frame));
            }
            if self.arrived.ended == Some(End::Suspended) {
                // What was said before the computer slept is half an answer at best.
                return Err(SourceError::Gone(format!(
                    "the capture on the dongle on {} was cut short: the computer suspended \
                     the USB bus (it went to sleep); ask again",
                    self.link.name
                )));
            }
            if self.arrived.ended.is_some() {
                return Ok(None);
            }
            let deadline = StdInstant::now() + SILENCE_LIMIT;
            match self.link.next_event(deadline)? {
                Some(event) => {
                    self.arrived.take(event);
                }
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

    fn decided_end(&mut self) -> Option<End> {
        self.arrived.ended
    }

    fn link_stats(&self) -> LinkStats {
        LinkStats {
            corrupt_frames: self.link.reader.stats().dropped,
            lost_frames: self.arrived.seq.lost(),
            stale_frames: self.arrived.stale,
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

    /// Waits until `deadline` for a press that starts a capture: `Ok(Some(id))`, that
    /// capture's id, when the button went down. A dongle that goes quiet is not an error
    /// here (it sends a heartbeat a second when idle); a closed port is.
    pub fn wait_press(&mut self, deadline: StdInstant) -> Result<Option<u32>, SourceError> {
        while let Some(event) = self.link.next_event(deadline)? {
            if let Event::Button {
                pressed: true,
                capture: Some(capture),
            } = event
            {
                return Ok(Some(capture));
            }
        }
        Ok(None)
    }

    /// After a press that started capture `capture`: a hold when the button stays down
    /// for `tap` (that capture goes on, and its first frames are kept), a tap when it
    /// comes up sooner. After a tap the dongle is sent `tap_endpoint` and a new capture is
    /// started, which its own end of speech ends; what is left of the press's capture on
    /// the wire is dropped by its id.
    pub fn hold_or_tap(
        mut self,
        capture: u32,
        tap: StdDuration,
        tap_endpoint: &EndpointConfig,
    ) -> Result<(Press, SerialSource), SourceError> {
        let deadline = StdInstant::now() + tap;
        let mut arrived = Arrived::of(capture);
        while let Some(event) = self.link.next_event(deadline)? {
            if let Some(Event::Button { pressed: false, .. }) = arrived.take(event) {
                // The release ended the press's capture on the dongle.
                self.link.send(&configure(tap_endpoint))?;
                return Ok((Press::Tap, SerialSource::start(self.link, self.info)?));
            }
        }
        let source = SerialSource {
            link: self.link,
            info: self.info,
            arrived,
        };
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
        if self.arrived.ended.is_none() {
            // Best effort: the dongle may already be gone.
            let _ = self.link.send(&HostMessage::Stop {
                capture: self.arrived.capture,
            });
        }
    }
}
