//! `yazses dictate`: the dictation process, and the commands that drive it.

use std::sync::{Arc, Mutex};

use clap::{Args, Subcommand};
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Duration;

use super::print;
use crate::config::{self, OutputKind, Trigger};
use crate::coord::Coordinator;
use crate::dictate::control::{self, Command};
use crate::dictate::{Dictation, single_instance};
use crate::transcribe::{Engine, Options};
use yazses_desktop as desktop;
use yazses_desktop::HotkeyError;
use yazses_desktop::deliver::{Deliver, Stdout};

/// `yazses dictate`.
#[derive(Debug, Args)]
pub struct DictateArgs {
    /// Drive the running dictation process instead of starting one.
    #[command(subcommand)]
    pub action: Option<DictateAction>,
    /// Where the text goes [default: dictate.output, type].
    #[arg(long, value_enum)]
    pub output: Option<OutputKind>,
    /// A model name or the path of a ggml file [default: transcribe.model].
    #[arg(long, env = "YAZSES_MODEL")]
    pub model: Option<String>,
}

impl DictateArgs {
    /// The flags, over the config file's `[dictate]` and `[transcribe]`.
    pub fn fold_into(&self, config: &mut config::Config) {
        if let Some(output) = self.output {
            config.dictate.output = output;
        }
        if let Some(model) = &self.model {
            config.transcribe.model = model.clone();
        }
    }
}

/// What to tell the running dictation process.
#[derive(Debug, Subcommand)]
pub enum DictateAction {
    /// Start a dictation when idle, end it (and type what was said) when one runs.
    Toggle,
    /// Start a dictation.
    Start,
    /// End the dictation and type what was said.
    Stop,
    /// Say whether a dictation runs.
    Status,
    /// Print the last dictated text that was not typed because its window was closed.
    Last,
}

/// Binds the configured hotkey on the session's desktop, or says why not.
fn bind_hotkey(spelling: &str) -> anyhow::Result<desktop::Listener> {
    let bound = spelling
        .parse::<desktop::Chord>()
        .map_err(HotkeyError::from)
        .and_then(|chord| desktop::Listener::bind(&chord));
    let listener = bound.map_err(|e| anyhow::anyhow!("dictate.hotkey: {e}"))?;
    eprintln!("yazses: hotkey {}", listener.describe());
    Ok(listener)
}

pub(super) fn run(args: DictateArgs, config: &config::Config) -> anyhow::Result<()> {
    let coord = Coordinator::from_env()?;
    if let Some(action) = args.action {
        let command = match action {
            DictateAction::Toggle => Command::Toggle,
            DictateAction::Start => Command::Start,
            DictateAction::Stop => Command::Stop,
            DictateAction::Status => Command::Status,
            DictateAction::Last => Command::Last,
        };
        let answer = control::send(coord.dir(), command)?;
        return print(&format!("{answer}\n"));
    }
    let d = &config.dictate;
    let mut grab = None;
    for trigger in &d.trigger {
        if *trigger == Trigger::Hotkey {
            grab = Some(bind_hotkey(&d.hotkey)?);
        }
    }
    let deliver: Box<dyn Deliver> = match d.output {
        OutputKind::Stdout => Box::new(Stdout),
        OutputKind::Type => desktop::typer()?,
        OutputKind::Paste => desktop::paster()?,
    };
    let dir = coord.dir().clone();
    let _instance = single_instance(&dir)?;
    if let Some(grab) = grab {
        let dir = dir.clone();
        std::thread::spawn(move || {
            loop {
                if let Err(e) = grab.next_press() {
                    tracing::error!("the hotkey stopped working: {e}");
                    return;
                }
                // Through the socket, exactly as a desktop shortcut would.
                match control::send(&dir, Command::Toggle) {
                    Ok(answer) => tracing::info!("hotkey: {answer}"),
                    Err(e) => tracing::warn!("hotkey: {e}"),
                }
            }
        });
    }
    // Loaded before the first press, so the first dictation is as quick as the rest.
    let engine = Engine::load_named(&config.transcribe.model)?;
    let audio = config.audio.clone();
    let ms = |s: f64| Duration::from_millis((s * 1000.0).round() as u64);
    let dictation = Dictation {
        coord: Arc::new(coord),
        open: Arc::new(move |endpoint| crate::source::open(&audio, endpoint)),
        transcriber: Arc::new(engine),
        deliver: Arc::new(Mutex::new(deliver)),
        endpoint: EndpointConfig {
            end_silence: ms(d.end_silence_s),
            timeout: Some(Duration::from_secs(u64::from(d.max_s))),
            ..EndpointConfig::default()
        },
        options: Options::spoken(config.transcribe.threads),
        dir: &dir,
        kept: Arc::default(),
    };
    if d.trigger.contains(&Trigger::Dongle) {
        dictation.watch_dongle(
            config.audio.serial_port.clone(),
            std::time::Duration::from_millis(d.tap_ms),
        );
    }
    dictation.serve()
}
