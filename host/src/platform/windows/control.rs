//! The dictation control channel on Windows: a named pipe, named from a marker file in
//! the runtime directory, each client's user checked against this process's.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use windows_sys::Win32::Foundation::{ERROR_PIPE_BUSY, ERROR_PIPE_CONNECTED, GetLastError, HANDLE};
use windows_sys::Win32::Security::{
    EqualSid, GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_FIRST_PIPE_INSTANCE, FlushFileBuffers, PIPE_ACCESS_DUPLEX,
};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, DisconnectNamedPipe, GetNamedPipeClientProcessId,
    PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_UNLIMITED_INSTANCES,
    PIPE_WAIT, PeekNamedPipe, WaitNamedPipeW,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::owned;

/// The control channel's marker in the runtime directory. The channel itself is a named
/// pipe whose name is made from this file's path, so two runtime directories never share
/// one; the file says that a dictation process was bound here.
pub(crate) const CONTROL_NAME: &str = "dictate.pipe";

/// The pipe behind the marker at `path`.
fn pipe_name(path: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(path.to_string_lossy().to_lowercase().as_bytes());
    let tag: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(r"\\.\pipe\yazses-dictate-{tag}")
}

/// `text` as the NUL-terminated UTF-16 Win32 takes.
fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain([0]).collect()
}

/// One connection on the dictation control channel.
#[derive(Debug)]
pub struct ControlStream {
    pipe: File,
    /// The server's end: flushed and disconnected when dropped, so the client reads the
    /// whole answer.
    server: bool,
    /// How long a read waits for the first byte, in milliseconds; 0: for ever.
    read_limit_ms: AtomicU64,
}

impl ControlStream {
    fn new(pipe: File, server: bool) -> ControlStream {
        ControlStream {
            pipe,
            server,
            read_limit_ms: AtomicU64::new(0),
        }
    }

    /// Makes a read that gets nothing within `limit` fail with `TimedOut`, as a socket's
    /// does: a client that connects and says nothing must not hold the channel.
    pub fn set_read_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        let ms = limit.map_or(0, |l| (l.as_millis() as u64).max(1));
        self.read_limit_ms.store(ms, Ordering::Relaxed);
        Ok(())
    }

    /// Waits until the pipe has bytes or its other end is gone (the read then returns
    /// them, or says so), for at most the read limit. A synchronous pipe read cannot be
    /// given a timeout, so the pipe is peeked at until then.
    fn wait_for_data(&self) -> io::Result<()> {
        let limit = self.read_limit_ms.load(Ordering::Relaxed);
        if limit == 0 {
            return Ok(());
        }
        let until = std::time::Instant::now() + Duration::from_millis(limit);
        loop {
            let mut waiting = 0u32;
            // SAFETY: our pipe handle; only the count of bytes waiting is asked for.
            let peeked = unsafe {
                PeekNamedPipe(
                    self.pipe.as_raw_handle() as HANDLE,
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    &mut waiting,
                    std::ptr::null_mut(),
                )
            } != 0;
            if !peeked || waiting > 0 {
                return Ok(());
            }
            if std::time::Instant::now() >= until {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("nothing came on the pipe within {limit} ms"),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Read for &ControlStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.wait_for_data()?;
        (&self.pipe).read(buf)
    }
}

impl Write for &ControlStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&self.pipe).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&self.pipe).flush()
    }
}

impl Write for ControlStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self).flush()
    }
}

impl Drop for ControlStream {
    fn drop(&mut self) {
        if self.server {
            let handle = self.pipe.as_raw_handle() as HANDLE;
            // SAFETY: our own open pipe handle.
            unsafe {
                FlushFileBuffers(handle);
                DisconnectNamedPipe(handle);
            }
        }
    }
}

/// The dictation control channel, listening: one pipe instance waits for a client at a
/// time, the next made as soon as one connects.
#[derive(Debug)]
pub struct ControlListener {
    /// The pipe's name, as `CreateNamedPipeW` takes it.
    name: Vec<u16>,
    waiting: std::sync::Mutex<Option<OwnedHandle>>,
}

/// A new instance of the pipe `name`; the first refuses to open a pipe someone else made.
fn pipe_instance(name: &[u16], first: bool) -> io::Result<OwnedHandle> {
    let mode = PIPE_ACCESS_DUPLEX
        | if first {
            FILE_FLAG_FIRST_PIPE_INSTANCE
        } else {
            0
        };
    // SAFETY: `name` is NUL-terminated UTF-16; no security attributes (the default DACL
    // lets other users read only, and [`control_peer_is_me`] refuses them anyway).
    let handle = unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            mode,
            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            PIPE_UNLIMITED_INSTANCES,
            4096,
            4096,
            0,
            std::ptr::null(),
        )
    };
    owned(handle).ok_or_else(io::Error::last_os_error)
}

impl ControlListener {
    /// The connections, one at a time, as they come.
    pub fn incoming(&self) -> impl Iterator<Item = io::Result<ControlStream>> + '_ {
        std::iter::repeat_with(move || self.accept())
    }

    fn accept(&self) -> io::Result<ControlStream> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let pipe = match waiting.take() {
            Some(pipe) => pipe,
            None => pipe_instance(&self.name, false)?,
        };
        // SAFETY: our pipe handle; a synchronous wait for a client.
        let connected =
            unsafe { ConnectNamedPipe(pipe.as_raw_handle() as HANDLE, std::ptr::null_mut()) } != 0
                || unsafe { GetLastError() } == ERROR_PIPE_CONNECTED;
        *waiting = pipe_instance(&self.name, false).ok();
        if !connected {
            return Err(io::Error::last_os_error());
        }
        Ok(ControlStream::new(File::from(pipe), true))
    }
}

/// Connects to the control channel whose marker is `path`; `NotFound` when no dictation
/// process listens.
pub(crate) fn control_connect(path: &Path) -> io::Result<ControlStream> {
    let name = pipe_name(path);
    for _ in 0..10 {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&name)
        {
            Ok(pipe) => return Ok(ControlStream::new(pipe, false)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => {
                // SAFETY: a NUL-terminated name; waits at most 500 ms for a free instance.
                unsafe { WaitNamedPipeW(wide(&name).as_ptr(), 500) };
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        "the dictation process is busy",
    ))
}

/// Listens on the control channel whose marker is `path`: writes the marker, then makes
/// the pipe's first instance (refused if another process already made that pipe).
pub(crate) fn control_bind(path: &Path) -> io::Result<ControlListener> {
    let name = wide(&pipe_name(path));
    let first = pipe_instance(&name, true)?;
    File::create(path)?;
    Ok(ControlListener {
        name,
        waiting: std::sync::Mutex::new(Some(first)),
    })
}

/// The user a process runs as: a buffer that starts with its `TOKEN_USER` (u64s, for the
/// structure's alignment); `None` when it cannot be read.
fn user_of(process: HANDLE) -> Option<Vec<u64>> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: a process handle and a place for the token handle.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return None;
    }
    let token = owned(token)?;
    let mut buffer = vec![0u64; 64];
    let mut needed = 0u32;
    // SAFETY: a buffer of the length given; the SID it points into stays in the buffer.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle() as HANDLE,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            (buffer.len() * 8) as u32,
            &mut needed,
        )
    } != 0;
    ok.then_some(buffer)
}

/// `Ok` when the client of the pipe `stream` is this user; else why not.
pub(crate) fn control_peer_is_me(stream: &ControlStream) -> Result<(), crate::platform::PeerError> {
    use crate::platform::PeerError::{Foreign, Unidentified};
    let mut pid = 0u32;
    // SAFETY: our pipe handle and a place for the pid.
    if unsafe { GetNamedPipeClientProcessId(stream.pipe.as_raw_handle() as HANDLE, &mut pid) } == 0
    {
        return Err(Unidentified(io::Error::last_os_error().to_string()));
    }
    // SAFETY: a plain open by pid; closed by `owned`.
    let peer = owned(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) })
        .ok_or_else(|| Unidentified(format!("process {pid} could not be opened")))?;
    let (Some(theirs), Some(mine)) = (
        user_of(peer.as_raw_handle() as HANDLE),
        // SAFETY: the pseudo-handle of this process needs no closing.
        user_of(unsafe { GetCurrentProcess() }),
    ) else {
        return Err(Unidentified(format!(
            "the user of process {pid} could not be read"
        )));
    };
    // SAFETY: each buffer starts with a TOKEN_USER whose SID lies inside that buffer.
    let same = unsafe {
        let theirs = &*(theirs.as_ptr() as *const TOKEN_USER);
        let mine = &*(mine.as_ptr() as *const TOKEN_USER);
        EqualSid(theirs.User.Sid, mine.User.Sid) != 0
    };
    if same {
        Ok(())
    } else {
        Err(Foreign {
            who: format!("process {pid}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::path::PathBuf;

    use crate::platform::create_private_dir;

    #[test]
    fn each_runtime_dir_has_a_pipe_of_its_own() {
        let a = pipe_name(Path::new(
            r"C:\Users\a\AppData\Local\yazses\run\dictate.pipe",
        ));
        let b = pipe_name(Path::new(
            r"C:\Users\b\AppData\Local\yazses\run\dictate.pipe",
        ));
        assert_ne!(a, b);
        assert!(a.starts_with(r"\\.\pipe\yazses-dictate-"), "{a}");
    }

    /// A control channel bound in a scratch runtime dir named `name`; its marker.
    fn bound(name: &str) -> (PathBuf, ControlListener) {
        let dir = std::env::temp_dir().join(format!("yazses-{name}-{}", std::process::id()));
        create_private_dir(&dir).unwrap();
        let marker = dir.join(CONTROL_NAME);
        let listener = control_bind(&marker).unwrap();
        (marker, listener)
    }

    #[test]
    fn a_command_goes_through_the_pipe_and_its_answer_comes_back() {
        let (marker, listener) = bound("pipe");
        assert!(marker.is_file());
        let client = std::thread::spawn(move || {
            let mut stream = control_connect(&marker).unwrap();
            stream.write_all(b"status\n").unwrap();
            let mut answer = String::new();
            BufReader::new(&stream).read_line(&mut answer).unwrap();
            answer
        });
        let stream = listener.incoming().next().unwrap().unwrap();
        control_peer_is_me(&stream).unwrap();
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line).unwrap();
        assert_eq!(line, "status\n");
        (&stream).write_all(b"idle\n").unwrap();
        drop(stream);
        assert_eq!(client.join().unwrap(), "idle\n");
    }

    #[test]
    fn a_client_that_says_nothing_is_given_up_on_after_the_read_timeout() {
        let (marker, listener) = bound("mute");
        let (done, quit) = std::sync::mpsc::channel::<()>();
        let client = std::thread::spawn(move || {
            let _stream = control_connect(&marker).unwrap();
            let _ = quit.recv();
        });
        let stream = listener.incoming().next().unwrap().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let started = std::time::Instant::now();
        let err = BufReader::new(&stream)
            .read_line(&mut String::new())
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
        assert!(started.elapsed() >= Duration::from_millis(200));
        done.send(()).unwrap();
        client.join().unwrap();
    }

    #[test]
    fn nothing_listening_is_not_found() {
        let marker = std::env::temp_dir().join("yazses-nobody-listens.pipe");
        let err = control_connect(&marker).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    }
}
