//! Who is on the other end of the control socket: the kernel's word for the peer's user id,
//! through the call each system has for it.

use std::io;

use super::ControlStream;

/// The effective user id of the process that connected `stream`.
#[cfg(not(target_os = "macos"))]
pub(super) fn peer_uid(stream: &ControlStream) -> io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

/// The effective user id of the process that connected `stream` (`getpeereid`, which
/// macOS and the BSDs have instead of Linux's `SO_PEERCRED`).
#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
pub(super) fn peer_uid(stream: &ControlStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: a connected socket we hold open for the call, and two places for the ids.
    if unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_of_a_socket_pair_is_this_user() {
        let (ours, _theirs) = ControlStream::pair().unwrap();
        assert_eq!(
            peer_uid(&ours).unwrap(),
            rustix::process::geteuid().as_raw()
        );
    }
}
