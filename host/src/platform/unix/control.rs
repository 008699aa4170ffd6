//! The dictation control channel on Unix: a socket in the runtime directory, mode 0600,
//! each peer's user id checked.

mod peer;

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// One connection on the dictation control channel.
pub(crate) type ControlStream = std::os::unix::net::UnixStream;

/// The dictation control channel, listening.
pub(crate) type ControlListener = std::os::unix::net::UnixListener;

/// The control channel's name in the runtime directory: a Unix socket file.
pub(crate) const CONTROL_NAME: &str = "dictate.sock";

/// Connects to the control channel at `path`.
pub(crate) fn control_connect(path: &Path) -> io::Result<ControlStream> {
    ControlStream::connect(path)
}

/// Listens on the control channel at `path`, open to this user alone (mode 0600, in the
/// 0700 runtime directory).
pub(crate) fn control_bind(path: &Path) -> io::Result<ControlListener> {
    let listener = ControlListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// `Ok` when the peer of `stream` is this user; else why not.
pub(crate) fn control_peer_is_me(stream: &ControlStream) -> Result<(), crate::platform::PeerError> {
    let me = rustix::process::geteuid().as_raw();
    match peer::peer_uid(stream) {
        Ok(uid) if uid == me => Ok(()),
        Ok(uid) => Err(crate::platform::PeerError::Foreign {
            who: format!("user id {uid}"),
        }),
        Err(e) => Err(crate::platform::PeerError::Unidentified(e.to_string())),
    }
}
