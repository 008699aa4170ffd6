//! The CPU one end-of-turn prosody check costs: the Smart Turn model over the last 8 s of
//! a recording (features and model run, one thread), `RUNS` times after one warm-up run.
//!
//! `bench/turns/prosody_cost.py` runs this beside Pipecat's own path on the same file and
//! prints the ratio; alone:
//!
//!     cargo run --release -p yazses --example prosody_cost -- fixtures/speech/answer.wav 20
//!
//! Prints one line: `runs=N cpu_ms_median=M cpu_ms_min=M probability=P load_cpu_ms=L`
//! (L: checking the files, loading the runtime and the model, once per process).

mod support;

use std::path::PathBuf;

use yazses::audio::{Limits, read};
use yazses::turn::prosody::{Files, SmartTurn};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "fixtures/speech/answer.wav".into()),
    );
    let runs: usize = args.next().map_or(Ok(20), |n| n.parse())?.max(1);
    let audio = read(&file, &Limits::default())?.samples;
    let start = support::cpu_ms();
    let mut model = SmartTurn::load(&Files::installed())?;
    let load = support::cpu_ms() - start;
    let mut p = model.probability(&audio)?;
    let mut costs = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = support::cpu_ms();
        p = model.probability(&audio)?;
        costs.push(support::cpu_ms() - start);
    }
    costs.sort_by(f64::total_cmp);
    println!(
        "runs={runs} cpu_ms_median={:.1} cpu_ms_min={:.1} probability={p:.4} load_cpu_ms={load:.0}",
        costs[runs / 2],
        costs[0]
    );
    Ok(())
}
