//! `yazses transcribe`: audio files to text.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::print;
use crate::transcribe::{self, Engine, Options, Progress, TranscribeError, Transcript};
use crate::{audio, config};

/// Output formats of `yazses transcribe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The text, one line per file.
    Txt,
    /// One JSON object per file, one per line, each with the file's path.
    Json,
    /// SubRip subtitles (one file each: several need --output-dir).
    Srt,
    /// WebVTT subtitles (one file each: several need --output-dir).
    Vtt,
}

impl Format {
    /// The file name extension `--output-dir` writes.
    fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Json => "json",
            Format::Srt => "srt",
            Format::Vtt => "vtt",
        }
    }

    /// Whether one output of this format is a whole document, so two cannot share a stream.
    fn is_document(self) -> bool {
        matches!(self, Format::Srt | Format::Vtt)
    }
}

/// `yazses transcribe`.
#[derive(Debug, Args)]
pub struct TranscribeArgs {
    /// The audio files; `-` reads one from standard input (a pipe: `ffmpeg -i talk.m4a -f
    /// wav - | yazses transcribe -`), as does a FIFO or `/dev/stdin`.
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
    /// Text said just before the recording (a question, names, terms): whisper takes it
    /// as context, so its words are heard likelier.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Write each file's output to DIR/NAME.EXT (NAME: the file's name without its
    /// extension, `stdin` for `-`; EXT: the format's) instead of stdout; DIR is made if
    /// it is not there.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

pub(super) fn run(args: TranscribeArgs, config: &config::Config) -> anyhow::Result<()> {
    let t = &config.transcribe;
    let engine = Engine::load_named(args.model.as_deref().unwrap_or(&t.model))?;
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
        prompt: args.prompt.clone(),
    };
    let many = args.files.len() > 1;
    let targets = output_targets(&args.files, args.format, args.output_dir.as_deref())?;
    let mut failed = 0usize;
    for (file, target) in args.files.iter().zip(&targets) {
        let bar = progress_bar(file);
        let ticker = bar.clone();
        let result = super::audio_input(file, &options.limits)
            .map_err(TranscribeError::from)
            .and_then(|input| {
                transcribe::transcribe_input(&engine, input, &options, move |p| {
                    if let Progress::Done { done_ms, .. } = p {
                        match p.percent() {
                            Some(pct) => ticker.set_position(pct),
                            // A header that does not say how long the file is: count seconds.
                            None => ticker.set_message(format!("{} s", done_ms / 1000)),
                        }
                    }
                })
            });
        bar.finish_and_clear();
        match result {
            Ok(t) => {
                if let Some(ms) = t.cut_short_ms {
                    crate::logging::warn_user(&format!(
                        "{} is cut short at {:.1} s; the transcript covers what decoded",
                        file.display(),
                        ms as f64 / 1000.0
                    ));
                }
                if !t.heard {
                    crate::logging::warn_user(&format!(
                        "no speech was heard in {}; the transcript is empty",
                        file.display()
                    ));
                }
                let text = render(&t, args.format, file, many && target.is_none())?;
                emit(&text, target.as_deref())?;
            }
            Err(e) => {
                // A JSON reader learns of the failure on the line the file would have had.
                if args.format == Format::Json {
                    let line = json_line(&FailedLine {
                        file: file.display().to_string(),
                        error: e.to_string(),
                    })?;
                    emit(&line, target.as_deref())?;
                }
                // With several files, one bad file does not stop the rest.
                if !many {
                    return Err(e.into());
                }
                failed += 1;
                eprintln!("yazses: error: {e}");
            }
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

/// Where each file's output goes: stdout (`None`), or its own file under `dir`. Refuses,
/// before any work, what would lose output: several whole documents on one stream, or two
/// inputs written to the same file.
fn output_targets(
    files: &[PathBuf],
    format: Format,
    dir: Option<&Path>,
) -> anyhow::Result<Vec<Option<PathBuf>>> {
    let Some(dir) = dir else {
        if files.len() > 1 && format.is_document() {
            let ext = format.extension();
            anyhow::bail!(
                "{} files cannot share one {} document on stdout: add --output-dir DIR to \
                 write one NAME.{ext} per file there",
                files.len(),
                ext.to_uppercase()
            );
        }
        return Ok(vec![None; files.len()]);
    };
    // Made as `mkdir -p` would, before any work: a typo shows at once, not after an hour.
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot make the output directory {}", dir.display()))?;
    let mut targets: Vec<Option<PathBuf>> = Vec::with_capacity(files.len());
    for file in files {
        let stem = if file == Path::new("-") {
            std::ffi::OsStr::new("stdin")
        } else {
            file.file_stem().with_context(|| {
                format!("{} has no file name to name its output", file.display())
            })?
        };
        // The whole stem, dots and all: `with_extension` would turn a.b.wav into a.srt.
        let mut name = stem.to_os_string();
        name.push(".");
        name.push(format.extension());
        let target = dir.join(name);
        if let Some(i) = targets.iter().position(|t| t.as_ref() == Some(&target)) {
            anyhow::bail!(
                "{} and {} would both be written to {}: transcribe them into different \
                 directories",
                files[i].display(),
                file.display(),
                target.display()
            );
        }
        targets.push(Some(target));
    }
    Ok(targets)
}

/// Writes `text` to stdout or to `target`.
fn emit(text: &str, target: Option<&Path>) -> anyhow::Result<()> {
    match target {
        None => print(text),
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("{}", path.display());
            Ok(())
        }
    }
}

/// A transcript as a JSON line: the file first, then the transcript's own keys.
#[derive(Serialize)]
struct TranscriptLine<'a> {
    file: String,
    #[serde(flatten)]
    transcript: &'a Transcript,
}

/// The JSON line of a file that could not be transcribed.
#[derive(Serialize)]
struct FailedLine {
    file: String,
    error: String,
}

fn json_line(value: &impl Serialize) -> anyhow::Result<String> {
    let mut s = serde_json::to_string(value).context("serialising the transcript")?;
    s.push('\n');
    Ok(s)
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

/// `t` in `format`; `named` puts the file's path before a text line.
fn render(t: &Transcript, format: Format, file: &Path, named: bool) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => json_line(&TranscriptLine {
            file: file.display().to_string(),
            transcript: t,
        })?,
        Format::Txt if named => format!("{}: {}\n", file.display(), t.text),
        Format::Txt => format!("{}\n", t.text),
        Format::Srt => t.to_srt(),
        Format::Vtt => t.to_vtt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_file_keeps_every_dot_of_its_inputs_name() {
        let dir = std::env::temp_dir();
        let files = [PathBuf::from("x/take.1.wav"), PathBuf::from("y/take.2.wav")];
        let targets = output_targets(&files, Format::Srt, Some(&dir)).unwrap();
        assert_eq!(
            targets,
            [Some(dir.join("take.1.srt")), Some(dir.join("take.2.srt"))]
        );
    }

    #[test]
    fn the_output_directory_is_made_and_standard_input_is_named_stdin() {
        let dir = std::env::temp_dir()
            .join(format!("yazses-outdir-{}", std::process::id()))
            .join("made/here");
        let _ = std::fs::remove_dir_all(&dir);
        let targets = output_targets(&[PathBuf::from("-")], Format::Vtt, Some(&dir)).unwrap();
        assert!(dir.is_dir());
        assert_eq!(targets, [Some(dir.join("stdin.vtt"))]);
    }
}
