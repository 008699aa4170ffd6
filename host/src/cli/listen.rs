//! `yazses listen`: hear the user once through the configured source, under the shared
//! microphone lease, and print what they said.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration as StdDuration;

use clap::Args;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Duration;

use super::print;
use crate::config;
use crate::coord::{Coordinator, Purpose};
use crate::hear::{self, Hear};
use crate::transcribe::{Engine, ModelError, Options, Transcriber};
use crate::turn::TurnMode;
use crate::turn::signals::Loader;

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
    /// A recording to play as the microphone (implies --source file).
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
    /// speech_start_ms, ended_by_source, link, turn) instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Capture only: report how the capture went, without loading a model.
    #[arg(long)]
    pub no_transcribe: bool,
    /// The end-of-turn policy [default: the config's turn.mode, smart]: `smart` stops
    /// 1.2 s after a finished sentence and waits through a pause mid-sentence (it reads
    /// the words, so it needs the model; with --no-transcribe it is fixed); `fixed` stops
    /// after --end-silence-ms of silence.
    #[arg(long, value_enum)]
    pub turn: Option<crate::turn::TurnMode>,
    /// The question this answers, as `ask_human` hands it over: its words prompt the
    /// transcription, and under the smart turn a whole closed answer to a closed question
    /// ("Port 80 or 8080?" / "8080.") stops after turn.closed_end_silence_ms.
    #[arg(long, value_name = "TEXT")]
    pub question: Option<String>,
    /// The longest to wait while another yazses process has the microphone, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub queue_s: u64,
}

impl ListenArgs {
    /// Refuses source flags that contradict each other, before the config is read.
    pub fn check(&self) -> anyhow::Result<()> {
        match (self.source, &self.file) {
            (Some(source), Some(_)) if source != config::SourceKind::File => anyhow::bail!(
                "--file plays a recording as the microphone, so it cannot go with --source {}: \
                 drop one of them",
                clap::ValueEnum::to_possible_value(&source)
                    .map(|v| v.get_name().to_owned())
                    .unwrap_or_default()
            ),
            _ => Ok(()),
        }
    }

    /// The source flags, over the config file's `[audio]`. `--file` alone means the file
    /// source.
    pub fn fold_into(&self, config: &mut config::Config) {
        if let Some(source) = self.source {
            config.audio.source = source;
        } else if self.file.is_some() {
            config.audio.source = config::SourceKind::File;
        }
        if let Some(port) = &self.serial_port {
            config.audio.serial_port = port.clone();
        }
        if let Some(file) = &self.file {
            config.audio.file = file.clone();
        }
        if let Some(mode) = self.turn {
            config.turn.mode = mode;
        }
    }
}

pub(super) fn run(args: ListenArgs, config: &config::Config) -> anyhow::Result<()> {
    let endpoint = EndpointConfig {
        end_silence: Duration::from_millis(args.end_silence_ms),
        no_speech: Duration::from_millis(args.no_speech_ms),
        timeout: Some(Duration::from_secs(args.timeout_s)),
        ..EndpointConfig::default()
    };
    let coord = Coordinator::from_env()?;
    let options = Options::spoken(config.transcribe.threads);
    let mut request = Hear::new(Purpose::Listen, "yazses listen", endpoint, options)
        .queue_timeout(StdDuration::from_secs(args.queue_s))
        .turn(config.turn);
    if let Some(question) = &args.question {
        request = request.asking(question);
    }
    if args.no_transcribe {
        request = request.without_transcript();
    }
    // Loaded before listening when the turn policy reads the words as they come: a model
    // that cannot load is reported before the user speaks.
    let (model, voice) = match request.turn_mode() {
        TurnMode::Smart => (hear::loaded(Arc::new(load(&args, config)?)), {
            let voice = crate::turn::prosody::load_installed();
            Loader::new(move || Ok(voice?))
        }),
        TurnMode::Fixed => (
            Loader::new(|| {
                load(&args, config)
                    .map(|e| Arc::new(e) as Arc<dyn Transcriber>)
                    .map_err(Into::into)
            }),
            Loader::unavailable("the fixed turn policy hears no voice"),
        ),
    };
    let no = AtomicBool::new(false);
    let audio = config.audio.clone();
    let open = move |endpoint| crate::source::open(&audio, endpoint);
    let heard = request.begin(&coord, &no, hear::tell_terminal)?.listen(
        &open,
        model,
        voice,
        &no,
        |_| {},
    )?;
    let utterance = heard.utterance;
    let link = utterance.link;
    if link.corrupt_frames > 0 || link.lost_frames > 0 {
        eprintln!(
            "yazses: the link dropped {} corrupt frame(s); {} audio frame(s) never arrived and were filled with silence",
            link.corrupt_frames, link.lost_frames
        );
    }
    let audio_ms = utterance.audio_ms();
    let said = heard.said.unwrap_or_default();
    let (text, mut heard) = (said.text, said.heard);
    // Without a transcript, "heard" is the detector's word: speech started.
    if args.no_transcribe {
        heard = utterance.speech_start_ms.is_some();
    }
    if args.json {
        let v = serde_json::json!({
            // null, not "", when nothing was transcribed on purpose.
            "text": (!args.no_transcribe).then_some(text),
            "heard": heard,
            "audio_ms": audio_ms,
            "stopped_because": utterance.stopped_because,
            "listen_ms": utterance.listen_ms,
            "speech_start_ms": utterance.speech_start_ms,
            "ended_by_source": utterance.ended_by_source,
            "link": link,
            "turn": utterance.turn,
        });
        print(&format!("{v}\n"))
    } else if args.no_transcribe {
        let report = match utterance.speech_start_ms {
            Some(start) => format!(
                "speech from {:.2} s; stopped at {:.2} s because {}; {:.2} s of audio kept",
                start as f64 / 1000.0,
                utterance.listen_ms as f64 / 1000.0,
                utterance.stopped_because,
                audio_ms as f64 / 1000.0
            ),
            None => format!(
                "no speech; stopped at {:.2} s because {}",
                utterance.listen_ms as f64 / 1000.0,
                utterance.stopped_because
            ),
        };
        print(&format!("{report}\n"))
    } else {
        // Nothing on stdout when nothing was said: a script reads no line rather than an
        // empty one it might take for an answer.
        if !heard || text.is_empty() {
            eprintln!("yazses: nothing was said ({})", utterance.stopped_because);
            return Ok(());
        }
        print(&format!("{text}\n"))
    }
}

/// The whisper model the flags or the config name.
fn load(args: &ListenArgs, config: &config::Config) -> Result<Engine, ModelError> {
    Engine::load_named(args.model.as_deref().unwrap_or(&config.transcribe.model))
}
