//! Every difference between operating systems, behind one internal API, the way mio keeps
//! `sys/unix` and `sys/windows`: the rest of the crate calls `platform::...` and holds no
//! `cfg` of its own (device discovery in `source/` aside).
//!
//! One file per system: [`unix`] (Linux; the calls are POSIX, so the BSDs and macOS are
//! expected to need little beside it). A new system is one file with the same functions.
//! What lives here:
//! - processes: whether a pid is alive, a child in a process group of its own and the
//!   group killed, replacing this process with another binary;
//! - files: the private per-user runtime directory (where it is, created private,
//!   checked to be ours and closed to others), a file checked to be ours, a
//!   non-blocking open (a FIFO swapped in for a config file must not hang the start);
//! - the stdout guard of `mcp-server`: the real stdout kept for the protocol, fd 1 pointed
//!   at stderr;
//! - the speech commands tried when `[speak] command` is empty (on Windows it will be
//!   PowerShell's System.Speech);
//! - signals that ask the server to stop;
//! - the dictation control channel: a Unix socket, mode 0600, each peer's user id checked
//!   (on Windows it will be a named pipe restricted to the user).
//!
//! Still outside it: the desktop typers, paste and hotkeys (`dictate/`: X11 XTEST, wtype,
//! the GlobalShortcuts portal), which are Linux-only today.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;
