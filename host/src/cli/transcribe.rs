//! `yazses transcribe`: audio files to text.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::print;
use crate::transcribe::{self, Engine, Options, Progress, Transcript};
use crate::{audio, config, model};

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
    /// Transcribe what decodes from a file with a damaged or missing tail (and say where
    /// it stops) instead of refusing it.
    #[arg(long)]
    pub partial: bool,
}

pub(super) fn run(args: TranscribeArgs, config: &config::Config) -> anyhow::Result<()> {
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
            accept_partial: args.partial,
        },
        cancel: None,
        fit_context: false,
    };
    let many = args.files.len() > 1;
    let mut failed = 0usize;
    for file in &args.files {
        let bar = progress_bar(file);
        let ticker = bar.clone();
        let result = transcribe::transcribe_file(&engine, file, &options, move |p| {
            if let Progress::Done { done_ms, .. } = p {
                match p.percent() {
                    Some(pct) => ticker.set_position(pct),
                    // A header that does not say how long the file is: count seconds.
                    None => ticker.set_message(format!("{} s", done_ms / 1000)),
                }
            }
        });
        bar.finish_and_clear();
        match result {
            Ok(t) => {
                if let Some(ms) = t.cut_short_ms {
                    tracing::warn!(
                        file = %file.display(),
                        at_s = ms as f64 / 1000.0,
                        "the file is cut short; the transcript covers what decoded"
                    );
                }
                print_transcript(&t, args.format, many.then_some(file.as_path()))?
            }
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
    print(&text)
}
