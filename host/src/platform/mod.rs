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
//! - the speech commands tried when `[speak] command` is empty;
//! - signals that ask the server to stop.
//!
//! Still outside it: the dictation control socket (`dictate/control.rs`, a Unix socket
//! with peer credentials) and the desktop typers (`dictate/`), which are Linux-only today.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;
