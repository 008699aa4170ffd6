//! Where logs go and what they may hold: stderr only, at the level `YAZSES_LOG` asks for
//! (`warn` by default), and never what the user said or what a file contains unless
//! `YAZSES_LOG_CONTENT=1` asks for that too.
//!
//! Content reaches logs through two libraries' debug output: the MCP SDK logs whole
//! messages (tool arguments, transcripts, answers), and whisper.cpp logs each decoded
//! token. Both are held to INFO unless content is asked for; their INFO lines hold no
//! content. yazses's own logs never carry a transcript at any level.

use std::io::IsTerminal;

use tracing::Level;
use tracing_subscriber::filter::{EnvFilter, FilterFn};
use tracing_subscriber::prelude::*;

/// Log targets whose output above INFO carries content.
const CONTENT_TARGETS: [&str; 2] = ["rmcp", "whisper_rs::whisper_logging_hook"];

/// Whether an event may be logged when content is not asked for.
pub fn without_content(target: &str, level: &Level) -> bool {
    *level <= Level::INFO
        || !CONTENT_TARGETS
            .iter()
            .any(|t| target == *t || target.strip_prefix(t).is_some_and(|r| r.starts_with("::")))
}

/// Whether the environment asks for content in logs (`YAZSES_LOG_CONTENT=1`).
pub fn content_allowed() -> bool {
    std::env::var_os("YAZSES_LOG_CONTENT").is_some_and(|v| v == "1")
}

/// Whether an event is whisper.cpp reporting, as an error, a cancellation we asked for.
fn cancellation_noise(target: &str, level: &Level) -> bool {
    *level == Level::ERROR
        && target == "whisper_rs::whisper_logging_hook"
        && yazses_transcribe::cancellation::is_cancelling()
}

/// Tells the person running yazses of something they should fix, in the same form as the
/// binary's errors (`yazses: warning: ...`), on stderr: a line for a person, not a log
/// record, so it shows whatever `YAZSES_LOG` says.
pub fn warn_user(message: &str) {
    eprintln!("yazses: warning: {message}");
}

/// Installs the stderr logger.
pub fn init() {
    let level = EnvFilter::try_from_env("YAZSES_LOG")
        // symphonia logs every failed probe as an error, zbus warns of a missing portal
        // before yazses' own error says what to do about it, and the MCP SDK warns of each
        // request it refuses in Rust's debug words (the server's own line says it).
        .unwrap_or_else(|_| "warn,symphonia=off,zbus=error,rmcp::service=error".into());
    let content = content_allowed();
    let guard = FilterFn::new(move |meta| {
        (content || without_content(meta.target(), meta.level()))
            && !cancellation_noise(meta.target(), meta.level())
    });
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter(level)
                .with_filter(guard),
        )
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_messages_and_whispers_tokens_are_held_to_info() {
        assert!(!without_content("rmcp::service", &Level::DEBUG));
        assert!(!without_content("rmcp", &Level::TRACE));
        assert!(without_content("rmcp::service", &Level::INFO));
        assert!(!without_content(
            "whisper_rs::whisper_logging_hook",
            &Level::DEBUG
        ));
        assert!(without_content("yazses::transcribe", &Level::DEBUG));
        assert!(without_content("rmcpx", &Level::DEBUG));
    }
}
