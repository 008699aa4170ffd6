//! Speed of the yazses-core detector and policy on one core, for `bench/vad/run.py`.
//!
//! `cargo run --release -p yazses --example vad_speed -- DIR` loads every WAV in DIR
//! (16 kHz mono), then times the detector and the end-of-speech policy over all of it,
//! repeated until at least two seconds have passed, and prints
//! `{"audio_s":..,"x_realtime":..}`.

use std::time::Instant as WallClock;

use yazses_core::autostop::Autostop;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::time::Instant;
use yazses_core::vad::Vad;

fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: vad_speed DIR"))?;
    let mut clips = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wav") {
            clips.push(yazses::audio::read_wav(&path)?.samples);
        }
    }
    let audio_s: f64 = clips.iter().map(|c| c.len() as f64 / 16_000.0).sum();
    let mut rounds = 0u32;
    let mut speech_frames = 0u64;
    let start = WallClock::now();
    while start.elapsed().as_secs_f64() < 2.0 || rounds == 0 {
        for clip in &clips {
            let mut capture = Autostop::new(Vad::DEFAULT, EndpointConfig::default(), Instant::ZERO);
            for frame in clip.chunks_exact(160) {
                let r = capture.push_frame(frame.try_into().expect("160 samples"));
                speech_frames += u64::from(r.vad.speech);
            }
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    // Printing the count keeps the work from being optimised away.
    println!(
        "{{\"audio_s\":{:.1},\"x_realtime\":{:.0},\"rounds\":{rounds},\"speech_frames\":{speech_frames}}}",
        audio_s,
        audio_s * f64::from(rounds) / secs
    );
    Ok(())
}
