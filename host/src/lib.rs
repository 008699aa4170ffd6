//! `yazses`: the hosted runner around [`yazses_core`].
//!
//! - [`audio`]: audio files into 16 kHz mono `i16` (the `yazses-audio` crate).
//! - [`analysis`]: the detector and the end-of-speech policy over a recording
//!   (`yazses vad`).
//! - [`plot`]: a picture of an analysis (`yazses vad --plot`).
//! - [`source`]: where frames come from (a file, cpal, the dongle), with typed errors.
//! - [`capture`]: one capture from a source through the detector and the end-of-speech
//!   policy (a pure machine and its blocking driver).
//! - [`coord`]: the microphone lease, the queue and the interrupt budget shared by every
//!   yazses process of the user.
//! - [`session`]: the microphone lease around one capture: lease, open the source,
//!   capture, close it, release.
//! - [`hear`]: the one way to hear the user (`ask_human`, `yazses listen`, dictation): a
//!   request, the session, the end of turn, the transcript.
//! - [`turn`]: end of turn above the core's end of speech: stop soon after a finished
//!   answer, wait through a thinking pause.
//! - [`ask`]: `ask_human` and its restraints; [`mcp`]: the MCP server.
//! - [`cli`]: the `yazses` command line.
//! - [`pool`]: how whisper.cpp's worker threads wait, chosen in one place.
//! - `platform` (internal): every difference between operating systems, one file per
//!   system.
//!
//! ```no_run
//! use yazses::{analysis, audio};
//! use yazses_core::{endpoint::EndpointConfig, vad::Vad};
//!
//! let audio = audio::read_wav("answer.wav".as_ref())?;
//! let result = analysis::analyze(&audio.samples, Vad::DEFAULT, EndpointConfig::default());
//! println!("{}", result.report.to_text());
//! # Ok::<(), audio::AudioError>(())
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod ask;
pub use yazses_audio as audio;
pub mod capture;
pub mod cli;
pub mod config;
pub mod coord;
pub mod cpu;
#[cfg(feature = "dictate")]
pub mod dictate;
pub mod hear;
pub mod logging;
pub mod mcp;
pub use yazses_transcribe::model;
mod platform;
pub mod plot;
pub mod pool;
pub mod session;
pub mod source;
pub mod speak;
pub use yazses_transcribe::transcribe;
pub use yazses_transcribe::turn;
