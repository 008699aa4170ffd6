//! `yazses vad`: the detector and the end-of-speech policy over a recording.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Duration;
use yazses_core::vad::Preset;

use super::print;
use crate::{analysis, audio, plot};

/// `yazses vad`.
#[derive(Debug, Args)]
pub struct VadArgs {
    /// The recording (WAV, FLAC, MP3, Ogg/Vorbis; any rate and channel count; converted to
    /// 16 kHz mono); `-` reads it from standard input.
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
    /// Also draw waveform, levels, thresholds and decisions to this PNG file (checked
    /// before the analysis: a name ending in .png, in a folder that exists).
    #[arg(long, value_name = "OUT.png")]
    pub plot: Option<PathBuf>,
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    Preset::from_name(s).ok_or_else(|| {
        let names: Vec<_> = Preset::ALL.iter().map(|p| p.name()).collect();
        format!("unknown preset {s:?}; choose one of {}", names.join(", "))
    })
}

pub(super) fn run(args: VadArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.plot {
        plot::check_target(out)?;
    }
    let limits = audio::Limits::default();
    let audio = super::audio_input(&args.file, &limits)?.read(&limits)?;
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
    print(&text)?;
    Ok(())
}
