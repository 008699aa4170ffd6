//! The tools' parameter and result types; their JSON Schemas are what `tools/list` shows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::transcribe::Segment;

/// Spoken languages the `transcribe` tool accepts (whisper's most used), or `auto`. The
/// schema lists the codes; the English name of a language is taken too, in any case
/// (`"German"` for `de`), as the command line takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Language {
    Auto,
    En,
    De,
    Fr,
    Es,
    It,
    Pt,
    Nl,
    Pl,
    Ru,
    Uk,
    Tr,
    Ar,
    Fa,
    He,
    Hi,
    Zh,
    Ja,
    Ko,
    Sv,
    Da,
    No,
    Fi,
    Cs,
    El,
    Ro,
    Hu,
    Id,
    Vi,
    Th,
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Language, D::Error> {
        let given = String::deserialize(d)?;
        let trimmed = given.trim().to_lowercase();
        let code = crate::transcribe::language_named(&trimmed).map_or(trimmed.as_str(), |l| l.0);
        Language::ALL
            .into_iter()
            .find(|l| l.code() == code)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "language {given:?} is not one this server takes; use a code such as en, de, fr (or its name, such as German), or auto"
                ))
            })
    }
}

impl Language {
    /// Every language, `auto` first.
    const ALL: [Language; 30] = [
        Language::Auto,
        Language::En,
        Language::De,
        Language::Fr,
        Language::Es,
        Language::It,
        Language::Pt,
        Language::Nl,
        Language::Pl,
        Language::Ru,
        Language::Uk,
        Language::Tr,
        Language::Ar,
        Language::Fa,
        Language::He,
        Language::Hi,
        Language::Zh,
        Language::Ja,
        Language::Ko,
        Language::Sv,
        Language::Da,
        Language::No,
        Language::Fi,
        Language::Cs,
        Language::El,
        Language::Ro,
        Language::Hu,
        Language::Id,
        Language::Vi,
        Language::Th,
    ];

    pub(super) fn code(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "auto".into())
    }
}

/// Arguments of `transcribe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscribeParams {
    /// Path of an audio file on this machine (WAV, FLAC, MP3 or Ogg/Vorbis; any rate and
    /// channel count). Relative paths are relative to the server's working directory.
    #[schemars(length(min = 1, max = 4096))]
    pub path: String,
    /// The spoken language, or `auto` (the default) to detect it. English-only models
    /// accept only `en` and `auto`. A language's English name (`German`) is taken for its
    /// code too.
    #[serde(default)]
    #[schemars(with = "Language", extend("default" = "auto"))]
    pub language: Option<Language>,
    /// A file with a damaged or missing tail is refused unless this is true; then what
    /// decodes is transcribed and `cut_short_ms` says where the file stops.
    #[serde(default)]
    pub partial: bool,
}

/// Result of `transcribe`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TranscribeOutput {
    /// The whole transcript.
    pub text: String,
    /// The transcript in timed pieces.
    pub segments: Vec<SegmentOut>,
    /// The length of the audio, in milliseconds.
    pub audio_ms: u64,
    /// Whether any speech was heard; `false` means the file holds none and `text` is empty.
    pub heard: bool,
    /// The detected or given language, with a multilingual model.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub language: Option<String>,
    /// Where a file cut short stops, in milliseconds (only with `partial`; absent for a
    /// whole file).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub cut_short_ms: Option<u64>,
}

/// One timed piece of a transcript.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SegmentOut {
    /// Start, in milliseconds from the start of the audio.
    pub start_ms: u64,
    /// End, in milliseconds.
    pub end_ms: u64,
    /// The words.
    pub text: String,
}

impl From<Segment> for SegmentOut {
    fn from(s: Segment) -> Self {
        SegmentOut {
            start_ms: s.start_ms,
            end_ms: s.end_ms,
            text: s.text,
        }
    }
}

/// Arguments of `ask_human`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskParams {
    /// The question, as it should be spoken: short, one question, answerable out loud.
    #[schemars(length(min = 1, max = 500))]
    pub question: String,
    /// The longest to listen for the answer, in seconds (1 to 120, default 30). Listening
    /// ends sooner, 1.2 s after the user stops talking, or after 8 s if nobody starts.
    /// Above 50 the call needs a progress token (clients often stop waiting at 60 s).
    // Declared as a plain integer: absent means the default, and a single-type schema is
    // the portable one (the inspector's --strict check flags ["integer", "null"]).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 120), extend("default" = 30))]
    pub timeout_s: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_is_taken_by_its_code_or_its_name_in_any_case() {
        let parse = |v: &str| serde_json::from_value::<Language>(serde_json::json!(v));
        assert_eq!(parse("en").unwrap(), Language::En);
        assert_eq!(parse("English").unwrap(), Language::En);
        assert_eq!(parse(" GERMAN ").unwrap(), Language::De);
        assert_eq!(parse("Auto").unwrap(), Language::Auto);
        let err = parse("Klingon").unwrap_err().to_string();
        assert!(
            err.contains("\"Klingon\" is not one this server takes"),
            "{err}"
        );
        // whisper knows Swahili, this server's list does not.
        assert!(parse("swahili").is_err());
    }
}
