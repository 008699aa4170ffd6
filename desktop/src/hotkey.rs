//! Why a hotkey could not be bound or stopped being heard, the same on every desktop, so
//! a caller can tell a spelling to fix from a desktop without a way to bind keys.

use super::chord::ChordError;

/// Why the hotkey could not be bound, or stopped passing on presses. Each variant's text
/// says what the user can do.
#[derive(Debug, thiserror::Error)]
pub enum HotkeyError {
    /// `[dictate] hotkey` is not a chord yazses can read.
    #[error(transparent)]
    Spelling(#[from] ChordError),
    /// This session offers no way to bind a key: no display, no GlobalShortcuts portal.
    #[error("{0}")]
    NoDesktop(String),
    /// The key cannot be had: another program holds it, no key on this keyboard types
    /// it, or the user declined it in the desktop's dialog.
    #[error("{0}")]
    Unavailable(String),
    /// The system has not allowed yazses to watch the keyboard.
    #[error("{0}")]
    Denied(String),
    /// The desktop failed while binding or watching the key.
    #[error("{0}")]
    Failed(String),
    /// Presses stopped coming: the display, the portal or the watching thread went away.
    #[error("{0}")]
    Ended(String),
}
