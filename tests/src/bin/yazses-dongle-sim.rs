//! A yazses dongle on the host: the firmware's whole state machine
//! ([`yazses_boards::device::Device`]) fed from a recording instead of a microphone, writing
//! the wire protocol into a serial port (one end of a `socat` pty pair in the tests),
//! with faults injected on the way.
//!
//! ```text
//! socat pty,raw,echo=0,link=/tmp/dongle pty,raw,echo=0,link=/tmp/host &
//! yazses-dongle-sim --port /tmp/dongle --wav answer.wav --corrupt 0.05 &
//! yazses listen --source serial --serial-port /tmp/host
//! ```
//!
//! Faults touch only the stream (`Audio` and `Vad` frames), never `Hello` or
//! `EndOfSpeech`, so a test knows what it broke: `--drop P` loses a frame, `--corrupt P`
//! flips a byte in one, `--stall-ms N` holds the output back N ms once a second (a busy USB
//! bus), `--disconnect-after-ms N` closes the port N ms into a capture (an unplug),
//! `--garbage-after-ms N` sends only random bytes from N ms into a capture (a dongle gone
//! mad, or the wrong device on the port).
//!
//! `--latency-ms N` delivers every message N ms after the dongle made it (the firmware's
//! outgoing buffer and the USB bus hold up to ~120 ms of audio): a capture the host
//! cancels still has audio on its way when the next one starts. `--captures N` serves N
//! captures before it exits (default 1); each capture the host starts plays the recording
//! from its beginning. `--protocol N` announces wire protocol version N in `Hello`
//! (an old or a newer dongle). `--suspend-after-ms N` suspends the USB bus N ms into the
//! first capture (the host went to sleep: nothing goes out until the resume) and
//! `--resume-after-ms M` resumes it M ms later.
//!
//! `--press-ms N` and `--release-ms M` press and release the push-to-talk button at those
//! times: the recording then plays as the room's sound from the simulator's start, and
//! the dongle hears it only while the button is down (as a real one, whose microphone is
//! off until the press). That clock starts once the host has configured the dongle.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use yazses_boards::device::{Device, Event};
use yazses_core::dongle::Identity;
use yazses_core::frame::FRAME_SAMPLES;
use yazses_core::wire::{self, DeviceMessage, FrameReader, HostMessage, MAX_FRAME};

struct Args {
    port: PathBuf,
    wav: PathBuf,
    speed: f64,
    drop: f64,
    corrupt: f64,
    stall_ms: u64,
    disconnect_after_ms: Option<u64>,
    garbage_after_ms: Option<u64>,
    press_ms: Option<u64>,
    release_ms: Option<u64>,
    latency_ms: u64,
    captures: u64,
    suspend_after_ms: Option<u64>,
    resume_after_ms: u64,
    protocol: u16,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: PathBuf::new(),
        wav: PathBuf::new(),
        speed: 1.0,
        drop: 0.0,
        corrupt: 0.0,
        stall_ms: 0,
        disconnect_after_ms: None,
        garbage_after_ms: None,
        press_ms: None,
        release_ms: None,
        latency_ms: 0,
        captures: 1,
        suspend_after_ms: None,
        resume_after_ms: 1000,
        protocol: wire::PROTOCOL_VERSION,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| v.parse::<f64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--port" => args.port = value()?.into(),
            "--wav" => args.wav = value()?.into(),
            "--speed" => args.speed = number(value()?)?,
            "--drop" => args.drop = number(value()?)?,
            "--corrupt" => args.corrupt = number(value()?)?,
            "--stall-ms" => args.stall_ms = number(value()?)? as u64,
            "--disconnect-after-ms" => args.disconnect_after_ms = Some(number(value()?)? as u64),
            "--garbage-after-ms" => args.garbage_after_ms = Some(number(value()?)? as u64),
            "--seed" => args.seed = number(value()?)? as u64,
            "--press-ms" => args.press_ms = Some(number(value()?)? as u64),
            "--release-ms" => args.release_ms = Some(number(value()?)? as u64),
            "--latency-ms" => args.latency_ms = number(value()?)? as u64,
            "--captures" => args.captures = number(value()?)? as u64,
            "--protocol" => args.protocol = number(value()?)? as u16,
            "--suspend-after-ms" => args.suspend_after_ms = Some(number(value()?)? as u64),
            "--resume-after-ms" => args.resume_after_ms = number(value()?)? as u64,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if args.release_ms.is_some() && args.press_ms.is_none_or(|p| Some(p) >= args.release_ms) {
        return Err("--release-ms needs a --press-ms before it".into());
    }
    if args.port.as_os_str().is_empty() || args.wav.as_os_str().is_empty() {
        return Err("usage: yazses-dongle-sim --port PTY --wav FILE [--speed X] [--drop P] \
                    [--corrupt P] [--stall-ms N] [--disconnect-after-ms N] [--garbage-after-ms N] [--seed N] \
                    [--press-ms N [--release-ms M]] [--latency-ms N] [--captures N] [--protocol N] \
                    [--suspend-after-ms N [--resume-after-ms M]]"
            .into());
    }
    Ok(args)
}

use yazses_tests::rng::Rng;

struct Output {
    port: File,
    /// Encoded messages and when they may go out (`--latency-ms`).
    in_flight: VecDeque<(Instant, Vec<u8>)>,
    latency: Duration,
    /// The bus is suspended: messages wait for the resume.
    suspended: bool,
    rng: Rng,
    drop: f64,
    corrupt: f64,
    sent: u64,
    dropped: u64,
    corrupted: u64,
    /// The first write that failed (the port closed), reported after the step.
    error: Option<std::io::Error>,
}

impl Output {
    /// Sends `message` unless an earlier write failed; keeps the first failure.
    fn emit(&mut self, message: DeviceMessage<'_>) {
        if self.error.is_none()
            && let Err(e) = self.send(&message)
        {
            self.error = Some(e);
        }
    }

    fn send(&mut self, message: &DeviceMessage<'_>) -> std::io::Result<()> {
        let mut frame = [0u8; MAX_FRAME];
        let n = wire::encode(message, &mut frame).expect("device messages fit a frame");
        let stream = matches!(
            message,
            DeviceMessage::Audio { .. } | DeviceMessage::Vad { .. }
        );
        if stream && self.rng.chance(self.drop) {
            self.dropped += 1;
            return Ok(());
        }
        if stream && self.rng.chance(self.corrupt) {
            let at = 1 + (self.rng.next_u64() as usize) % (n - 2);
            frame[at] ^= 1 + (self.rng.next_u64() % 255) as u8;
            self.corrupted += 1;
        }
        self.sent += 1;
        if self.latency.is_zero() && !self.suspended {
            return self.port.write_all(&frame[..n]);
        }
        self.in_flight
            .push_back((Instant::now() + self.latency, frame[..n].to_vec()));
        self.deliver()
    }

    /// Writes what has been in flight long enough.
    fn deliver(&mut self) -> std::io::Result<()> {
        while !self.suspended
            && let Some((due, _)) = self.in_flight.front()
            && *due <= Instant::now()
        {
            let (_, bytes) = self.in_flight.pop_front().expect("just seen");
            self.port.write_all(&bytes)?;
        }
        Ok(())
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("yazses-dongle-sim: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("yazses-dongle-sim: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let audio = yazses::audio::read(&args.wav, &yazses::audio::Limits::default())
        .map_err(|e| e.to_string())?;
    let port = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&args.port)
        .map_err(|e| format!("{}: {e}", args.port.display()))?;
    let mut input = port.try_clone().map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel::<HostMessage>();
    std::thread::spawn(move || {
        let mut reader = FrameReader::new();
        let mut buf = [0u8; 256];
        while let Ok(n) = input.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                let (used, message) = reader.read::<HostMessage>(rest);
                rest = &rest[used..];
                if let Some(Ok(m)) = message
                    && tx.send(m).is_err()
                {
                    return;
                }
            }
        }
    });

    let mut out = Output {
        port,
        in_flight: VecDeque::new(),
        latency: Duration::from_millis(args.latency_ms),
        suspended: false,
        rng: Rng(args.seed.max(1)),
        drop: args.drop,
        corrupt: args.corrupt,
        sent: 0,
        dropped: 0,
        corrupted: 0,
        error: None,
    };
    let mut dongle = Device::new(Identity {
        board: "host-simulator",
        fw_version: env!("CARGO_PKG_VERSION"),
    });
    // The host has the port open from the start (a pty has no DTR to watch).
    dongle.on(Event::Host(true), |_| {});
    let hello = |dongle: &Device| match dongle.hello() {
        DeviceMessage::Hello {
            board,
            fw_version,
            sample_rate,
            ..
        } => DeviceMessage::Hello {
            protocol: args.protocol,
            board,
            fw_version,
            sample_rate,
        },
        other => other,
    };
    let mut pending: Vec<DeviceMessage<'static>> = vec![hello(&dongle)];
    let tick = Duration::from_secs_f64(0.010 / args.speed.max(0.01));
    let started = Instant::now();
    let mut next_tick = started;
    let mut frame_at = 0usize;
    let mut capture_frames = 0u64;
    let captures_ended = std::cell::Cell::new(0u64);
    // A capture ended when the one running before a step is not the one running after it.
    let count_end = |was: Option<u32>, dongle: &Device| {
        if was.is_some() && dongle.capture_id() != was {
            captures_ended.set(captures_ended.get() + 1);
        }
    };
    let mut last_heartbeat = started;
    let mut last_stall = started;
    // With the button in play, the recording is the room's sound on the simulator's own
    // clock; without it, it starts with the capture the host asks for.
    // The room's clock starts when the host has configured the dongle (a real one is
    // plugged in long before anyone presses its button).
    let room = args.press_ms.is_some();
    let mut configured = !room;
    let mut ticks = 0u64;
    let mut suspended_at: Option<u64> = None;
    loop {
        if room && configured {
            let now_ms = ticks * 10;
            // The room's sound goes on whether or not the dongle listens.
            frame_at = (now_ms * 16) as usize;
            if args.press_ms == Some(now_ms) {
                dongle.on(Event::Button(true), |d| out.emit(d));
            }
            if args.release_ms == Some(now_ms) {
                let was = dongle.capture_id();
                dongle.on(Event::Button(false), |d| out.emit(d));
                count_end(was, &dongle);
            }
        }
        if configured {
            ticks += 1;
        }
        for m in pending.drain(..) {
            out.send(&m).map_err(|e| e.to_string())?;
        }
        // The host's messages, then one frame of "microphone".
        while let Ok(m) = rx.try_recv() {
            configured |= matches!(m, HostMessage::Configure { .. });
            let was = dongle.capture_id();
            if let HostMessage::Hello { .. } = m {
                out.emit(hello(&dongle));
            } else {
                dongle.on(Event::Command(m), |d| out.emit(d));
            }
            count_end(was, &dongle);
            if !room && dongle.capture_id().is_some_and(|id| Some(id) != was) {
                frame_at = 0;
            }
        }
        if let Some(at) = suspended_at
            && (ticks - at) * 10 >= args.resume_after_ms
        {
            eprintln!("yazses-dongle-sim: the bus resumed");
            suspended_at = None;
            dongle.on(Event::Resume, |d| out.emit(d));
            out.suspended = false;
        }
        if dongle.outputs().mic {
            let mut frame = [0i16; FRAME_SAMPLES];
            for (i, s) in frame.iter_mut().enumerate() {
                *s = audio.samples.get(frame_at + i).copied().unwrap_or(0);
            }
            frame_at += FRAME_SAMPLES;
            capture_frames += 1;
            let was = dongle.capture_id();
            dongle.on(Event::Frame(&frame), |d| out.emit(d));
            if args
                .suspend_after_ms
                .is_some_and(|ms| capture_frames * 10 == ms)
            {
                eprintln!(
                    "yazses-dongle-sim: the bus suspended {} ms into the capture",
                    capture_frames * 10
                );
                dongle.on(Event::Suspend, |d| out.emit(d));
                out.suspended = true;
                suspended_at = Some(ticks);
            }
            count_end(was, &dongle);
            if args
                .garbage_after_ms
                .is_some_and(|ms| capture_frames * 10 >= ms)
            {
                eprintln!(
                    "yazses-dongle-sim: garbage from {} ms into the capture",
                    capture_frames * 10
                );
                return send_garbage(&mut out, tick);
            }
            if args
                .disconnect_after_ms
                .is_some_and(|ms| capture_frames * 10 >= ms)
            {
                eprintln!(
                    "yazses-dongle-sim: unplugged {} ms into the capture",
                    capture_frames * 10
                );
                return Ok(());
            }
        } else if room && frame_at < audio.samples.len() + 16_000 {
            // The recording (and a second after it) is still playing: the host may start
            // another capture (a tap's), as it would in a room.
        } else if suspended_at.is_some() {
            // Asleep: nothing happens until the resume.
        } else if captures_ended.get() >= args.captures {
            eprintln!(
                "yazses-dongle-sim: capture over; {} frames sent, {} dropped, {} corrupted",
                out.sent, out.dropped, out.corrupted
            );
            // Let the last frames drain through the pty before the port closes.
            std::thread::sleep(Duration::from_millis(500) + out.latency);
            out.deliver().map_err(|e| e.to_string())?;
            return Ok(());
        } else if dongle.outputs().heartbeat && last_heartbeat.elapsed() >= Duration::from_secs(1) {
            last_heartbeat = Instant::now();
            let uptime_ms = started.elapsed().as_millis() as u32;
            out.send(&DeviceMessage::Heartbeat { uptime_ms })
                .map_err(|e| e.to_string())?;
        }
        if let Err(e) = out.deliver() {
            out.error.get_or_insert(e);
        }
        if let Some(e) = out.error.take() {
            return Err(e.to_string());
        }
        if args.stall_ms > 0 && last_stall.elapsed() >= Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(args.stall_ms));
            last_stall = Instant::now();
        }
        next_tick += tick;
        if let Some(wait) = next_tick.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// Random bytes at the pace of audio, until the host closes the port (or 30 s pass).
fn send_garbage(out: &mut Output, tick: Duration) -> Result<(), String> {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let mut junk = [0u8; 330];
        for b in &mut junk {
            *b = out.rng.next_u64() as u8;
        }
        if out.port.write_all(&junk).is_err() {
            return Ok(());
        }
        std::thread::sleep(tick);
    }
    Ok(())
}
