//! What each checked key allows: the range the check applies and the words that say it,
//! side by side, so the refusal and the configuration reference cannot drift apart.

use std::ops::RangeInclusive;
use std::path::Path;

use super::{Config, ConfigError, SourceKind};

/// One checked key.
pub(super) struct Rule {
    /// `table.key`.
    pub key: &'static str,
    /// What it allows, in words: the refusal's and the reference's text.
    pub allows: &'static str,
    /// The value as written, when it breaks the rule.
    broken: fn(&Config) -> Option<String>,
}

/// `value` as written, when it lies outside `range`.
fn outside<T: PartialOrd + ToString>(value: T, range: RangeInclusive<T>) -> Option<String> {
    (!range.contains(&value)).then(|| value.to_string())
}

/// Every checked key, in the order a config is checked (the first broken rule is named).
pub(super) const RULES: &[Rule] = &[
    Rule {
        key: "mcp.ask_human_per_hour",
        allows: "1 to 60",
        broken: |c| outside(c.mcp.ask_human_per_hour, 1..=60),
    },
    Rule {
        key: "mcp.ask_human_end_silence_s",
        allows: "0.3 to 10 seconds",
        broken: |c| outside(c.mcp.ask_human_end_silence_s, 0.3..=10.0),
    },
    Rule {
        key: "mcp.ask_human_no_speech_s",
        allows: "1 to 120 seconds",
        broken: |c| outside(c.mcp.ask_human_no_speech_s, 1.0..=120.0),
    },
    Rule {
        key: "mcp.ask_human_timeout_s",
        allows: "1 to 120 seconds",
        broken: |c| outside(c.mcp.ask_human_timeout_s, 1..=120),
    },
    Rule {
        key: "mcp.ask_human_queue_s",
        allows: "0 to 600 seconds",
        broken: |c| outside(c.mcp.ask_human_queue_s, 0.0..=600.0),
    },
    Rule {
        key: "speak.timeout_s",
        allows: "0 (from the text's length) to 600 seconds",
        broken: |c| outside(c.speak.timeout_s, 0.0..=600.0),
    },
    Rule {
        key: "transcribe.beam_size",
        allows: "1 to 16",
        broken: |c| outside(c.transcribe.beam_size, 1..=16),
    },
    Rule {
        key: "transcribe.threads",
        allows: "0 (one per core) to 256",
        broken: |c| outside(c.transcribe.threads, 0..=256),
    },
    Rule {
        key: "transcribe.parallel",
        allows: "0 (from the cores) to 16",
        broken: |c| outside(c.transcribe.parallel, 0..=16),
    },
    Rule {
        key: "transcribe.max_duration_s",
        allows: "at least 1 second",
        broken: |c| outside(c.transcribe.max_duration_s, 1..=u64::MAX),
    },
    Rule {
        key: "transcribe.max_file_mib",
        allows: "at least 1 MiB",
        broken: |c| outside(c.transcribe.max_file_mib, 1..=u64::MAX),
    },
    Rule {
        key: "dictate.trigger",
        allows: "at least one of dongle, hotkey, command",
        broken: |c| c.dictate.trigger.is_empty().then(|| "[]".to_owned()),
    },
    Rule {
        key: "dictate.tap_ms",
        allows: "50 to 2000 milliseconds",
        broken: |c| outside(c.dictate.tap_ms, 50..=2000),
    },
    Rule {
        key: "dictate.end_silence_s",
        allows: "0.3 to 10 seconds",
        broken: |c| outside(c.dictate.end_silence_s, 0.3..=10.0),
    },
    Rule {
        key: "dictate.max_s",
        allows: "1 to 120 seconds",
        broken: |c| outside(c.dictate.max_s, 1..=120),
    },
    Rule {
        key: "turn.check_after_ms",
        allows: "100 to 2000 milliseconds, and at most turn.max_end_silence_ms",
        broken: |c| {
            let t = &c.turn;
            outside(t.check_after_ms, 100..=t.max_end_silence_ms.min(2000))
        },
    },
    Rule {
        key: "turn.max_end_silence_ms",
        allows: "500 to 10000 milliseconds",
        broken: |c| outside(c.turn.max_end_silence_ms, 500..=10_000),
    },
    Rule {
        key: "turn.min_end_silence_ms",
        allows: "100 milliseconds to turn.max_end_silence_ms",
        broken: |c| outside(c.turn.min_end_silence_ms, 100..=c.turn.max_end_silence_ms),
    },
    Rule {
        key: "turn.closed_end_silence_ms",
        allows: "100 milliseconds to turn.max_end_silence_ms",
        broken: |c| {
            outside(
                c.turn.closed_end_silence_ms,
                100..=c.turn.max_end_silence_ms,
            )
        },
    },
    Rule {
        key: "turn.prosody_threshold",
        allows: "a probability from 0 to 1",
        broken: |c| outside(c.turn.prosody_threshold, 0.0..=1.0),
    },
    Rule {
        key: "audio.file",
        allows: "a recording's path when audio.source = \"file\"",
        broken: |c| {
            (c.audio.source == SourceKind::File && c.audio.file.as_os_str().is_empty())
                .then(|| "\"\"".to_owned())
        },
    },
];

/// What `key` allows, in words, when a rule checks it.
pub(super) fn allows(key: &str) -> Option<&'static str> {
    RULES.iter().find(|r| r.key == key).map(|r| r.allows)
}

impl Config {
    /// Checks every value's range; the first bad one is named.
    pub fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        match RULES.iter().find_map(|r| Some((r, (r.broken)(self)?))) {
            Some((rule, value)) => Err(ConfigError::Invalid {
                path: path.to_owned(),
                key: rule.key,
                value,
                rule: rule.allows,
            }),
            None => Ok(()),
        }
    }
}
