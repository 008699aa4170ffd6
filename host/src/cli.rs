//! The `yazses` command line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Duration;
use yazses_core::vad::Preset;

use crate::transcribe::{self, Engine, Options, Transcript};
use crate::{analysis, audio, config, model, plot};

/// Voice input for people and AI agents.
#[derive(Debug, Parser)]
#[command(name = "yazses", version, about, propagate_version = true)]
pub struct Cli {
    /// The config file (default: the platform config directory's yazses/config.toml).
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
    /// Show the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// List the audio input devices (pin one with [audio] device = "NAME") and the
    /// yazses dongles plugged in, with what each says about itself.
    Devices,
    /// Listen once: capture from the configured source until the speaker stops, then
    /// print the transcript.
    Listen(ListenArgs),
}

/// `yazses listen`.
#[derive(Debug, Args)]
pub struct ListenArgs {
    /// Where the audio comes from [default: the config's audio.source].
    #[arg(long, value_enum)]
    pub source: Option<config::SourceKind>,
    /// The dongle's port, with --source serial [default: audio.serial_port, or the first
    /// dongle found by USB id].
    #[arg(long, value_name = "PORT")]
    pub serial_port: Option<String>,
    /// The recording to play as the microphone, with --source file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Trailing silence that ends speech, in milliseconds.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u64).range(10..=120_000))]
    pub end_silence_ms: u64,
    /// How long to wait for speech before giving up, in milliseconds.
    #[arg(long, default_value_t = 8000, value_parser = clap::value_parser!(u64).range(200..=120_000))]
    pub no_speech_ms: u64,
    /// Longest capture, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=120))]
    pub timeout_s: u64,
    /// A model name or the path of a ggml file [default: transcribe.model].
    #[arg(long, env = "YAZSES_MODEL")]
    pub model: Option<String>,
    /// Print one JSON object (text, heard, audio_ms, stopped_because, listen_ms,
    /// speech_start_ms, ended_by_source, link) instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Capture only: report how the capture went, without loading a model.
    #[arg(long)]
    pub no_transcribe: bool,
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

/// Output formats of `yazses transcribe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The text, one line per file.
    Txt,
    /// One JSON object per file, one per line.
    Json,
    /// SubRip subtitles.
    Srt,
    /// WebVTT subtitles.
    Vtt,
}

/// `yazses transcribe`.
#[derive(Debug, Args)]
pub struct TranscribeArgs {
    /// The audio files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: Format,
    /// Spoken language (en, de, fr, ...), or auto to detect it (multilingual models only).
    #[arg(long)]
    pub language: Option<String>,
    /// A model name (see `yazses model list`) or the path of a ggml file [default: the
    /// config's transcribe.model, tiny.en].
    #[arg(long, env = "YAZSES_MODEL")]
    pub model: Option<String>,
    /// Threads for whisper (0: one per core) [default: transcribe.threads, 0].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Beam search width (1: greedy decoding, fastest) [default: transcribe.beam_size, 5].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub beam_size: Option<u16>,
    /// Refuse files longer than this, in seconds [default: transcribe.max_duration_s, 10800].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_duration_s: Option<u64>,
    /// Refuse files larger than this, in MiB [default: transcribe.max_file_mib, 1024].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_file_mib: Option<u64>,
}

/// `yazses model ...`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The official models, their sizes, and which are installed.
    List,
    /// Download an official model, verify its SHA-256, and install it.
    Fetch {
        /// The model's name, such as tiny.en or base.en-q5_1.
        name: String,
    },
    /// Print where a model's file is (or the models directory, without a name).
    Path {
        /// The model's name.
        name: Option<String>,
    },
    /// Convert a faster-whisper (CTranslate2) model directory into a ggml model.
    Import {
        /// The directory holding model.bin, config.json and vocabulary.txt (or tokenizer.json).
        dir: PathBuf,
        /// The name to install it under (then `--model NAME` uses it).
        #[arg(long)]
        name: String,
        /// Write here instead of the models directory.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `yazses vad`.
#[derive(Debug, Args)]
pub struct VadArgs {
    /// The WAV file (any rate and channel count; converted to 16 kHz mono).
    pub file: PathBuf,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Trailing silence that ends speech, in milliseconds.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u64).range(10..=120_000))]
    pub end_silence_ms: u64,
    /// How long to wait for speech before giving up, in milliseconds.
    #[arg(long, default_value_t = 8000, value_parser = clap::value_parser!(u64).range(200..=120_000))]
    pub no_speech_ms: u64,
    /// Overall limit, in milliseconds (the hard cap of 120 s applies regardless).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=120_000))]
    pub timeout_ms: Option<u64>,
    /// Detector tuning: default, quiet_room (soft speech in a silent room) or noisy (cafés, open offices).
    #[arg(long, default_value = "default", value_parser = parse_preset)]
    pub preset: Preset,
    /// Also draw waveform, levels, thresholds and decisions to this PNG file.
    #[arg(long, value_name = "OUT.png")]
    pub plot: Option<PathBuf>,
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::from_name(s).ok_or_else(|| {
        let names: Vec<_> = Preset::ALL.iter().map(|p| p.name()).collect();
        format!("unknown preset {s:?}; choose one of {}", names.join(", "))
    })
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let config = || config::load(cli.config.as_deref());
    match cli.command {
        Command::Vad(args) => vad(args),
        Command::Transcribe(args) => transcribe(args, &config()?),
        Command::Model(cmd) => model_command(cmd),
        Command::McpServer => crate::mcp::serve_stdio(config()?),
        Command::Config(ConfigCommand::Show) => print(&config()?.to_toml()),
        Command::Devices => {
            let mut out = String::new();
            for d in crate::mic::input_devices()? {
                out.push_str(&format!(
                    "{}{}\t{}\n",
                    d.name,
                    if d.default { " (default)" } else { "" },
                    d.description
                ));
            }
            if out.is_empty() {
                out.push_str("no audio input devices found\n");
            }
            for port in crate::serial::find_ports() {
                match crate::serial::probe(&port) {
                    Ok(d) => out.push_str(&format!(
                        "{port}\tyazses dongle: {} firmware {}, protocol {}, {} Hz\n",
                        d.board, d.fw_version, d.protocol, d.sample_rate
                    )),
                    Err(e) => out.push_str(&format!("{port}\tyazses dongle, not answering: {e}\n")),
                }
            }
            print(&out)
        }
        Command::Listen(args) => listen(args, &config()?),
        Command::Config(ConfigCommand::Path) => print(&format!(
            "{}\n",
            cli.config
                .clone()
                .unwrap_or_else(config::default_path)
                .display()
        )),
    }
}

fn print(text: &str) -> anyhow::Result<()> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")
}

fn vad(args: VadArgs) -> anyhow::Result<()> {
    let audio = audio::read(&args.file, &audio::Limits::default())?;
    let endpoint = EndpointConfig {
        end_silence: Duration::from_millis(args.end_silence_ms),
        no_speech: Duration::from_millis(args.no_speech_ms),
        timeout: args.timeout_ms.map(Duration::from_millis),
        ..EndpointConfig::default()
    };
    endpoint.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    let result = analysis::analyze(&audio.samples, args.preset.config(), endpoint);
    if let Some(out) = &args.plot {
        plot::draw(&result, &audio.samples, out)?;
        tracing::info!(path = %out.display(), "plot written");
    }
    let text = if args.json {
        let mut s = serde_json::to_string(&result.report).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        result.report.to_text()
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    Ok(())
}

fn listen(args: ListenArgs, config: &config::Config) -> anyhow::Result<()> {
    let mut audio_config = config.audio.clone();
    if let Some(source) = args.source {
        audio_config.source = source;
    }
    if let Some(port) = args.serial_port {
        audio_config.serial_port = port;
    }
    if let Some(file) = args.file {
        audio_config.file = file;
    }
    let endpoint = EndpointConfig {
        end_silence: Duration::from_millis(args.end_silence_ms),
        no_speech: Duration::from_millis(args.no_speech_ms),
        timeout: Some(Duration::from_secs(args.timeout_s)),
        ..EndpointConfig::default()
    };
    let utterance = {
        let mut source = crate::capture::open_source(&audio_config, endpoint)?;
        crate::capture::listen(
            source.as_mut(),
            yazses_core::vad::Vad::DEFAULT,
            endpoint,
            &std::sync::atomic::AtomicBool::new(false),
        )?
        // The source (the microphone, the dongle's port) is released here.
    };
    let link = utterance.link;
    if link.corrupt_frames > 0 || link.lost_frames > 0 {
        eprintln!(
            "yazses: the link dropped {} corrupt frame(s); {} audio frame(s) never arrived and were filled with silence",
            link.corrupt_frames, link.lost_frames
        );
    }
    let audio_ms = utterance.samples.len() as u64 / 16;
    let mut text = String::new();
    let mut heard = false;
    if !utterance.samples.is_empty() && !args.no_transcribe {
        let path = model::resolve(args.model.as_deref().unwrap_or(&config.transcribe.model))?;
        let engine = Engine::load(&path)?;
        let options = Options {
            threads: config.transcribe.threads,
            beam_size: usize::from(config.transcribe.beam_size),
            fit_context: true,
            ..Options::default()
        };
        let said = engine.transcribe_capture(utterance.samples, &options)?;
        heard = said.heard;
        text = said.text;
    }
    if args.json {
        let v = serde_json::json!({
            "text": text,
            "heard": heard,
            "audio_ms": audio_ms,
            "stopped_because": utterance.stopped_because,
            "listen_ms": utterance.listen_ms,
            "speech_start_ms": utterance.speech_start_ms,
            "ended_by_source": utterance.ended_by_source,
            "link": link,
        });
        print(&format!("{v}\n"))
    } else {
        if !heard {
            eprintln!(
                "yazses: nothing was said (stopped: {:?})",
                utterance.stopped_because
            );
        }
        print(&format!("{text}\n"))
    }
}

fn transcribe(args: TranscribeArgs, config: &config::Config) -> anyhow::Result<()> {
    let t = &config.transcribe;
    let path = model::resolve(args.model.as_deref().unwrap_or(&t.model))?;
    let engine = Engine::load(&path)?;
    let options = Options {
        language: args.language.clone(),
        threads: args.threads.unwrap_or(t.threads),
        beam_size: usize::from(args.beam_size.unwrap_or(t.beam_size)),
        limits: audio::Limits {
            max_bytes: args
                .max_file_mib
                .unwrap_or(t.max_file_mib)
                .saturating_mul(1 << 20),
            max_secs: args.max_duration_s.unwrap_or(t.max_duration_s),
        },
        cancel: None,
        fit_context: false,
    };
    let many = args.files.len() > 1;
    let mut failed = 0usize;
    for file in &args.files {
        let bar = progress_bar(file);
        let ticker = bar.clone();
        let result = transcribe::transcribe_file(&engine, file, &options, move |pct| {
            ticker.set_position(pct.clamp(0, 100) as u64)
        });
        bar.finish_and_clear();
        match result {
            Ok(t) => print_transcript(&t, args.format, many.then_some(file.as_path()))?,
            // With several files, one bad file does not stop the rest.
            Err(e) if many => {
                failed += 1;
                eprintln!("yazses: error: {e}");
            }
            Err(e) => return Err(e.into()),
        }
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} files could not be transcribed",
            args.files.len()
        );
    }
    Ok(())
}

/// A percentage bar on stderr, drawn only on a terminal and only once whisper is slow
/// enough to need one.
fn progress_bar(file: &std::path::Path) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(100),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}% {elapsed}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(file.display().to_string());
    bar
}

fn print_transcript(
    t: &Transcript,
    format: Format,
    name: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let text = match format {
        Format::Json => {
            let mut s = serde_json::to_string(t).context("serialising the transcript")?;
            s.push('\n');
            s
        }
        Format::Txt => match name {
            Some(n) => format!("{}: {}\n", n.display(), t.text),
            None => format!("{}\n", t.text),
        },
        Format::Srt => t.to_srt(),
        Format::Vtt => t.to_vtt(),
    };
    if !t.heard {
        tracing::warn!("no speech was heard; the transcript is empty");
    }
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")
}

fn model_command(cmd: ModelCommand) -> anyhow::Result<()> {
    let mut out = String::new();
    match cmd {
        ModelCommand::List => {
            let installed = model::installed();
            out.push_str(&format!(
                "models directory: {}\n",
                model::models_dir().display()
            ));
            out.push_str(&format!(
                "{:<14} {:>9}  {:<12} {}\n",
                "NAME", "SIZE", "LANGUAGES", "STATUS"
            ));
            for m in model::CATALOG {
                let status = match installed.iter().find(|i| i.name == m.name) {
                    Some(i) if i.bytes == m.bytes => "installed".to_owned(),
                    Some(i) => format!(
                        "installed ({} MB, not the official file)",
                        i.bytes / 1_000_000
                    ),
                    None => String::new(),
                };
                out.push_str(&format!(
                    "{:<14} {:>6} MB  {:<12} {}\n",
                    m.name,
                    m.bytes / 1_000_000,
                    if m.multilingual {
                        "multilingual"
                    } else {
                        "English"
                    },
                    status
                ));
            }
            for i in installed.iter().filter(|i| model::known(&i.name).is_none()) {
                out.push_str(&format!(
                    "{:<14} {:>6} MB  {:<12} installed (imported)\n",
                    i.name,
                    i.bytes / 1_000_000,
                    "?"
                ));
            }
        }
        ModelCommand::Fetch { name } => {
            let known = model::known(&name).ok_or_else(|| {
                let names: Vec<_> = model::CATALOG.iter().map(|m| m.name).collect();
                anyhow::anyhow!(
                    "{name:?} is not an official model; choose one of {}",
                    names.join(", ")
                )
            })?;
            let base = std::env::var("YAZSES_MODEL_BASE_URL")
                .unwrap_or_else(|_| model::OFFICIAL_BASE_URL.to_owned());
            let path = model::fetch::fetch(known, &base, &model::models_dir(), true)?;
            out.push_str(&format!("{}\n", path.display()));
        }
        ModelCommand::Path { name } => {
            let path = match name {
                Some(n) => model::resolve(&n)?,
                None => model::models_dir(),
            };
            out.push_str(&format!("{}\n", path.display()));
        }
        ModelCommand::Import { dir, name, output } => {
            if !model::valid_name(&name) {
                anyhow::bail!(
                    "{name:?} is not a usable model name (letters, digits, '.', '-' and '_')"
                );
            }
            let dest = output.unwrap_or_else(|| model::models_dir().join(model::file_name(&name)));
            let report = model::import::import_dir(&dir, &dest)?;
            let hp = report.hparams;
            tracing::info!(?hp, tensors = report.tensors, "imported");
            eprintln!(
                "imported a {}-layer/{}-wide whisper model ({} from {}, {} tokens, {} tensors, {} MB)",
                hp.n_audio_layer,
                hp.n_audio_state,
                if hp.n_vocab >= 51865 {
                    "multilingual"
                } else {
                    "English-only"
                },
                report.source_dtype,
                report.tokens,
                report.tensors,
                report.bytes / 1_000_000
            );
            out.push_str(&format!("{}\n", dest.display()));
        }
    }
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .context("writing to stdout")
}
