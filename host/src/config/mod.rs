//! `config.toml`: every key has a default, unknown keys are warned about, bad values are
//! refused at start with the key named.
//!
//! The file lives in the platform config directory (`~/.config/yazses/config.toml` on
//! Linux) unless `--config PATH` names another. A missing file there is the defaults; a
//! file named on purpose that is missing is an error.
//!
//! Here the keys, their documentation and defaults; `load` reads and parses a file,
//! `rules` holds each checked key's range beside the words that describe it, and
//! `reference` writes `docs/configuration.md` from all three.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

mod load;
mod reference;
mod rules;
#[cfg(test)]
mod tests;

pub use load::{ConfigError, MAX_CONFIG_BYTES, default_path, load, load_with, parse};
pub use reference::reference;

/// The whole configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[mcp]`: the MCP server.
    pub mcp: Mcp,
    /// `[audio]`: where `ask_human` and `listen` hear the user.
    pub audio: AudioConfig,
    /// `[transcribe]`: the whisper model and decoding.
    pub transcribe: TranscribeConfig,
    /// `[speak]`: how questions are said out loud.
    pub speak: Speak,
    /// `[dictate]`: push-to-talk dictation.
    pub dictate: DictateConfig,
    /// `[turn]`: when an answer is over (`ask_human`, `yazses listen`).
    pub turn: crate::turn::TurnConfig,
}

/// `[mcp]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Mcp {
    /// Offer the `ask_human` tool at all (off by default: it reaches a person).
    pub ask_human: bool,
    /// Answers `ask_human` may collect per rolling hour (charged only when one was heard).
    pub ask_human_per_hour: u32,
    /// Trailing silence that ends an answer, in seconds.
    pub ask_human_end_silence_s: f64,
    /// How long to wait for an answer to begin, in seconds.
    pub ask_human_no_speech_s: f64,
    /// The listening limit when the caller gives none, in seconds.
    pub ask_human_timeout_s: u32,
    /// The longest a question waits for the microphone while another process's question
    /// (or a `yazses listen`) has it, in seconds.
    pub ask_human_queue_s: f64,
}

impl Default for Mcp {
    fn default() -> Self {
        Mcp {
            ask_human: false,
            ask_human_per_hour: 3,
            ask_human_end_silence_s: 1.2,
            ask_human_no_speech_s: 8.0,
            ask_human_timeout_s: 30,
            ask_human_queue_s: 20.0,
        }
    }
}

/// Capture sources.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A sound card input through cpal.
    #[default]
    Cpal,
    /// A recording played as if it were the microphone (tests, demos).
    File,
    /// The yazses USB dongle.
    Serial,
}

/// `[audio]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AudioConfig {
    /// Which source.
    pub source: SourceKind,
    /// The cpal input device by name; empty for the system default.
    pub device: String,
    /// With `source = "file"`: the recording to play.
    pub file: PathBuf,
    /// With `source = "file"`: play it at the pace of real time (off: as fast as it decodes).
    pub file_realtime: bool,
    /// With `source = "serial"`: the dongle's port; empty to find it by USB id.
    pub serial_port: String,
}

impl Default for AudioConfig {
    fn default() -> Self {
        AudioConfig {
            source: SourceKind::Cpal,
            device: String::new(),
            file: PathBuf::new(),
            file_realtime: true,
            serial_port: String::new(),
        }
    }
}

/// `[transcribe]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TranscribeConfig {
    /// Model name or path.
    pub model: String,
    /// Threads (0: one per core).
    pub threads: usize,
    /// Beam width for files (1: greedy).
    pub beam_size: u16,
    /// Longest file accepted, in seconds.
    pub max_duration_s: u64,
    /// Largest file accepted, in MiB.
    pub max_file_mib: u64,
    /// Files transcribed at once by one server (0: as many as the cores hold for
    /// `threads` each, up to 4); more calls wait their turn.
    pub parallel: usize,
}

impl Default for TranscribeConfig {
    fn default() -> Self {
        let limits = crate::audio::Limits::default();
        TranscribeConfig {
            model: crate::model::DEFAULT_MODEL.to_owned(),
            threads: 0,
            beam_size: 5,
            max_duration_s: limits.max_secs,
            max_file_mib: limits.max_bytes >> 20,
            parallel: 0,
        }
    }
}

/// What starts a dictation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// The dongle's button: hold to talk, or tap and let its end of speech end it.
    Dongle,
    /// A global key (`[dictate] hotkey`).
    Hotkey,
    /// Only the control socket (`yazses dictate toggle|start|stop`).
    Command,
}

/// Where dictated text goes.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OutputKind {
    /// Typed into the focused window (X11 XTEST; Wayland wtype or ydotool).
    #[default]
    Type,
    /// Put on the clipboard and pasted, the clipboard restored after.
    Paste,
    /// One line per utterance on stdout.
    Stdout,
}

/// `[dictate]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DictateConfig {
    /// What starts a dictation: one trigger or a list.
    #[serde(deserialize_with = "one_or_many")]
    pub trigger: Vec<Trigger>,
    /// Where the text goes.
    pub output: OutputKind,
    /// A press of the dongle's button shorter than this is a tap, in milliseconds.
    pub tap_ms: u64,
    /// The global key, such as "ctrl+alt+space" (`super` is the Windows key or Command; `cmd` and `option` also work).
    pub hotkey: String,
    /// Trailing silence that ends a dictation no release ends (a tap, a toggle), in seconds.
    pub end_silence_s: f64,
    /// The longest dictation, in seconds.
    pub max_s: u32,
}

impl Default for DictateConfig {
    fn default() -> Self {
        DictateConfig {
            trigger: vec![Trigger::Command],
            output: OutputKind::Type,
            tap_ms: 300,
            hotkey: "ctrl+alt+space".into(),
            end_silence_s: 2.0,
            max_s: 120,
        }
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Trigger>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(Trigger),
        Many(Vec<Trigger>),
    }
    match OneOrMany::deserialize(d).map_err(|_| {
        serde::de::Error::custom(
            "dictate.trigger must be \"dongle\", \"hotkey\", \"command\" or a list of them",
        )
    })? {
        OneOrMany::One(t) => Ok(vec![t]),
        OneOrMany::Many(ts) => Ok(ts),
    }
}

/// `[speak]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Speak {
    /// Whether questions are spoken. Off: they are only printed (on the server's stderr),
    /// and each answer says so.
    pub enabled: bool,
    /// The command and its arguments; `{text}` is replaced by what to say (or the text is
    /// the last argument when no argument holds `{text}` or `YAZSES_SPEAK_TEXT`, the
    /// environment variable the command also finds it in). Empty: the first of espeak-ng,
    /// spd-say, say (macOS) or PowerShell's SAPI that is installed.
    pub command: Vec<String>,
    /// The longest the command may take, in seconds; 0: from the text's length (10 s
    /// plus 1 s per 10 characters, at most 60 s). Past it the command is killed.
    pub timeout_s: f64,
}

impl Default for Speak {
    fn default() -> Self {
        Speak {
            enabled: true,
            command: Vec::new(),
            timeout_s: 0.0,
        }
    }
}

impl Config {
    /// The effective configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("the config serialises")
    }

    /// How many files one process transcribes at once.
    pub fn parallel(&self) -> usize {
        match self.transcribe.parallel {
            0 => crate::transcribe::places_for(self.transcribe.threads),
            n => n,
        }
    }

    /// The file caps of `[transcribe]`.
    pub fn limits(&self) -> crate::audio::Limits {
        crate::audio::Limits {
            accept_partial: false,
            max_bytes: self.transcribe.max_file_mib.saturating_mul(1 << 20),
            max_secs: self.transcribe.max_duration_s,
        }
    }
}
