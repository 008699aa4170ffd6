//! Saying a question out loud through the platform's speech command, and printing it on
//! stderr too (for people with the sound off, and for logs of what was asked).
//!
//! The command comes from `[speak] command`; empty means the first one installed of
//! `espeak-ng`, `spd-say --wait`, `say` (macOS) and PowerShell's SAPI (Windows). The text
//! is passed as one argument, never through a shell. The command inherits our stdout: in
//! `yazses mcp-server` that descriptor already points at stderr (the server's fd-level
//! guard), so a chatty speech program cannot write into the MCP stream; a test pins that.

use std::process::{Command, Stdio};

/// Why the question could not be spoken.
#[derive(Debug, thiserror::Error)]
pub enum SpeakError {
    /// No speech command is configured or installed.
    #[error("no speech command found (install espeak-ng, or set [speak] command)")]
    NoCommand,
    /// The command could not be run or failed.
    #[error("the speech command {command} failed: {reason}")]
    Failed {
        /// The program.
        command: String,
        /// Why.
        reason: String,
    },
}

/// The program and arguments that will say `text`.
pub fn command_line(configured: &[String], text: &str) -> Result<Vec<String>, SpeakError> {
    let template: Vec<String> = if configured.is_empty() {
        default_command().ok_or(SpeakError::NoCommand)?
    } else {
        configured.to_vec()
    };
    let mut args: Vec<String> = template.iter().map(|a| a.replace("{text}", text)).collect();
    if !template.iter().any(|a| a.contains("{text}")) {
        args.push(text.to_owned());
    }
    Ok(args)
}

fn default_command() -> Option<Vec<String>> {
    let candidates: &[&[&str]] = if cfg!(target_os = "macos") {
        &[&["say"]]
    } else if cfg!(windows) {
        &[&[
            "powershell",
            "-NoProfile",
            "-Command",
            "Add-Type -AssemblyName System.Speech; (New-Object System.Speech.Synthesis.SpeechSynthesizer).Speak($args[0])",
        ]]
    } else {
        &[&["espeak-ng"], &["spd-say", "--wait"], &["espeak"]]
    };
    candidates
        .iter()
        .find(|c| on_path(c[0]))
        .map(|c| c.iter().map(|s| (*s).to_owned()).collect())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(program);
            p.is_file() || p.with_extension("exe").is_file()
        })
    })
}

/// `text` without what could rewrite or spoof a terminal or confuse a voice: control
/// characters (escape sequences, BEL, NUL; newlines and tabs become spaces) and the
/// bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C).
pub fn printable(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{61c}' => None,
            c => Some(c),
        })
        .collect()
}

/// Prints the text on stderr and speaks it, waiting until it has been said. The text is
/// passed through [`printable`] first: a question comes from an agent, and its bytes must
/// not reach the user's terminal as commands.
pub fn say(configured: &[String], text: &str) -> Result<(), SpeakError> {
    let text = &printable(text);
    eprintln!("yazses: {text}");
    let args = command_line(configured, text)?;
    let failed = |reason: String| SpeakError::Failed {
        command: args[0].clone(),
        reason,
    };
    let status = Command::new(&args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| failed(e.to_string()))?;
    if !status.success() {
        return Err(failed(format!("it exited with {status}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_replaces_its_placeholder_or_comes_last_and_is_one_argument() {
        let cmd = vec!["speak".to_owned(), "--voice".to_owned(), "en".to_owned()];
        assert_eq!(
            command_line(&cmd, "a; rm -rf /").unwrap(),
            ["speak", "--voice", "en", "a; rm -rf /"]
        );
        let cmd = vec!["x".to_owned(), "--text={text}".to_owned(), "-q".to_owned()];
        assert_eq!(command_line(&cmd, "hi").unwrap(), ["x", "--text=hi", "-q"]);
    }

    #[test]
    fn escape_sequences_and_bidi_overrides_never_reach_the_terminal_or_the_voice() {
        let hostile = "Deploy?\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7} ok\u{202e}txt.exe\u{0}\nnow";
        let clean = printable(hostile);
        assert_eq!(clean, "Deploy?]0;pwned[2J]52;c;ZXZpbA== oktxt.exe now");
        assert!(
            !clean
                .chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c))
        );
        // What the speech command is given is the cleaned text, as one argument.
        let said = std::env::temp_dir().join(format!("yazses-said-{}.txt", std::process::id()));
        let cmd = [
            "sh".to_owned(),
            "-c".to_owned(),
            format!("printf '%s' \"$1\" > {}", said.display()),
            "speak".to_owned(),
        ];
        say(&cmd, hostile).unwrap();
        assert_eq!(std::fs::read_to_string(&said).unwrap(), clean);
    }

    #[test]
    fn a_failing_command_is_an_error_not_a_panic() {
        let err = say(&["false".to_owned()], "hello").unwrap_err();
        assert!(err.to_string().contains("false"), "{err}");
        let err = say(&["/nonexistent/speaker".to_owned()], "hello").unwrap_err();
        assert!(matches!(err, SpeakError::Failed { .. }), "{err}");
    }
}
