//! The dictation process's control socket, `dictate.sock` in the runtime dir: one line in
//! (`toggle`, `start`, `stop`, `status`, `last`), one line back. Mode 0600 in a 0700 directory, and
//! each peer's user id checked, so only the same user can drive it. A desktop's own
//! shortcut settings bind a key to `yazses dictate toggle`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use crate::coord::RuntimeDir;
pub use crate::platform::PeerError;
use crate::platform::{ControlListener, ControlStream};

/// What the control socket accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start when idle, stop when capturing.
    Toggle,
    /// Start a capture (nothing happens if one runs).
    Start,
    /// Stop the capture and deliver what was heard (nothing happens when idle).
    Stop,
    /// Say whether a capture runs.
    Status,
    /// Answer with the last text that could not be typed (its window was closed).
    Last,
}

impl Command {
    /// The command's word on the socket.
    pub fn word(self) -> &'static str {
        match self {
            Command::Toggle => "toggle",
            Command::Start => "start",
            Command::Stop => "stop",
            Command::Status => "status",
            Command::Last => "last",
        }
    }

    /// The command a word names.
    pub fn parse(word: &str) -> Option<Command> {
        [
            Command::Toggle,
            Command::Start,
            Command::Stop,
            Command::Status,
            Command::Last,
        ]
        .into_iter()
        .find(|c| c.word() == word.trim())
    }
}

/// Why the socket could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// No dictation process answers.
    #[error(
        "no yazses dictate is running for this user (nothing answers on {}); start one with `yazses dictate`",
        path.display()
    )]
    NotRunning {
        /// The socket's path.
        path: PathBuf,
    },
    /// Another live dictation process owns the socket.
    #[error("the control socket {} could not be used: {source}", path.display())]
    Io {
        /// The socket's path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The dictation process answered with an error.
    #[error("yazses dictate says: {0}")]
    Refused(String),
}

/// The socket's path in `dir`.
pub fn socket_path(dir: &RuntimeDir) -> PathBuf {
    dir.join(crate::platform::CONTROL_NAME)
}

/// Sends `command` to the running dictation process and returns its answer.
pub fn send(dir: &RuntimeDir, command: Command) -> Result<String, ControlError> {
    let path = socket_path(dir);
    let mut stream = crate::platform::control_connect(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            ControlError::NotRunning { path: path.clone() }
        }
        _ => ControlError::Io {
            path: path.clone(),
            source: e,
        },
    })?;
    let io = |source| ControlError::Io {
        path: path.clone(),
        source,
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(io)?;
    stream
        .write_all(format!("{}\n", command.word()).as_bytes())
        .map_err(io)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).map_err(io)?;
    let answer = answer.trim().to_owned();
    match answer.strip_prefix("error: ") {
        Some(why) => Err(ControlError::Refused(why.to_owned())),
        None if answer.is_empty() => Err(ControlError::Refused(
            "the dictation process closed the connection without answering".into(),
        )),
        None => Ok(answer),
    }
}

/// Binds the socket: a socket file left by a dead process is taken over; one a live
/// process answers on is refused. (The caller holds the single-instance lock first, so
/// a live answer here means something else is bound at the path.)
pub fn bind(dir: &RuntimeDir) -> Result<ControlListener, ControlError> {
    let path = socket_path(dir);
    let io = |source| ControlError::Io {
        path: path.clone(),
        source,
    };
    if std::fs::symlink_metadata(&path).is_ok() {
        if crate::platform::control_connect(&path).is_ok() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                "a live process answers on it",
            )));
        }
        std::fs::remove_file(&path).map_err(io)?;
    }
    crate::platform::control_bind(&path).map_err(io)
}

/// Why a connection's command is not acted on; the text goes back as its answer line.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The peer is not this user, or could not be identified.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// The line could not be read.
    #[error("reading the command: {0}")]
    Read(#[source] std::io::Error),
    /// A line that is no command.
    #[error("unknown command {0:?}; send toggle, start, stop, status or last")]
    Unknown(String),
}

/// Reads one command from a connection, checking that the peer is this user.
pub fn read_command(stream: &ControlStream) -> Result<Command, RequestError> {
    crate::platform::control_peer_is_me(stream)?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(RequestError::Read)?;
    Command::parse(&line).ok_or_else(|| RequestError::Unknown(line.trim().to_owned()))
}

/// Removes the socket file when the dictation process ends.
#[derive(Debug)]
pub struct SocketFile(pub PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
