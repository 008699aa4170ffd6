//! `config.toml`: every key has a default, unknown keys are warned about, bad values are
//! refused at start with the key named.
//!
//! The file lives in the platform config directory (`~/.config/yazses/config.toml` on
//! Linux) unless `--config PATH` names another. A missing file is the defaults.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// The global key, such as "ctrl+alt+space".
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
    /// the last argument when no argument holds `{text}`). Empty: the first of espeak-ng,
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

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the config file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not TOML, or a value of the wrong type.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, which names the key.
        message: String,
    },
    /// A value out of range.
    #[error("{path}: {key} = {value} is out of range: {rule}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key, `table.key`.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        rule: &'static str,
    },
}

/// The default config file's path.
pub fn default_path() -> PathBuf {
    directories::ProjectDirs::from("", "", "yazses")
        .map(|d| d.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from("yazses.toml"))
}

/// Loads the config from `path` (or the default path), warning about unknown keys on
/// stderr through `tracing` and refusing bad values.
pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
    load_with(path, |_| {})
}

/// Like [`load`], with `flags` applied over the file's values before they are checked, so
/// a command-line flag can supply what the file lacks.
pub fn load_with(
    path: Option<&Path>,
    flags: impl FnOnce(&mut Config),
) -> Result<Config, ConfigError> {
    let named = path.is_some();
    let path = path.map(Path::to_owned).unwrap_or_else(default_path);
    let text = match read_bounded(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if named {
                // Named on purpose (--config, YAZSES_CONFIG): a typo there would otherwise
                // turn every setting, ask_human included, back to its default unseen.
                tracing::warn!(path = %path.display(), "the config file does not exist; using the defaults");
            } else {
                tracing::debug!(path = %path.display(), "no config file; using the defaults");
            }
            let mut config = Config::default();
            flags(&mut config);
            config.validate(&path)?;
            return Ok(config);
        }
        Err(source) => return Err(ConfigError::Io { path, source }),
    };
    let (config, unknown) = parse(&text).map_err(|message| ConfigError::Parse {
        path: path.clone(),
        message,
    })?;
    for key in unknown {
        tracing::warn!(path = %path.display(), key, "unknown config key ignored");
    }
    let mut config = config;
    flags(&mut config);
    config.validate(&path)?;
    Ok(config)
}

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file that is a regular file of at most [`MAX_CONFIG_BYTES`]: a symlink to
/// `/dev/zero` must not fill the memory, nor a FIFO hold the start forever.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let not_regular = || {
        std::io::Error::other(
            "it is not a regular file (a device, a FIFO or a directory); give the path of a TOML file",
        )
    };
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    // Non-blocking, in case the path was swapped for a FIFO after the check; checked again
    // on the open file.
    let file = crate::platform::open_nonblocking(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {} KiB, which no config file needs",
            MAX_CONFIG_BYTES >> 10
        )));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("it is not UTF-8 text"))
}

/// Parses TOML text: the config, and the dotted names of keys it does not know.
pub fn parse(text: &str) -> Result<(Config, Vec<String>), String> {
    let value: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!("line {}: ", line_at(text, s.start)))
            .unwrap_or_default();
        format!("{line}{}", e.message())
    })?;
    let known = toml::Table::try_from(Config::default()).expect("defaults serialise");
    let mut unknown = Vec::new();
    let mut cleaned = toml::Table::new();
    for (table, entries) in value {
        let Some(known_table) = known.get(&table).and_then(|t| t.as_table()) else {
            unknown.push(table);
            continue;
        };
        let Some(entries) = entries.as_table() else {
            return Err(format!("[{table}] must be a table"));
        };
        let mut kept = toml::Table::new();
        for (key, v) in entries {
            if known_table.contains_key(key) {
                kept.insert(key.clone(), v.clone());
            } else {
                unknown.push(format!("{table}.{key}"));
            }
        }
        cleaned.insert(table, toml::Value::Table(kept));
    }
    let config: Config = toml::Value::Table(cleaned.clone())
        .try_into()
        .map_err(|e: toml::de::Error| wrong_type(text, &cleaned, e.message()))?;
    Ok((config, unknown))
}

/// A value of the wrong type, named by its key and line: the whole-config error from serde
/// says only what was expected, so each key is tried alone over the defaults to find it.
fn wrong_type(text: &str, entries: &toml::Table, message: &str) -> String {
    let defaults = toml::Table::try_from(Config::default()).expect("defaults serialise");
    for (table, keys) in entries {
        let Some(keys) = keys.as_table() else {
            continue;
        };
        for (key, value) in keys {
            let mut one = defaults.clone();
            if let Some(t) = one.get_mut(table).and_then(|t| t.as_table_mut()) {
                t.insert(key.clone(), value.clone());
            }
            if let Err(e) = toml::Value::Table(one).try_into::<Config>() {
                let line = line_of(text, table, key)
                    .map(|n| format!("line {n}: "))
                    .unwrap_or_default();
                return format!("{line}{table}.{key}: {}", e.message());
            }
        }
    }
    message.to_owned()
}

/// The line (from 1) where `table.key` is set, from the parser's own spans.
fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    type Spanned<T> = toml::Spanned<T>;
    let doc: std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<Spanned<String>, toml::Value>,
    > = toml::from_str(text).ok()?;
    let span = doc.get(table)?.keys().find(|k| k.get_ref() == key)?.span();
    Some(line_at(text, span.start))
}

/// The line (from 1) that byte `offset` of `text` is on.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The configuration reference (`docs/configuration.md`), made from the types themselves:
/// every table and key with its documentation, its default and what it allows. A test
/// fails when the page on disk differs.
pub fn reference() -> String {
    let schema = schemars::schema_for!(Config);
    let root = schema.as_value();
    let defaults = toml::Value::try_from(Config::default()).expect("the defaults serialise");
    let lookup = |node: &serde_json::Value| -> serde_json::Value {
        match node.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => root
                .pointer(&r.replacen('#', "", 1))
                .cloned()
                .unwrap_or_default(),
            None => node.clone(),
        }
    };
    let text = |node: &serde_json::Value| -> String {
        node.get("description")
            .and_then(|d| d.as_str())
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = String::from(
        "# Configuration\n\n\
         Every key of `config.toml`, made from the code by `yazses::config::reference` \
         (`UPDATE_GOLDEN=1 cargo test -p yazses --lib config` rewrites this page; a test \
         fails when it is stale).\n\n\
         The file is `~/.config/yazses/config.toml` on Linux (`yazses config path`); \
         `--config PATH` or `YAZSES_CONFIG` names another. A missing file is the defaults; \
         every key may be left out; unknown keys are warned about; a value outside what \
         its key allows stops the program with the key named. `yazses config` prints the \
         effective configuration as TOML.\n",
    );
    let tables = root["properties"].as_object().cloned().unwrap_or_default();
    for (table, node) in &tables {
        out.push_str(&format!("\n## `[{table}]`\n\n{}\n\n", text(node)));
        out.push_str("| key | default | what | allowed |\n|---|---|---|---|\n");
        let keys = lookup(node)["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, node) in &keys {
            let default = defaults
                .get(table)
                .and_then(|t| t.get(key))
                .map(toml_words)
                .unwrap_or_default();
            let checked = RULES
                .iter()
                .find(|(k, _)| *k == format!("{table}.{key}"))
                .map(|(_, r)| (*r).to_owned());
            let allowed = variants(&lookup(&node["items"]), &lookup(node))
                .or(checked)
                .unwrap_or_else(|| of_type(node));
            out.push_str(&format!(
                "| `{key}` | `{default}` | {} | {} |\n",
                text(node).replace('|', "\\|"),
                allowed.replace('|', "\\|")
            ));
        }
    }
    out
}

/// What a key without a stated rule takes, from its schema's type.
fn of_type(node: &serde_json::Value) -> String {
    let kind = |n: &serde_json::Value| match n.get("type").and_then(|t| t.as_str()) {
        Some("boolean") => "`true` or `false`",
        Some("string") => "text",
        Some("integer") => "a whole number",
        Some("number") => "a number",
        _ => "a value of its type",
    };
    match node.get("type").and_then(|t| t.as_str()) {
        Some("array") => format!("a list, each {}", kind(&node["items"])),
        _ => kind(node).to_owned(),
    }
}

/// A default as TOML writes it; an `f32` key's value as the `f32` it is (0.1, not
/// 0.10000000149011612).
fn toml_words(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(x) if f64::from(*x as f32) == *x => format!("{:?}", *x as f32),
        v => v.to_string(),
    }
}

/// The values an enum key takes, with what each means, from its schema (or from its items'
/// schema, for a list of them).
fn variants(items: &serde_json::Value, node: &serde_json::Value) -> Option<String> {
    let one_of = node
        .get("oneOf")
        .or_else(|| items.get("oneOf"))?
        .as_array()?;
    let words: Vec<String> = one_of
        .iter()
        .filter_map(|v| {
            let value = v.get("const")?.as_str()?;
            let means = v.get("description").and_then(|d| d.as_str()).unwrap_or("");
            let means = means.split_whitespace().collect::<Vec<_>>().join(" ");
            Some(format!("`{value}`: {}", means.trim_end_matches('.')))
        })
        .collect();
    (!words.is_empty()).then(|| words.join("; "))
}

/// What each checked key allows, in words: the one text both [`Config::validate`]'s
/// refusals and the configuration reference ([`reference`]) say.
const RULES: &[(&str, &str)] = &[
    ("transcribe.beam_size", "1 to 16"),
    ("transcribe.max_duration_s", "at least 1 second"),
    ("transcribe.max_file_mib", "at least 1 MiB"),
    ("dictate.max_s", "1 to 120 seconds"),
    ("mcp.ask_human_per_hour", "1 to 60"),
    ("mcp.ask_human_end_silence_s", "0.3 to 10 seconds"),
    ("mcp.ask_human_no_speech_s", "1 to 120 seconds"),
    ("mcp.ask_human_timeout_s", "1 to 120 seconds"),
    ("mcp.ask_human_queue_s", "0 to 600 seconds"),
    (
        "speak.timeout_s",
        "0 (from the text's length) to 600 seconds",
    ),
    ("transcribe.threads", "0 (one per core) to 256"),
    ("transcribe.parallel", "0 (from the cores) to 16"),
    ("dictate.trigger", "at least one of dongle, hotkey, command"),
    ("dictate.tap_ms", "50 to 2000 milliseconds"),
    ("dictate.end_silence_s", "0.3 to 10 seconds"),
    (
        "turn.check_after_ms",
        "100 to 2000 milliseconds, and at most turn.max_end_silence_ms",
    ),
    ("turn.max_end_silence_ms", "500 to 10000 milliseconds"),
    (
        "turn.min_end_silence_ms",
        "100 milliseconds to turn.max_end_silence_ms",
    ),
    ("turn.prosody_threshold", "a probability from 0 to 1"),
    (
        "audio.file",
        "a recording's path when audio.source = \"file\"",
    ),
];

/// The rule of `key` in [`RULES`].
fn rule(key: &str) -> &'static str {
    RULES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, r)| *r)
        .unwrap_or("a value in range")
}

impl Config {
    /// Checks every value's range; the first bad one is named.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |key: &'static str, value: String| {
            Err(ConfigError::Invalid {
                path: path.to_owned(),
                key,
                value,
                rule: rule(key),
            })
        };
        let m = &self.mcp;
        if !(1..=60).contains(&m.ask_human_per_hour) {
            return bad("mcp.ask_human_per_hour", m.ask_human_per_hour.to_string());
        }
        if !(0.3..=10.0).contains(&m.ask_human_end_silence_s) {
            return bad(
                "mcp.ask_human_end_silence_s",
                m.ask_human_end_silence_s.to_string(),
            );
        }
        if !(1.0..=120.0).contains(&m.ask_human_no_speech_s) {
            return bad(
                "mcp.ask_human_no_speech_s",
                m.ask_human_no_speech_s.to_string(),
            );
        }
        if !(1..=120).contains(&m.ask_human_timeout_s) {
            return bad("mcp.ask_human_timeout_s", m.ask_human_timeout_s.to_string());
        }
        if !(0.0..=600.0).contains(&m.ask_human_queue_s) {
            return bad("mcp.ask_human_queue_s", m.ask_human_queue_s.to_string());
        }
        if !(0.0..=600.0).contains(&self.speak.timeout_s) {
            return bad("speak.timeout_s", self.speak.timeout_s.to_string());
        }
        let t = &self.transcribe;
        if !(1..=16).contains(&t.beam_size) {
            return bad("transcribe.beam_size", t.beam_size.to_string());
        }
        if t.threads > 256 {
            return bad("transcribe.threads", t.threads.to_string());
        }
        if t.parallel > 16 {
            return bad("transcribe.parallel", t.parallel.to_string());
        }
        if t.max_duration_s == 0 {
            return bad("transcribe.max_duration_s", "0".into());
        }
        if t.max_file_mib == 0 {
            return bad("transcribe.max_file_mib", "0".into());
        }
        let d = &self.dictate;
        if d.trigger.is_empty() {
            return bad("dictate.trigger", "[]".into());
        }
        if !(50..=2000).contains(&d.tap_ms) {
            return bad("dictate.tap_ms", d.tap_ms.to_string());
        }
        if !(0.3..=10.0).contains(&d.end_silence_s) {
            return bad("dictate.end_silence_s", d.end_silence_s.to_string());
        }
        if !(1..=120).contains(&d.max_s) {
            return bad("dictate.max_s", d.max_s.to_string());
        }
        let turn = &self.turn;
        if !(100..=2000).contains(&turn.check_after_ms)
            || turn.check_after_ms > turn.max_end_silence_ms
        {
            return bad("turn.check_after_ms", turn.check_after_ms.to_string());
        }
        if !(500..=10_000).contains(&turn.max_end_silence_ms) {
            return bad(
                "turn.max_end_silence_ms",
                turn.max_end_silence_ms.to_string(),
            );
        }
        if !(100..=turn.max_end_silence_ms).contains(&turn.min_end_silence_ms) {
            return bad(
                "turn.min_end_silence_ms",
                turn.min_end_silence_ms.to_string(),
            );
        }
        if !(0.0..=1.0).contains(&turn.prosody_threshold) {
            return bad("turn.prosody_threshold", turn.prosody_threshold.to_string());
        }
        if self.audio.source == SourceKind::File && self.audio.file.as_os_str().is_empty() {
            return bad("audio.file", "\"\"".into());
        }
        Ok(())
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_configuration_md_is_generated_from_the_code() {
        let page = reference();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md");
        if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
            std::fs::write(&path, &page).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == page,
            "docs/configuration.md is stale; regenerate it with UPDATE_GOLDEN=1 cargo test -p yazses --lib config"
        );
    }

    #[test]
    fn every_key_in_the_reference_has_a_description_and_every_rule_a_key() {
        let page = reference();
        for line in page.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split(" | ").collect();
            assert!(cells.len() >= 4 && !cells[2].trim().is_empty(), "{line}");
        }
        for (key, _) in RULES {
            let (table, name) = key.split_once('.').unwrap();
            assert!(
                page.contains(&format!("## `[{table}]`"))
                    && page.contains(&format!("| `{name}` |")),
                "{key} has a rule but no row"
            );
        }
    }

    #[test]
    fn an_empty_file_is_the_defaults_and_ask_human_is_off() {
        let (c, unknown) = parse("").unwrap();
        assert_eq!(c, Config::default());
        assert!(unknown.is_empty());
        assert!(!c.mcp.ask_human);
        assert_eq!(c.mcp.ask_human_per_hour, 3);
        assert_eq!(c.mcp.ask_human_end_silence_s, 1.2);
        assert_eq!(c.mcp.ask_human_no_speech_s, 8.0);
    }

    #[test]
    fn set_keys_are_read_and_unknown_keys_reported_not_fatal() {
        let (c, unknown) = parse(
            "[mcp]\nask_human = true\nask_humn_per_hour = 9\n[audio]\nsource = \"file\"\nfile = \"a.wav\"\n[colour]\nx = 1\n",
        )
        .unwrap();
        assert!(c.mcp.ask_human);
        assert_eq!(c.audio.source, SourceKind::File);
        assert_eq!(unknown, ["colour", "mcp.ask_humn_per_hour"]);
    }

    #[test]
    fn bad_values_are_refused_with_the_key_named() {
        let (c, _) = parse("[mcp]\nask_human_per_hour = 0\n").unwrap();
        let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("mcp.ask_human_per_hour = 0"), "{err}");
        let err = parse("[mcp]\nask_human = \"yes\"\n").unwrap_err();
        assert!(err.contains("bool") || err.contains("boolean"), "{err}");
        let err = parse("[audio]\nsource = \"radio\"\n").unwrap_err();
        assert!(err.contains("radio"), "{err}");
    }

    /// A value of the wrong type is named by its key and its line.
    #[test]
    fn a_wrong_type_or_bad_syntax_names_the_key_and_the_line() {
        let err =
            parse("[mcp]\nask_human = true\n\n[transcribe]\nthreads = \"four\"\n").unwrap_err();
        assert!(
            err.starts_with("line 5: transcribe.threads: invalid type: string \"four\""),
            "{err}"
        );
        let err = parse("[speak]\ncommand = \"espeak-ng\"\n").unwrap_err();
        assert!(err.starts_with("line 2: speak.command: "), "{err}");
        let err = parse("[mcp]\n\nask_human = yes\n").unwrap_err();
        assert!(err.starts_with("line 3: "), "{err}");
    }

    #[test]
    fn a_config_path_that_is_a_device_a_fifo_or_huge_is_refused_at_once_naming_it() {
        let dir = std::env::temp_dir().join(format!("yazses-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let zero = dir.join("zero.toml");
        let _ = std::fs::remove_file(&zero);
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let fifo = dir.join("fifo.toml");
        let _ = std::fs::remove_file(&fifo);
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let huge = dir.join("huge.toml");
        std::fs::write(&huge, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
        for (path, why) in [
            (&zero, "not a regular file"),
            (&fifo, "not a regular file"),
            (&huge, "larger than 1024 KiB"),
        ] {
            let t = std::time::Instant::now();
            let err = load(Some(path)).unwrap_err().to_string();
            assert!(
                err.contains(&path.display().to_string()) && err.contains(why),
                "{err}"
            );
            assert!(
                t.elapsed() < std::time::Duration::from_secs(2),
                "{path:?} took {:?}",
                t.elapsed()
            );
        }
    }

    #[test]
    fn the_turn_policy_is_read_and_its_limits_named() {
        let (c, unknown) =
            parse("[turn]\nmode = \"smart\"\ncheck_after_ms = 250\nmax_end_silence_ms = 2500\n")
                .unwrap();
        assert!(unknown.is_empty());
        assert_eq!(c.turn.mode, crate::turn::TurnMode::Smart);
        assert_eq!(
            (c.turn.check_after_ms, c.turn.max_end_silence_ms),
            (250, 2500)
        );
        c.validate(Path::new("c.toml")).unwrap();
        let (c, _) = parse("[turn]\nmin_end_silence_ms = 4000\n").unwrap();
        let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("turn.min_end_silence_ms = 4000"), "{err}");
        let (c, _) = parse("[turn]\ncheck_after_ms = 900\nmax_end_silence_ms = 600\n").unwrap();
        let err = c.validate(Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("turn.check_after_ms = 900"), "{err}");
        assert!(parse("[turn]\nmode = \"psychic\"\n").is_err());
    }

    #[test]
    fn the_effective_config_round_trips() {
        let c = Config::default();
        assert_eq!(parse(&c.to_toml()).unwrap().0, c);
    }
}
