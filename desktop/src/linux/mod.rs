//! The desktop of Linux and the BSDs, for dictation: X11 and Wayland.
//!
//! - [`session`]: whether the session runs X11 or Wayland.
//! - [`hotkey`]: the key that toggles a dictation, and its X11 grab.
//! - [`portal`]: the same key on Wayland, bound through the GlobalShortcuts portal.
//! - [`keymap`]: the X11 keyboard map the typers and the hotkey read.
//! - [`focus`]: the X11 window a dictation is meant for, and whether it is still there.
//! - [`paste`]: the X11 clipboard paste, which gives the clipboard back afterwards.
//! - [`wayland_paste`]: the same on Wayland, through `wl-clipboard` and `wtype`.
//! - [`output`]: the typers (X11 XTEST, Wayland `wtype`/`ydotool`), and the choice of
//!   typer or paster for the session.

pub mod focus;
pub mod hotkey;
pub mod keymap;
pub mod output;
pub mod paste;
pub mod portal;
pub mod session;
pub mod wayland_paste;

pub use hotkey::Listener;
pub use output::{paster, typer};

/// Whether `program` is on the `PATH`.
pub(crate) fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}
