//! What macOS needs beyond the POSIX side in `unix/`: the desktop of a dictation.

pub mod desktop;
