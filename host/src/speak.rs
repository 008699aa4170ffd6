//! Saying a question out loud through the platform's speech command, and printing it on
//! stderr too (for people with the sound off, and for logs of what was asked).
//!
//! The command comes from `[speak] command`; empty means the first one installed of
//! `espeak-ng`, `spd-say --wait`, `say` (macOS) and PowerShell's SAPI (Windows). The text
//! is passed as one argument, never through a shell. The command inherits our stdout: in
//! `yazses mcp-server` that descriptor already points at stderr (the server's fd-level
//! guard), so a chatty speech program cannot write into the MCP stream; a test pins that.
//!
//! Speaking is bounded: the command runs in a process group of its own, and the whole
//! group is killed when it outlasts its timeout, when the caller cancels, and when the
//! server exits ([`stop_all`]), so a hung synthesiser (or the player it started) neither
//! blocks a question nor outlives yazses.

use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    /// The command did not finish in time and was killed.
    #[error("the speech command {command} was still running after {secs} s and was stopped")]
    TimedOut {
        /// The program.
        command: String,
        /// The limit.
        secs: u64,
    },
    /// The command ran but no sound came out: it says it found no audio output.
    #[error(
        "the speech command {command} found no sound output ({said}); connect a speaker, or \
         set [speak] enabled = false to have questions only printed"
    )]
    NoSound {
        /// The program.
        command: String,
        /// The line of its output that says so.
        said: String,
    },
    /// The caller cancelled while the question was being said.
    #[error("cancelled while speaking")]
    Cancelled,
}

/// The time allowed to say `text`: 10 s plus 1 s per 10 characters, at most 60 s, unless
/// `configured_s` (non-zero) says otherwise.
pub fn timeout_for(text: &str, configured_s: f64) -> Duration {
    if configured_s > 0.0 {
        return Duration::from_secs_f64(configured_s);
    }
    Duration::from_secs((10 + text.chars().count() as u64 / 10).min(60))
}

/// Process groups of speech commands still running, for [`stop_all`].
static SPEAKING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Kills every speech command still running (with what it started): for a server on its
/// way out.
pub fn stop_all() {
    let groups = std::mem::take(&mut *SPEAKING.lock().unwrap_or_else(|e| e.into_inner()));
    for pid in groups {
        kill_group(pid);
    }
}

fn kill_group(pid: u32) {
    crate::platform::kill_process_group(pid);
}

/// A running speech command, registered for [`stop_all`] while it runs.
struct Speaking(Child);

impl Speaking {
    fn start(command: &mut Command) -> std::io::Result<Speaking> {
        crate::platform::own_process_group(command);
        let mut groups = SPEAKING.lock().unwrap_or_else(|e| e.into_inner());
        let child = command.spawn()?;
        groups.push(child.id());
        Ok(Speaking(child))
    }

    fn kill(&mut self) {
        kill_group(self.0.id());
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Speaking {
    fn drop(&mut self) {
        let id = self.0.id();
        SPEAKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&p| p != id);
    }
}

/// The environment variable that carries the text to every speech command too: a command
/// that names it (PowerShell's, on Windows) reads the text from there, where no quoting
/// in a script can go wrong, and is not given it as an argument.
pub const TEXT_VARIABLE: &str = "YAZSES_SPEAK_TEXT";

/// The program and arguments that will say `text`: `{text}` in the template replaced by
/// it, else the text appended as the last argument, unless the template reads it from
/// [`TEXT_VARIABLE`].
pub fn command_line(configured: &[String], text: &str) -> Result<Vec<String>, SpeakError> {
    let template: Vec<String> = if configured.is_empty() {
        default_command().ok_or(SpeakError::NoCommand)?
    } else {
        configured.to_vec()
    };
    let mut args: Vec<String> = template.iter().map(|a| a.replace("{text}", text)).collect();
    if !template
        .iter()
        .any(|a| a.contains("{text}") || a.contains(TEXT_VARIABLE))
    {
        args.push(text.to_owned());
    }
    Ok(args)
}

fn default_command() -> Option<Vec<String>> {
    crate::platform::SPEECH_COMMANDS
        .iter()
        .find(|c| crate::platform::on_path(c[0]))
        .map(|c| c.iter().map(|s| (*s).to_owned()).collect())
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

/// Prints `text` on stderr, made [`printable`], and returns what was printed.
pub fn print(text: &str) -> String {
    let text = printable(text);
    eprintln!("yazses: {text}");
    text
}

/// Prints the text on stderr and speaks it, waiting until it has been said, at most
/// `timeout`, and no longer than `cancel` stays clear. The text is passed through
/// [`printable`] first: a question comes from an agent, and its bytes must not reach the
/// user's terminal as commands.
pub fn say(
    configured: &[String],
    text: &str,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<(), SpeakError> {
    let text = &print(text);
    let args = command_line(configured, text)?;
    let failed = |reason: String| SpeakError::Failed {
        command: args[0].clone(),
        reason,
    };
    // Its stderr is read, not inherited: espeak-ng exits 0 when it finds no audio output,
    // and only says so there.
    let mut speaking = Speaking::start(
        Command::new(&args[0])
            .args(&args[1..])
            .env(TEXT_VARIABLE, text)
            .stdin(Stdio::null())
            .stderr(Stdio::piped()),
    )
    .map_err(|e| failed(e.to_string()))?;
    // Line by line through a channel: a daemon the command started outside its group
    // (speech-dispatcher autostarts so) may hold the pipe open for good, and must not hold
    // up the question.
    let (lines, stderr) = std::sync::mpsc::channel::<String>();
    if let Some(pipe) = speaking.0.stderr.take() {
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)) {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let started = Instant::now();
    let status = loop {
        if let Some(status) = speaking.0.try_wait().map_err(|e| failed(e.to_string()))? {
            break status;
        }
        if cancel.load(Ordering::SeqCst) {
            speaking.kill();
            return Err(SpeakError::Cancelled);
        }
        if started.elapsed() >= timeout {
            speaking.kill();
            return Err(SpeakError::TimedOut {
                command: args[0].clone(),
                secs: timeout.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What the command started in its group (an audio player) goes with it, and with it
    // the last writer to the stderr pipe.
    kill_group(speaking.0.id());
    let mut said = String::new();
    let grace = Instant::now() + Duration::from_millis(300);
    while let Ok(line) = stderr.recv_timeout(grace.saturating_duration_since(Instant::now())) {
        said.push_str(&line);
        said.push('\n');
    }
    if !status.success() {
        return Err(failed(format!("it exited with {status}")));
    }
    if let Some(line) = no_sound_output(&said) {
        return Err(SpeakError::NoSound {
            command: args[0].clone(),
            said: line.to_owned(),
        });
    }
    // Anything else it said is passed on, as when it wrote to our stderr itself.
    if !said.trim().is_empty() {
        eprint!("{said}");
    }
    Ok(())
}

/// The line of a speech command's stderr that says it had no audio output to play on:
/// ALSA finding no device, or PulseAudio no server.
fn no_sound_output(stderr: &str) -> Option<&str> {
    const SIGNS: [&str; 4] = [
        "Unknown PCM",
        "snd_pcm_open",
        "cannot find card",
        "Connection refused",
    ];
    stderr
        .lines()
        .find(|line| SIGNS.iter().any(|sign| line.contains(sign)))
        .map(str::trim)
}

// The speech commands of these tests are `sh` scripts.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_exits_0_without_a_sound_output_is_not_spoken() {
        // As espeak-ng does on a machine without a sound card.
        let quiet = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo 'ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM default' >&2; \
             echo 'error: No such file or directory' >&2"
                .to_owned(),
        ];
        let err = say(
            &quiet,
            "Ready?",
            Duration::from_secs(5),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, SpeakError::NoSound { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("no sound output") && text.contains("Unknown PCM"),
            "{text}"
        );
        assert!(text.contains("[speak] enabled = false"), "{text}");
        // Other chatter on stderr is not a failure.
        let chatty = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo 'using voice en-us' >&2".to_owned(),
        ];
        say(
            &chatty,
            "Ready?",
            Duration::from_secs(5),
            &AtomicBool::new(false),
        )
        .unwrap();
    }

    #[test]
    fn the_text_reaches_the_command_in_its_variable_too() {
        let checks = |wanted: &str| {
            vec![
                "sh".to_owned(),
                "-c".to_owned(),
                format!("[ \"$YAZSES_SPEAK_TEXT\" = '{wanted}' ]"),
            ]
        };
        let said = |cmd: &[String]| {
            say(
                cmd,
                "Ready?",
                Duration::from_secs(5),
                &AtomicBool::new(false),
            )
        };
        said(&checks("Ready?")).unwrap();
        assert!(said(&checks("Other")).is_err());
    }

    #[test]
    fn the_text_replaces_its_placeholder_or_comes_last_and_is_one_argument() {
        let cmd = vec!["speak".to_owned(), "--voice".to_owned(), "en".to_owned()];
        assert_eq!(
            command_line(&cmd, "a; rm -rf /").unwrap(),
            ["speak", "--voice", "en", "a; rm -rf /"]
        );
        let cmd = vec!["x".to_owned(), "--text={text}".to_owned(), "-q".to_owned()];
        assert_eq!(command_line(&cmd, "hi").unwrap(), ["x", "--text=hi", "-q"]);
        let reads_env = [
            "sh".to_owned(),
            "-c".into(),
            "say \"$YAZSES_SPEAK_TEXT\"".into(),
        ];
        assert_eq!(command_line(&reads_env, "hi").unwrap(), reads_env);
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
        say(
            &cmd,
            hostile,
            Duration::from_secs(10),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&said).unwrap(), clean);
    }

    fn say_for(cmd: &[&str], timeout: Duration, cancel: &AtomicBool) -> Result<(), SpeakError> {
        let cmd: Vec<String> = cmd.iter().map(|s| (*s).to_owned()).collect();
        say(&cmd, "hello", timeout, cancel)
    }

    #[test]
    fn a_failing_command_is_an_error_not_a_panic() {
        let no = AtomicBool::new(false);
        let err = say_for(&["false"], Duration::from_secs(5), &no).unwrap_err();
        assert!(err.to_string().contains("false"), "{err}");
        let err = say_for(&["/nonexistent/speaker"], Duration::from_secs(5), &no).unwrap_err();
        assert!(matches!(err, SpeakError::Failed { .. }), "{err}");
    }

    /// Whether a process runs (a killed one waiting to be reaped does not).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    /// A hung speech command must not hold the question forever.
    #[test]
    fn a_hung_command_is_stopped_at_its_timeout_with_what_it_started() {
        let pidfile = std::env::temp_dir().join(format!("yazses-hung-{}", std::process::id()));
        // A shell that starts a long sleep (as a synthesiser starts a player) and waits.
        let script = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
        let started = Instant::now();
        let err = say_for(
            &["sh", "-c", &script, "speak"],
            Duration::from_millis(500),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, SpeakError::TimedOut { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
        let sleeper = std::fs::read_to_string(&pidfile).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !alive(sleeper.trim()),
            "the player the command started is still running"
        );
    }

    #[test]
    fn cancelling_stops_the_command_at_once() {
        let cancel = AtomicBool::new(true);
        let started = Instant::now();
        // The text comes last: `sh -c` takes it as $1, where a bare `sleep 300 hello` would
        // fail at once on its argument (and race the cancel).
        let err = say_for(
            &["sh", "-c", "sleep 300", "speak"],
            Duration::from_secs(60),
            &cancel,
        )
        .unwrap_err();
        assert!(matches!(err, SpeakError::Cancelled), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn the_timeout_grows_with_the_text_within_bounds() {
        assert_eq!(timeout_for("Ready?", 0.0), Duration::from_secs(10));
        assert_eq!(timeout_for(&"x".repeat(500), 0.0), Duration::from_secs(60));
        assert_eq!(timeout_for("x", 2.5), Duration::from_millis(2500));
    }
}
