//! `yazses`: the hosted runner around [`yazses_core`].
//!
//! - [`audio`]: audio files into 16 kHz mono `i16`.
//! - [`analysis`]: the detector and the end-of-speech policy over a recording
//!   (`yazses vad`).
//! - [`plot`]: a picture of an analysis (`yazses vad --plot`).
//! - [`capture`]: one capture from a source (cpal [`mic`], a file, the [`serial`] dongle)
//!   through the detector and the end-of-speech policy.
//! - [`cli`]: the `yazses` command line.
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
pub mod audio;
pub mod capture;
pub mod cli;
pub mod config;
pub mod coord;
pub mod mcp;
pub mod mic;
pub mod model;
pub mod plot;
pub mod serial;
pub mod speak;
pub mod transcribe;
