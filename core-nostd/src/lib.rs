//! `yazses-core`: the part of yazses that runs the same on a desktop and on a USB
//! microphone's MCU, bit for bit.
//!
//! - [`frame`]: the audio contract (16 kHz mono `i16`, 10 ms frames) and a [`Framer`](frame::Framer).
//! - [`level`]: frame energy as a fixed-point `log2` (Q8).
//! - [`vad`]: the fixed-point energy voice-activity detector, its presets and calibration.
//! - [`endpoint`]: the end-of-speech policy: when a capture stops, and why.
//! - [`end`]: why a capture ended, one type from the policy through the wire to a result.
//! - [`autostop`]: both driven by a frame clock.
//! - [`time`]: the caller's clock; nothing here reads one.
//! - [`dongle`]: the USB dongle's capture-and-signal state machine (firmware and simulator).
//! - [`wire`]: the dongle's wire protocol (postcard + CRC-32 + COBS) and its streaming reader.
//!
//! No allocation, no floats on the per-frame path, no `std` (features: `std` for
//! `std::time` conversions, `serde`, `defmt`).
//!
//! ```
//! use yazses_core::autostop::Autostop;
//! use yazses_core::endpoint::{EndpointConfig, StopReason};
//! use yazses_core::time::Instant;
//! use yazses_core::vad::Vad;
//!
//! let mut capture = Autostop::new(Vad::DEFAULT, EndpointConfig::default(), Instant::ZERO);
//! let room = [0i16; 1600]; // 100 ms of digital silence, chunk after chunk
//! let stop = loop {
//!     if let Some(stop) = capture.push_samples(&room, |_| {}) {
//!         break stop;
//!     }
//! };
//! assert_eq!(stop.reason, StopReason::NoSpeech);
//! assert_eq!(stop.at, Instant::from_millis(8000));
//! ```
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "std")]
extern crate std;

pub mod autostop;
pub mod dongle;
pub mod end;
pub mod endpoint;
pub mod frame;
pub mod level;
pub mod time;
pub mod vad;
pub mod wire;
