//! The partial transcript an end-of-turn check reads, token by token with whisper's
//! probability for each, for every turn of a set `bench/turns/make_set.py` wrote: does
//! whisper say how sure it is of a fragment misheard as a whole sentence?
//!
//! `cargo run --release -p yazses --example turn_tokens -- MODEL SET_DIR > tokens.jsonl`
//! (`PROMPT=...` in the environment: text whisper is given as what came before;
//! `PAD=loop`: the second after the clip is its last 100 ms of room noise over and over,
//! not digital silence; `PAD=none`: no second after it)
//!
//! Each line: the turn's name, kind and condition, the words signal's verdict on the text,
//! and the tokens (text, probability, and whisper.cpp's own start and end time in 10 ms
//! units, without DTW) of a greedy run over the audio up to 160 ms after the speech (the
//! check's read begins at 100 ms of silence after the detector's end, about 60 ms after
//! the speech's), with the check's second of silence after it, as `turn::signals::Words`
//! reads it.

use std::path::Path;

use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};
use yazses::audio::{Limits, read};
use yazses::turn::{CHECK_PAD_SAMPLES, PREFETCH_MS};

/// How far the detector's end of speech lies after the speech's own, in milliseconds
/// (measured on the turn set; docs/decisions/2026-12-04-end-of-turn.md, "Where the stop
/// comes from").
const DETECTOR_LAG_MS: u64 = 60;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, set] = args.as_slice() else {
        anyhow::bail!("usage: turn_tokens MODEL SET_DIR");
    };
    whisper_rs::install_logging_hooks();
    let params = WhisperContextParameters {
        flash_attn: true,
        ..WhisperContextParameters::default()
    };
    let ctx = WhisperContext::new_with_params(model, params)?;
    let mut state = ctx.create_state()?;
    // PROMPT: text whisper reads as what was said before (its style carries over).
    let prompt = match std::env::var("PROMPT") {
        Ok(text) => ctx.tokenize(&text, 200)?,
        Err(_) => Vec::new(),
    };
    // PAD: what follows the clip (the check's digital silence unless said otherwise).
    let pad = std::env::var("PAD").unwrap_or_default();
    let index: serde_json::Value =
        serde_json::from_reader(std::fs::File::open(Path::new(set).join("index.json"))?)?;
    for turn in index.as_array().into_iter().flatten() {
        let name = turn["name"].as_str().unwrap_or_default();
        let end_ms = turn["pause_start_ms"]
            .as_u64()
            .or_else(|| turn["end_ms"].as_u64())
            .unwrap_or_default();
        let audio = read(
            &Path::new(set).join(format!("{name}.wav")),
            &Limits::default(),
        )?;
        // The detector's end lags the speech's by about 60 ms; the read begins after that.
        let cut = ((end_ms + DETECTOR_LAG_MS + PREFETCH_MS) * 16) as usize;
        let mut samples: Vec<f32> = audio.samples[..cut.min(audio.samples.len())]
            .iter()
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
        match pad.as_str() {
            "none" => {}
            "loop" => {
                // the room's own noise: the last 100 ms, again and again
                let tail = samples[samples.len().saturating_sub(1600)..].to_vec();
                while !tail.is_empty() && samples.len() < cut + CHECK_PAD_SAMPLES {
                    samples.extend_from_slice(&tail);
                }
            }
            _ => samples.resize(samples.len() + CHECK_PAD_SAMPLES, 0.0),
        }
        let mut p = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        p.set_n_threads(1);
        p.set_print_progress(false);
        p.set_print_realtime(false);
        p.set_print_special(false);
        p.set_print_timestamps(false);
        p.set_language(Some("en"));
        let secs = (samples.len() as u64 / 16).div_ceil(1000) as usize + 1;
        p.set_audio_ctx((secs * 50).clamp(150, 1500) as i32);
        p.set_single_segment(true);
        p.set_no_context(true);
        p.set_token_timestamps(true);
        if !prompt.is_empty() {
            p.set_tokens(&prompt);
        }
        state.full(p, &samples)?;
        let mut tokens = Vec::new();
        let mut text = String::new();
        for seg in state.as_iter() {
            for t in 0..seg.n_tokens() {
                if let Some(tok) = seg.get_token(t) {
                    let t = tok.to_str_lossy()?.into_owned();
                    if !t.starts_with("[_") && !t.starts_with("<|") {
                        text.push_str(&t);
                    }
                    let data = tok.token_data();
                    tokens.push(serde_json::json!([
                        t,
                        tok.token_probability(),
                        data.t0,
                        data.t1
                    ]));
                }
            }
        }
        println!(
            "{}",
            serde_json::json!({
                "name": name,
                "kind": turn["kind"],
                "condition": turn["condition"],
                "truth": turn["text"],
                "verdict": yazses::turn::words::judge(&text).0,
                "text": text.trim(),
                "tokens": tokens,
            })
        );
    }
    Ok(())
}
