//! What macOS needs beyond the POSIX side in `unix/`: the desktop of a dictation, and the
//! Microphone permission.

pub mod desktop;
mod hotkey;
pub mod microphone;
