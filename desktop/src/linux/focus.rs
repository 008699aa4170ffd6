//! The window a dictation is meant for, on X11: the one with the keyboard focus when the
//! dictation began. If it is closed before the text is ready, the focus has moved to
//! whatever the window manager chose (a terminal, another document), so the text is not
//! typed there; it is kept for `yazses dictate last` instead.
//!
//! Wayland gives clients no way to know the focused window, so there the text goes
//! wherever the focus is when it is ready.

use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::ErrorKind;
use x11rb::protocol::xproto::{ConnectionExt as _, Window};

use crate::deliver::DeliverError;

/// The focus when the dictation began; `None` when no window had it (the focus follows the
/// pointer, or nothing is focused), and then nothing is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aim(Option<Window>);

impl Aim {
    /// The window with the keyboard focus now.
    pub fn now(conn: &impl Connection) -> Aim {
        let focus = conn
            .get_input_focus()
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .map(|reply| reply.focus);
        // 0 is None and 1 PointerRoot: no window of its own.
        Aim(focus.filter(|&w| w > 1))
    }

    /// Fails with [`DeliverError::TargetGone`] when the window aimed at no longer exists.
    pub fn still_there(self, conn: &impl Connection) -> Result<(), DeliverError> {
        let Some(window) = self.0 else {
            return Ok(());
        };
        let answer = conn
            .get_window_attributes(window)
            .map_err(|e| DeliverError::Failed(format!("asking the X server for the window: {e}")))?
            .reply();
        match answer {
            Ok(_) => Ok(()),
            Err(ReplyError::X11Error(e)) if e.error_kind == ErrorKind::Window => {
                Err(DeliverError::TargetGone)
            }
            Err(e) => Err(DeliverError::Failed(format!(
                "asking the X server for the window: {e}"
            ))),
        }
    }
}
