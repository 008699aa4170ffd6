//! `yazses dictate`: push-to-talk dictation. A long-running process waits for a trigger,
//! hears the user through the one session path with purpose `dictate` (so `ask_human` is
//! refused meanwhile, in every process), transcribes, and delivers the text: typed into
//! the focused window, or printed.
//!
//! - [`control`]: the channel that `yazses dictate toggle|start|stop` talks to (a Unix
//!   socket, or a named pipe on Windows: `host/src/platform`).
//!
//! The desktop side (what every output is, the typers, the clipboard paste, the hotkey and
//! its spelling) differs per system and lives in the `yazses-desktop` crate.
//!
//! One dictation process per user: `dictate.lock` in the runtime dir is held for the
//! process's life (the kernel drops it on exit), with its pid in `dictate.pid`.

pub mod control;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use yazses_core::endpoint::EndpointConfig;

use crate::coord::{Coordinator, Purpose, RuntimeDir};
use crate::hear::{self, Hear, HearError};
use crate::source::{FrameSource, SourceError};
use crate::transcribe::{Options, Transcriber};
use crate::turn::signals::Loader;
use control::Command;
use yazses_desktop::{Deliver, DeliverError};

/// How one dictation went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Text was delivered (its length in characters; the text itself is not kept).
    Delivered(usize),
    /// Nothing was heard: silence, noise, or an empty transcript. Nothing was typed.
    NothingHeard,
    /// The window the dictation began in was closed before the text was ready; the text
    /// (its length in characters) is kept for `yazses dictate last`, not typed elsewhere.
    Kept(usize),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Delivered(n) => write!(f, "delivered {n} characters"),
            Outcome::NothingHeard => f.write_str("nothing heard; nothing typed"),
            Outcome::Kept(n) => write!(
                f,
                "kept {n} characters: the window the dictation began in was closed, so nothing was typed; `yazses dictate last` prints them"
            ),
        }
    }
}

/// Opens the capture source.
pub type Opener =
    dyn Fn(EndpointConfig) -> Result<Box<dyn FrameSource + Send>, SourceError> + Send + Sync;

/// What a capture thread tells the control loop.
enum Event {
    /// The microphone is held and listening.
    Listening,
    /// The dictation is over.
    Done(Result<Outcome, DictateError>),
}

/// Why a dictation failed. Each says what happened, for the control socket's answer
/// line and the log.
#[derive(Debug, thiserror::Error)]
pub enum DictateError {
    /// The microphone could not be had or failed before anything was heard.
    #[error(transparent)]
    Microphone(HearError),
    /// What was heard could not be transcribed.
    #[error("the dictation could not be transcribed: {0}")]
    Transcribe(#[source] HearError),
    /// The text could not be typed or pasted.
    #[error(transparent)]
    Deliver(#[from] DeliverError),
    /// The typer failed in an earlier dictation and is not used again.
    #[error("the typer failed earlier")]
    TyperBroken,
    /// The capture's thread ended without a word.
    #[error("the capture stopped unexpectedly")]
    Vanished,
}

impl From<HearError> for DictateError {
    fn from(e: HearError) -> DictateError {
        match e {
            e @ (HearError::Model(_) | HearError::Transcribe(_)) => DictateError::Transcribe(e),
            e @ (HearError::Microphone(_) | HearError::Capture(_)) => DictateError::Microphone(e),
        }
    }
}

/// The parts of a dictation process.
pub struct Dictation<'a> {
    /// The coordinator (the lease, with purpose `dictate`).
    pub coord: Arc<Coordinator>,
    /// Opens the configured source.
    pub open: Arc<Opener>,
    /// Turns speech into text.
    pub transcriber: Arc<dyn Transcriber>,
    /// Where the text goes.
    pub deliver: Arc<Mutex<Box<dyn Deliver>>>,
    /// The policy for a capture that no release ends (a tap, a toggle).
    pub endpoint: EndpointConfig,
    /// Decoding options.
    pub options: Options,
    /// The runtime dir, for the control socket.
    pub dir: &'a RuntimeDir,
    /// The last text that could not be typed, for `yazses dictate last`.
    pub kept: Arc<Mutex<Option<String>>>,
}

/// A capture in progress.
struct Active {
    release: Arc<AtomicBool>,
    events: Receiver<Event>,
}

/// Holds the single-instance lock; refuses, naming the running one's pid, when taken.
pub fn single_instance(dir: &RuntimeDir) -> anyhow::Result<std::fs::File> {
    let lock_path = dir.join("dictate.lock");
    let pid_path = dir.join("dictate.pid");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| anyhow::anyhow!("{} could not be used: {e}", lock_path.display()))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let pid = std::fs::read_to_string(&pid_path).unwrap_or_default();
            anyhow::bail!(
                "yazses dictate is already running for this user (pid {}); drive it with `yazses dictate toggle`",
                pid.trim()
            );
        }
        Err(std::fs::TryLockError::Error(e)) => {
            anyhow::bail!("{} could not be locked: {e}", lock_path.display())
        }
    }
    std::fs::write(&pid_path, std::process::id().to_string())
        .map_err(|e| anyhow::anyhow!("{} could not be written: {e}", pid_path.display()))?;
    Ok(lock)
}

impl Dictation<'_> {
    /// Watches the dongle on `port` (empty: the first found by USB id) for its button, in
    /// a thread of its own: hold to talk, release to type; or tap (a press shorter than
    /// `tap`) and talk, and the dongle's own end of speech ends it. The port is held open
    /// between presses and opened again when the dongle is unplugged and comes back. While
    /// another process holds the microphone or waits for it, the port is closed, so an
    /// agent's question can hear the user through the same dongle.
    pub fn watch_dongle(&self, port: String, tap: Duration) {
        let tap_endpoint = self.endpoint;
        let template = self.job(self.open.clone());
        // The dongle's own policy must not end a held capture at a pause: only the release
        // (or the cap) ends it.
        let longest = self
            .endpoint
            .timeout
            .unwrap_or(yazses_core::endpoint::HARD_CAP);
        let hold = EndpointConfig {
            end_silence: longest,
            no_speech: longest,
            ..self.endpoint
        };
        let coord = self.coord.clone();
        // Another process's turn with the microphone (an agent's question on the same
        // dongle): the port is theirs until it is over.
        let elsewhere = move || match coord.wanted_elsewhere() {
            Ok(other) => other,
            Err(e) => {
                tracing::debug!("the microphone's lease could not be read: {e}");
                None
            }
        };
        std::thread::spawn(move || {
            let mut said_missing = false;
            let mut lent_to = None;
            loop {
                if let Some(other) = elsewhere() {
                    if lent_to.as_ref() != Some(&other.pid) {
                        tracing::info!(
                            "the dongle's port is left to {other} while it has the microphone"
                        );
                        lent_to = Some(other.pid);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                lent_to = None;
                let mut watch = match crate::source::dongle::ButtonWatch::open(&port, &hold) {
                    Ok(w) => {
                        said_missing = false;
                        w
                    }
                    Err(e) => {
                        tracing::debug!("the dongle is not there yet: {e}");
                        if !said_missing {
                            eprintln!("yazses: waiting for the dongle: {e}");
                            said_missing = true;
                        }
                        std::thread::sleep(Duration::from_secs(1));
                        continue;
                    }
                };
                let pressed = loop {
                    if elsewhere().is_some() {
                        break None;
                    }
                    match watch.wait_press(std::time::Instant::now() + Duration::from_millis(200)) {
                        Ok(Some(capture)) => break Some(capture),
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!("the dongle went away: {e}");
                            break None;
                        }
                    }
                };
                let Some(pressed) = pressed else {
                    continue;
                };
                let (press, capture) = match watch.hold_or_tap(pressed, tap, &tap_endpoint) {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!("the dongle went away: {e}");
                        continue;
                    }
                };
                tracing::info!(?press, "the dongle's button");
                // The capture is the one the press started; it is opened once, under the
                // lease, by the session.
                let capture = Mutex::new(Some(capture));
                let job = Job {
                    open: Arc::new(move |_| {
                        capture
                            .lock()
                            .ok()
                            .and_then(|mut c| c.take())
                            .map(|c| Box::new(c) as Box<dyn FrameSource + Send>)
                            .ok_or_else(|| SourceError::Gone("the dongle capture ended".into()))
                    }),
                    release: Arc::new(AtomicBool::new(false)),
                    ..template.clone()
                };
                log_outcome(&job.run(|| tracing::info!("dictating (the dongle's button)")));
            }
        });
    }

    fn job(&self, open: Arc<Opener>) -> Job {
        Job {
            coord: self.coord.clone(),
            open,
            transcriber: self.transcriber.clone(),
            deliver: self.deliver.clone(),
            endpoint: self.endpoint,
            options: self.options.clone(),
            release: Arc::new(AtomicBool::new(false)),
            kept: self.kept.clone(),
        }
    }

    /// Serves the control socket until the process is stopped.
    pub fn serve(self) -> anyhow::Result<()> {
        let listener = control::bind(self.dir)?;
        let _socket = control::SocketFile(control::socket_path(self.dir));
        tracing::info!(socket = %control::socket_path(self.dir).display(), "dictation ready");
        eprintln!(
            "yazses: dictation ready; bind a key to `yazses dictate toggle` (Ctrl-C to quit)"
        );
        let mut active: Option<Active> = None;
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "a control connection failed");
                    continue;
                }
            };
            let answer = match control::read_command(&stream) {
                Ok(command) => self.handle(command, &mut active),
                Err(why) => format!("error: {why}"),
            };
            reply(stream, &answer);
        }
        Ok(())
    }

    /// Acts on one command; the answer line.
    fn handle(&self, command: Command, active: &mut Option<Active>) -> String {
        // A capture that ended on its own (end of speech, timeout) is finished first.
        if let Some(a) = active.as_ref()
            && let Ok(Event::Done(result)) = a.events.try_recv()
        {
            log_outcome(&result);
            *active = None;
        }
        match (command, active.is_some()) {
            (Command::Last, _) => match self.kept.lock().ok().and_then(|k| k.clone()) {
                // One line on the socket, whatever the transcript holds.
                Some(text) => text.replace(['\n', '\r'], " "),
                None => "error: no dictation is kept; text is kept only when the window it was meant for was closed".into(),
            },
            (Command::Status, true) => "listening".into(),
            (Command::Status, false) => "idle".into(),
            (Command::Start | Command::Toggle, false) => self.start(active),
            (Command::Start, true) => "listening (already)".into(),
            (Command::Stop | Command::Toggle, true) => {
                let a = active.take().expect("active");
                a.release.store(true, Ordering::SeqCst);
                answer(finish(&a.events))
            }
            (Command::Stop, false) => "idle (nothing to stop)".into(),
        }
    }

    fn start(&self, active: &mut Option<Active>) -> String {
        let (tx, rx) = std::sync::mpsc::channel();
        let job = self.job(self.open.clone());
        let release = job.release.clone();
        std::thread::spawn(move || {
            let listening = tx.clone();
            let result = job.run(move || {
                let _ = listening.send(Event::Listening);
            });
            let _ = tx.send(Event::Done(result));
        });
        match rx.recv() {
            Ok(Event::Listening) => {
                *active = Some(Active {
                    release,
                    events: rx,
                });
                "listening".into()
            }
            Ok(Event::Done(result)) => {
                log_outcome(&result);
                answer(result)
            }
            Err(_) => "error: the capture stopped unexpectedly".into(),
        }
    }
}

/// Waits for a released capture to be transcribed and delivered.
fn finish(events: &Receiver<Event>) -> Result<Outcome, DictateError> {
    loop {
        match events.recv() {
            Ok(Event::Done(result)) => {
                log_outcome(&result);
                return result;
            }
            Ok(Event::Listening) => {}
            Err(_) => return Err(DictateError::Vanished),
        }
    }
}

/// The control socket's answer line for how a dictation went.
fn answer(result: Result<Outcome, DictateError>) -> String {
    match result {
        Ok(outcome) => outcome.to_string(),
        Err(why) => format!("error: {why}"),
    }
}

fn log_outcome(result: &Result<Outcome, DictateError>) {
    match result {
        Ok(outcome) => tracing::info!("dictation: {outcome}"),
        Err(why) => tracing::warn!("dictation failed: {why}"),
    }
}

fn reply(mut stream: crate::platform::ControlStream, answer: &str) {
    if let Err(e) = stream.write_all(format!("{answer}\n").as_bytes()) {
        tracing::debug!(error = %e, "the control client left before the answer");
    }
}

/// One dictation: the lease, the capture, the transcript, the delivery.
#[derive(Clone)]
struct Job {
    coord: Arc<Coordinator>,
    open: Arc<Opener>,
    transcriber: Arc<dyn Transcriber>,
    deliver: Arc<Mutex<Box<dyn Deliver>>>,
    endpoint: EndpointConfig,
    options: Options,
    release: Arc<AtomicBool>,
    kept: Arc<Mutex<Option<String>>>,
}

impl Job {
    fn run(self, listening: impl FnOnce()) -> Result<Outcome, DictateError> {
        let never = AtomicBool::new(false);
        // The window focused at the trigger is the one the text is for.
        if let Ok(mut deliver) = self.deliver.lock() {
            deliver.aim();
        }
        // A dictation goes ahead of queued questions; it only waits out the one that
        // holds the microphone now.
        let hearing = Hear::new(
            Purpose::Dictate,
            "yazses dictate",
            self.endpoint,
            self.options.clone(),
        )
        .push_to_talk(&self.release)
        .begin(&self.coord, &never, hear::tell_terminal)?;
        listening();
        let transcriber = self.transcriber.clone();
        let heard = hearing.listen(
            &*self.open,
            hear::loaded(transcriber),
            Loader::unavailable("dictation hears no voice"),
            &never,
            |_| {},
        )?;
        let utterance = heard.utterance;
        tracing::debug!(
            audio_ms = utterance.audio_ms(),
            stopped = %utterance.stopped_because,
            "dictation captured"
        );
        if let Some(why) = &utterance.cut_short {
            eprintln!(
                "yazses: the microphone failed mid-dictation ({why}); typing what was heard before it"
            );
        }
        let Some(said) = heard.said else {
            return Ok(Outcome::NothingHeard);
        };
        let text = said.text.trim();
        if !said.heard || text.is_empty() {
            return Ok(Outcome::NothingHeard);
        }
        let mut deliver = self.deliver.lock().map_err(|_| DictateError::TyperBroken)?;
        match deliver.deliver(text) {
            Ok(()) => Ok(Outcome::Delivered(text.chars().count())),
            Err(DeliverError::TargetGone) => {
                eprintln!(
                    "yazses: the window you dictated into was closed before the text was ready; nothing was typed (`yazses dictate last` prints it)"
                );
                if let Ok(mut kept) = self.kept.lock() {
                    *kept = Some(text.to_owned());
                }
                Ok(Outcome::Kept(text.chars().count()))
            }
            Err(e) => Err(e.into()),
        }
    }
}
