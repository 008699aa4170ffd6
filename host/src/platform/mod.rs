//! Every difference between operating systems, behind one internal API, the way mio keeps
//! `sys/unix` and `sys/windows`: the rest of the crate calls `platform::...` and holds no
//! `cfg` of its own (device discovery in `source/` aside).
//!
//! One module per system, with the same functions: `unix` (Linux; the calls are POSIX,
//! so the BSDs and macOS need little beside it) and `windows`. What lives here:
//! - processes: whether a pid is alive, a child in a process group of its own and the
//!   group killed, replacing this process with another binary;
//! - files: the private per-user runtime directory (where it is, created private,
//!   checked to be ours and closed to others), a file checked to be ours, a
//!   non-blocking open (a FIFO swapped in for a config file must not hang the start);
//! - the stdout guard of `mcp-server`: the real stdout kept for the protocol, the process's
//!   own stdout pointed at stderr;
//! - the speech commands tried when `[speak] command` is empty;
//! - what asks the server to stop (signals; Ctrl+C and the console closing on Windows);
//! - the dictation control channel (`control`, with the `dictate` feature): a Unix
//!   socket, mode 0600, each peer's user id checked; a named pipe on Windows;
//! - whether the system lets this process record (macOS's Microphone permission).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub(crate) use macos::microphone::allowed as microphone_allowed;

/// Whether the system lets this process record: `Err` says why not and where to allow it.
/// Only macOS asks (it records silence otherwise); elsewhere a refused device fails to open
/// and says so itself.
#[cfg(not(target_os = "macos"))]
pub(crate) fn microphone_allowed() -> Result<(), Denied> {
    Ok(())
}

/// Whether `program` is a file in a directory on the `PATH`, as itself or with `.exe`.
pub(crate) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(program);
            p.is_file() || p.with_extension("exe").is_file()
        })
    })
}

/// The system does not let this process record; the text says where to allow it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Denied(pub(crate) String);

/// Why the peer of a control connection may not drive this user's dictation.
#[cfg(feature = "dictate")]
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// It runs as another user (`who` names it: a user id, a process).
    #[error("{who} runs as another user and may not drive this user's dictation")]
    Foreign {
        /// The peer, in words.
        who: String,
    },
    /// Who it runs as could not be found out.
    #[error("the peer could not be identified: {0}")]
    Unidentified(String),
}
