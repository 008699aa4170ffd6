//! The Unix side of [`crate::platform`].

#[cfg(feature = "dictate")]
mod control;
#[cfg(feature = "dictate")]
pub(crate) use control::*;

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether a process with `pid` exists (one of another user's counts).
pub(crate) fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    match rustix::process::Pid::from_raw(pid) {
        // EPERM means it exists but is someone else's.
        Some(pid) => !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
}

/// Makes `command`'s child the leader of a process group of its own, so that it and what
/// it starts can be stopped together ([`kill_process_group`]).
pub(crate) fn own_process_group(command: &mut Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
}

/// Kills the process group `pid` leads, with everything in it.
pub(crate) fn kill_process_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Whether whisper.cpp's threads come from OpenMP in this build: on Linux (whisper-sys
/// turns it on with the `openmp` feature); macOS builds use ggml's own pool.
pub(crate) const WHISPER_USES_OPENMP: bool = cfg!(not(target_os = "macos"));

/// Replaces this process with `command`; returns only when that failed.
pub(crate) fn replace_process(command: &mut Command) -> io::Error {
    std::os::unix::process::CommandExt::exec(command)
}

/// The runtime directory when the environment names none: the session's
/// `/run/user/<uid>/yazses` when the session manager made `/run/user/<uid>` (a server
/// started by an MCP client with a trimmed environment must still meet the others), else
/// `<temp>/yazses-<uid>`.
pub(crate) fn default_runtime_dir() -> PathBuf {
    let uid = rustix::process::geteuid().as_raw();
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if std::fs::symlink_metadata(&run_user).is_ok_and(|m| m.is_dir() && m.uid() == uid) {
        return run_user.join("yazses");
    }
    std::env::temp_dir().join(format!("yazses-{uid}"))
}

/// Creates `path` (and its parents) readable and writable by this user alone.
pub(crate) fn create_private_dir(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

/// Why `meta`, the runtime directory at `path`, may not be shared through: another
/// user's, or writable by others. `None` when it is fit.
pub(crate) fn unfit_private_dir(meta: &Metadata, path: &Path) -> Option<String> {
    if let Some(why) = not_mine(meta) {
        return Some(why);
    }
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o022 != 0).then(|| {
        format!(
            "other users can write to it (mode {mode:03o}); run `chmod 700 {}`",
            path.display()
        )
    })
}

/// Why `meta`'s file is not this user's own, or `None` when it is.
pub(crate) fn not_mine(meta: &Metadata) -> Option<String> {
    let me = rustix::process::geteuid().as_raw();
    (meta.uid() != me).then(|| format!("it belongs to user id {}, not to you ({me})", meta.uid()))
}

/// Whether `meta` is a pipe or a socket: a stream with no length (`/dev/stdin` when
/// audio is piped in, a FIFO, a shell's `<(...)`), read whole rather than as a file.
pub(crate) fn is_stream(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo() || meta.file_type().is_socket()
}

/// Opens `path` for reading without blocking on it: a FIFO answers at once instead of
/// holding the caller until a writer comes.
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

/// The stream `mcp-server` writes its messages to.
pub(crate) type GuardedStdout = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// Takes stdout for the protocol alone: the real stdout is duplicated for the returned
/// writer and fd 1 is pointed at stderr, so nothing else in the process (a stray print,
/// whisper.cpp, a child that inherits it) can write into the MCP stream.
pub(crate) fn guard_stdout() -> io::Result<GuardedStdout> {
    use std::os::fd::AsFd;
    let out = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    let is_fifo = rustix::fs::fstat(&out)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo)
        .unwrap_or(false);
    Ok(if is_fifo {
        Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(out)?)
    } else {
        Box::new(tokio::fs::File::from_std(File::from(out)))
    })
}

/// Resolves when the process is asked to stop (SIGTERM, SIGINT or SIGHUP); never, when
/// the signals cannot be watched.
pub(crate) async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ];
    if let [Ok(mut term), Ok(mut int), Ok(mut hup)] = kinds.map(signal) {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        return;
    }
    std::future::pending::<()>().await
}

/// The speech commands tried, in order, when `[speak] command` is empty.
pub(crate) const SPEECH_COMMANDS: &[&[&str]] = if cfg!(target_os = "macos") {
    &[&["say"]]
} else {
    &[&["espeak-ng"], &["spd-say", "--wait"], &["espeak"]]
};

/// Sets the name the replacing program sees as its own (`argv[0]`).
pub(crate) fn set_argv0(command: &mut Command, argv0: std::ffi::OsString) {
    std::os::unix::process::CommandExt::arg0(command, argv0);
}
