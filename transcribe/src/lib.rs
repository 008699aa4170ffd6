//! Speech into text, and the end of a turn: the whisper engine and its passes over long
//! audio ([`transcribe`]), the models it reads and how they are fetched, imported and
//! checked ([`model`]), and the smart end of turn that reads the words and the voice while
//! the user pauses ([`turn`]). It knows audio only as `yazses-audio`'s 16 kHz samples, and
//! nothing of microphones, coordination, the MCP server or the desktop.

pub mod cancellation;
pub mod model;
pub mod transcribe;
pub mod turn;

/// The audio crate, where this crate's paths name it.
pub(crate) use yazses_audio as audio;
