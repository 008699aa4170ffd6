//! The desktop side of a yazses dictation: what types or pastes the text into the focused
//! window, and the hotkey that starts and ends a dictation. Each system has the same names
//! ([`typer`], [`paster`], [`Listener`] with `bind(&Chord)`, `next_press` and `describe`), so the
//! dictation above does not know which desktop it runs on.
//!
//! - [`chord`]: how `[dictate] hotkey` is spelled, the same on every desktop.
//! - [`deliver`]: what every output is ([`Deliver`]), and stdout.
//! - [`hotkey`]: why a hotkey could not be bound or stopped.
//! - `linux` (Linux and the BSDs: X11 and Wayland), `windows`, `macos` (built, never run):
//!   the typers, the pasters and the hotkeys.
//!
//! It knows nothing of audio, models or the MCP server: the crate graph keeps it that way.

pub mod chord;
pub mod deliver;
pub mod hotkey;

#[cfg(any(windows, target_os = "macos"))]
mod hotkey_thread;

#[cfg(all(unix, not(target_os = "macos")))]
pub mod linux;
#[cfg(all(unix, not(target_os = "macos")))]
pub use linux::{Listener, paster, typer};

#[cfg(windows)]
pub mod windows;
#[cfg(windows)]
pub use windows::{Listener, paster, typer};

#[cfg(target_os = "macos")]
pub mod macos;
#[cfg(target_os = "macos")]
pub use macos::{Listener, paster, typer};

pub use chord::Chord;
pub use deliver::{Deliver, DeliverError};
pub use hotkey::HotkeyError;
