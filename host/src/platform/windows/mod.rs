//! The Windows side of [`crate::platform`]: the same functions as the Unix side, on
//! Win32. Cross-built with mingw-w64 and run under Wine in CI (`./ci.sh windows`); what
//! Wine cannot show is listed in docs/platforms.md.

// Win32 is C: handles, out-pointers and structures filled by the callee.
#![allow(unsafe_code)]

#[cfg(feature = "dictate")]
mod control;
#[cfg(feature = "dictate")]
pub(crate) use control::*;

use std::fs::{File, Metadata};
use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, GetLastError, HANDLE, INVALID_HANDLE_VALUE, STILL_ACTIVE,
};
use windows_sys::Win32::System::Console::{STD_OUTPUT_HANDLE, SetConsoleCtrlHandler, SetStdHandle};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectExtendedLimitInformation, SetInformationJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A handle from a Win32 call, owned so that it is closed; `None` for a null or invalid one.
fn owned(handle: HANDLE) -> Option<OwnedHandle> {
    (!handle.is_null() && handle != INVALID_HANDLE_VALUE)
        // SAFETY: the caller passes a handle a Win32 call just returned to us alone.
        .then(|| unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// Whether a process with `pid` exists (one of another user's counts).
pub(crate) fn process_alive(pid: u32) -> bool {
    // SAFETY: plain calls on a pid; the handle is closed by `owned`.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    let Some(process) = owned(handle) else {
        // Denied means it exists but is someone else's (or the system's).
        return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
    };
    let mut code = 0u32;
    // SAFETY: a live process handle and a place for the code.
    let ok = unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut code) } != 0;
    ok && code == STILL_ACTIVE as u32
}

/// Starts `command`'s child in a process group of its own (Ctrl+C at the console does
/// not reach it; [`kill_process_group`] stops it with what it started).
pub(crate) fn own_process_group(command: &mut Command) {
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Kills process `pid` with every process it started (Windows has no process groups to
/// signal; `taskkill /T` walks the tree).
pub(crate) fn kill_process_group(pid: u32) {
    let _ = Command::new("taskkill")
        .args(["/PID", &pid.to_string(), "/T", "/F"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Whether whisper.cpp's threads come from OpenMP in this build: not on Windows, where
/// whisper-sys leaves it off (ggml's own pool; no libgomp DLL to ship).
pub(crate) const WHISPER_USES_OPENMP: bool = false;

/// Runs `command` in place of this process: Windows cannot replace a process's image, so
/// the child runs with our console and handles, and we wait and exit with its code.
/// - The child ends when we end, however we end ([`tie_to_this_process`]): an MCP client
///   stopping its server kills the process it started, which is this one.
/// - Ctrl+C is left to the child (it shares our console), so we exit after it has
///   finished, not before.
///
/// Returns only when the child could not start.
pub(crate) fn replace_process(command: &mut Command) -> io::Error {
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return e,
    };
    tie_to_this_process(&child);
    // SAFETY: no handler, only the flag that ignores Ctrl+C in this process; set after
    // the spawn, since a child would inherit it.
    unsafe { SetConsoleCtrlHandler(None, 1) };
    let code = child.wait().map_or(1, |status| status.code().unwrap_or(1));
    std::process::exit(code)
}

/// Puts `child` in a job object that Windows closes when this process ends, and that
/// kills what is in it when closed. The child's own children may leave the job: stopping
/// them is the child's business. Best effort: when a step fails the child stays untied.
fn tie_to_this_process(child: &std::process::Child) {
    // SAFETY: an unnamed job with default security.
    let Some(job) = owned(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) }) else {
        return;
    };
    // SAFETY: a plain C structure, all zeros meaning "no limit".
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK;
    // SAFETY: the job handle is ours, the structure and its size match the class, and the
    // child's handle is valid while `child` lives.
    let tied = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of_val(&limits) as u32,
        ) != 0
            && AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) != 0
    };
    if tied {
        // The job's only handle must stay open until this process ends: closing it would
        // kill the child now.
        std::mem::forget(job);
    } else {
        tracing::debug!(
            "the child could not be tied to this process: {}",
            io::Error::last_os_error()
        );
    }
}

/// The runtime directory when the environment names none: `%LOCALAPPDATA%\yazses\run`,
/// private to the user by the profile's own permissions; else `<temp>\yazses`.
pub(crate) fn default_runtime_dir() -> PathBuf {
    match std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
        Some(local) => PathBuf::from(local).join("yazses").join("run"),
        None => std::env::temp_dir().join("yazses"),
    }
}

/// Creates `path` and its parents. Under the user's profile it inherits the profile's
/// permissions, which close it to other users.
pub(crate) fn create_private_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Why `meta`, the runtime directory at `path`, may not be shared through: a link that
/// may lead into another user's place. `None` when it is fit. (Its access list is not
/// read: the default place is under the user's own profile.)
pub(crate) fn unfit_private_dir(meta: &Metadata, path: &Path) -> Option<String> {
    meta.file_type().is_symlink().then(|| {
        format!(
            "it is a link ({}), not a directory of its own",
            path.display()
        )
    })
}

/// Why `meta`'s file is not this user's own, or `None` when it is. Windows keeps
/// ownership in access lists, which are not read here: always `None`.
pub(crate) fn not_mine(_meta: &Metadata) -> Option<String> {
    None
}

/// Whether `meta` is a pipe: Windows has none in the file system (standard input, `-`,
/// is the way to pipe audio in).
pub(crate) fn is_stream(_meta: &Metadata) -> bool {
    false
}

/// Opens `path` for reading. Windows has no FIFOs in the file system, so a plain open
/// cannot hang.
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// The stream `mcp-server` writes its messages to.
pub(crate) type GuardedStdout = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// Takes stdout for the protocol alone: the real stdout handle is duplicated for the
/// returned writer and the process's standard output is pointed at stderr, so a stray
/// print from Rust and a child that inherits it write to stderr. (The C runtime's own
/// descriptor 1 was set at start-up and is not moved; whisper.cpp's log goes through a
/// callback, not printf.)
pub(crate) fn guard_stdout() -> io::Result<GuardedStdout> {
    let out = std::io::stdout().as_handle().try_clone_to_owned()?;
    let err = std::io::stderr().as_raw_handle();
    // SAFETY: stderr's handle stays open for the life of the process.
    if unsafe { SetStdHandle(STD_OUTPUT_HANDLE, err as HANDLE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Box::new(tokio::fs::File::from_std(File::from(out))))
}

/// Resolves when the process is asked to stop: Ctrl+C, Ctrl+Break, or its console
/// closing; never, when none can be watched.
pub(crate) async fn stop_requested() {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    if let (Ok(mut c), Ok(mut b), Ok(mut close)) = (ctrl_c(), ctrl_break(), ctrl_close()) {
        tokio::select! {
            _ = c.recv() => {}
            _ = b.recv() => {}
            _ = close.recv() => {}
        }
        return;
    }
    std::future::pending::<()>().await
}

/// The speech commands tried, in order, when `[speak] command` is empty: Windows' own
/// voices through PowerShell's System.Speech. The text comes from the environment
/// ([`crate::speak::TEXT_VARIABLE`]), never through the script.
pub(crate) const SPEECH_COMMANDS: &[&[&str]] = &[&[
    "powershell",
    "-NoProfile",
    "-NonInteractive",
    "-Command",
    "Add-Type -AssemblyName System.Speech; \
     (New-Object System.Speech.Synthesis.SpeechSynthesizer).Speak($env:YAZSES_SPEAK_TEXT)",
]];

/// Sets the name the replacing program sees as its own: Windows programs get their
/// command line whole, so the name stays the program's.
pub(crate) fn set_argv0(_command: &mut Command, _argv0: std::ffi::OsString) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_not() {
        assert!(process_alive(std::process::id()));
        let mut child = Command::new("cmd").args(["/c", "exit"]).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }
}
