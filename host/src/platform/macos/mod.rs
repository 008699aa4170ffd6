//! What macOS needs beyond the POSIX side in `unix/`: the Microphone permission.

pub mod microphone;
