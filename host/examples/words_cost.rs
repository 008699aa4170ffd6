//! The CPU the words part of one end-of-turn check costs: the partial transcript of a
//! recording, padded with silence as a check pads it (`turn::CHECK_PAD_SAMPLES`), greedy,
//! the encoder window fit to the clip, on `THREADS` threads (default 1), `RUNS` times
//! after one warm-up run.
//!
//!     cargo run --release -p yazses --example words_cost -- MODEL fixtures/speech/answer.wav 10 1
//!
//! Prints one line: `runs=N threads=T cpu_ms_median=M cpu_ms_min=M wall_ms_median=W text=...`.

mod support;

use std::path::PathBuf;
use std::time::Instant;

use yazses::audio::{Limits, read};
use yazses::transcribe::{Engine, Options, Transcriber};
use yazses::turn::CHECK_PAD_SAMPLES;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let model = PathBuf::from(
        args.next()
            .ok_or_else(|| anyhow::anyhow!("usage: words_cost MODEL [FILE] [RUNS] [THREADS]"))?,
    );
    let file = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "fixtures/speech/answer.wav".into()),
    );
    let runs: usize = args.next().map_or(Ok(10), |n| n.parse())?.max(1);
    let threads: usize = args.next().map_or(Ok(1), |n| n.parse())?.max(1);
    let mut audio = read(&file, &Limits::default())?.samples;
    audio.resize(audio.len() + CHECK_PAD_SAMPLES, 0);
    let engine = Engine::load(&model)?;
    let options = Options::spoken(threads);
    let mut said = engine.said(audio.clone(), &options)?;
    let (mut cpu, mut wall) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let (start, at) = (support::cpu_ms(), Instant::now());
        said = engine.said(audio.clone(), &options)?;
        cpu.push(support::cpu_ms() - start);
        wall.push(at.elapsed().as_secs_f64() * 1000.0);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "runs={runs} threads={threads} cpu_ms_median={:.1} cpu_ms_min={:.1} wall_ms_median={:.1} text={:?}",
        cpu[runs / 2],
        cpu[0],
        wall[runs / 2],
        said.text
    );
    Ok(())
}
