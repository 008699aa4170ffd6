//! The `yazses` command line.

mod devices;
#[cfg(feature = "dictate")]
mod dictate;
mod listen;
mod model;
mod status;
mod transcribe;
mod vad;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};

#[cfg(feature = "dictate")]
pub use dictate::{DictateAction, DictateArgs};
pub use listen::ListenArgs;
pub use model::ModelCommand;
pub use status::StatusArgs;
pub use transcribe::{Format, TranscribeArgs};
pub use vad::VadArgs;

use crate::audio::{AudioError, Input, Limits};
use crate::config;

/// The audio a command's file argument names: `-` is standard input, a pipe or socket is
/// read whole, anything else is a file (checked when it is decoded).
fn audio_input(arg: &Path, limits: &Limits) -> Result<Input, AudioError> {
    if arg == Path::new("-") {
        return Input::stdin(limits);
    }
    match std::fs::metadata(arg) {
        Ok(meta) if crate::platform::is_stream(&meta) => Input::stream_at(arg, limits),
        _ => Ok(Input::File(arg.to_owned())),
    }
}

/// Voice input for people and AI agents.
#[derive(Debug, Parser)]
#[command(name = "yazses", version, about, propagate_version = true)]
pub struct Cli {
    /// The config file (default: the platform config directory's yazses/config.toml); one
    /// named here must exist (`yazses --config PATH config show > PATH` starts one).
    #[arg(long, global = true, value_name = "PATH", env = "YAZSES_CONFIG")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the voice-activity detector and the end-of-speech policy over a WAV file:
    /// print the speech segments and where a capture of it would have stopped, and why.
    Vad(VadArgs),
    /// Transcribe audio files (WAV, FLAC, MP3, Ogg/Vorbis) with whisper.
    Transcribe(TranscribeArgs),
    /// List, fetch, locate or import whisper models.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Serve MCP over stdio (for Claude Code, Codex, Claude Desktop and other MCP clients).
    #[command(long_about = mcp_server_help())]
    McpServer,
    /// Show the configuration (`config show`, the default) or where its file is.
    Config {
        /// What to show [default: show].
        #[command(subcommand)]
        command: Option<ConfigCommand>,
    },
    /// List the audio input devices (pin one with the config key audio.device) and the
    /// yazses dongles plugged in, with what each says about itself.
    Devices,
    /// Listen once: capture from the configured source until the speaker stops, then
    /// print the transcript.
    Listen(ListenArgs),
    /// Who holds the microphone, who waits for it, the interrupt budget and the runtime
    /// directory shared by every yazses process of this user.
    Status(StatusArgs),
    /// Push-to-talk dictation: wait for a trigger, hear the user, type what they said
    /// into the focused window. `yazses dictate toggle|start|stop` drives the running one.
    #[cfg(feature = "dictate")]
    Dictate(DictateArgs),
    /// A build without dictation takes `yazses dictate ...` only to say so.
    #[cfg(not(feature = "dictate"))]
    #[command(hide = true, disable_help_flag = true)]
    Dictate {
        /// Whatever followed `dictate`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

/// `yazses mcp-server --help`: names both tools and when `ask_human` appears.
pub fn mcp_server_help() -> String {
    format!(
        "Serve MCP over stdio (for Claude Code, Codex, Claude Desktop and other MCP clients).\n\n{}\n\nstdout carries MCP messages only; logs go to stderr (YAZSES_LOG=info for more). The model loads on the first transcription.",
        crate::mcp::TOOLS_HELP
    )
}

/// `yazses config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration (the file's values over the defaults) as TOML.
    Show,
    /// Print the config file's path.
    Path,
}

/// Runs a parsed command line. Each command folds its flags over the config file's
/// values before they are checked, so a flag can supply what the file lacks.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let path = cli.config.as_deref();
    match cli.command {
        Command::Vad(args) => vad::run(args),
        Command::Transcribe(args) => transcribe::run(args, &config::load(path)?),
        Command::Model(cmd) => model::run(cmd),
        Command::McpServer => crate::mcp::serve_stdio(config::load(path)?),
        Command::Config {
            command: None | Some(ConfigCommand::Show),
        } => {
            let file = cli.config.clone().unwrap_or_else(config::default_path);
            if !file.exists() {
                // On stderr: the TOML on stdout stays a file one can save as it is.
                eprintln!(
                    "yazses: {} does not exist, so these are the defaults (save this output \
                     there to start one)",
                    file.display()
                );
                return print(&config::Config::default().to_toml());
            }
            print(&config::load(path)?.to_toml())
        }
        Command::Devices => devices::run(),
        Command::Listen(args) => {
            args.check()?;
            let config = config::load_with(path, |c| args.fold_into(c)).map_err(|e| {
                match e {
                    // Said in the flags' terms: the user may have no config file at all.
                    config::ConfigError::Invalid {
                        key: "audio.file", ..
                    } => anyhow::anyhow!(
                        "the file source needs a recording: add --file FILE (or set audio.file \
                         in the config file)"
                    ),
                    e => e.into(),
                }
            })?;
            listen::run(args, &config)
        }
        Command::Status(args) => status::run(args, &config::load(path)?),
        #[cfg(feature = "dictate")]
        Command::Dictate(args) => {
            let config = config::load_with(path, |c| args.fold_into(c))?;
            dictate::run(args, &config)
        }
        #[cfg(not(feature = "dictate"))]
        Command::Dictate { .. } => anyhow::bail!(
            "this yazses was built without dictation; build it with the cargo feature \
             `dictate` (on by default) for `yazses dictate`"
        ),
        Command::Config {
            command: Some(ConfigCommand::Path),
        } => print(&format!(
            "{}\n",
            cli.config
                .clone()
                .unwrap_or_else(config::default_path)
                .display()
        )),
    }
}

pub(super) fn print(text: &str) -> anyhow::Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")
}
