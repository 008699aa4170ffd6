//! The Smart Turn prosody model, run by yazses on real ONNX Runtime, against Pipecat's own
//! path (its numpy features, onnxruntime from Python) on the same cuts of our recordings.
//!
//! Needs `YAZSES_TEST_SMART_TURN_DIR`: the models directory `yazses model fetch smart-turn`
//! filled (`./ci.sh assets` runs it, from PyPI). Built only with `--features
//! yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::path::{Path, PathBuf};

use yazses::audio::{Limits, read};
use yazses::model::packed;
use yazses::turn::prosody::{Files, ProsodyError, SmartTurn};
use yazses_tests::{env_path, repo_root, scratch};

fn installed() -> Files {
    let dir = env_path("YAZSES_TEST_SMART_TURN_DIR");
    Files {
        model: dir.join(packed::SMART_TURN.file),
        runtime: packed::onnxruntime().map(|p| dir.join(p.file)),
        fetched_runtime: true,
    }
}

fn samples(name: &str) -> Vec<i16> {
    read(
        &repo_root().join("fixtures/speech").join(name),
        &Limits::default(),
    )
    .unwrap()
    .samples
}

/// One line of a probabilities file: a fixture, where it is cut, the probability there.
struct Cut {
    name: String,
    samples: usize,
    probability: f32,
}

fn cuts(file: &Path) -> Vec<Cut> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let cuts: Vec<Cut> = text
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(parts.len(), 3, "{}: {line:?}", file.display());
            Cut {
                name: parts[0].to_owned(),
                samples: parts[1].parse().unwrap(),
                probability: parts[2].parse().unwrap(),
            }
        })
        .collect();
    assert!(cuts.len() >= 5, "{}: {} cuts", file.display(), cuts.len());
    cuts
}

/// Pipecat's probabilities and model inputs, taken on this machine by
/// `bench/turns/smart_turn_reference.py` (`./ci.sh test` runs it first, with the ONNX
/// Runtime version yazses loads).
fn here() -> PathBuf {
    env_path("YAZSES_TEST_SMART_TURN_REFERENCE")
}

/// The int8 model's output moves with the CPU's integer kernels
/// (docs/decisions/2026-12-04-end-of-turn.md, "Why the runtimes disagree on Smart Turn"),
/// so the model is held against Pipecat's run of it
/// on this machine, on Pipecat's own input: the same runtime, the same input and one
/// thread give the same number, whatever the CPU.
#[test]
fn the_model_gives_pipecats_probability_on_pipecats_input_on_this_machine() {
    let mut model = SmartTurn::load(&installed()).unwrap();
    for cut in cuts(&here().join("smart_turn.txt")) {
        let file = here().join(format!("{}.{}.f32", cut.name, cut.samples));
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let features = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let got = model.probability_of_features(features).unwrap();
        eprintln!(
            "{} [..{}]: {got:.4} (Pipecat {:.4})",
            cut.name, cut.samples, cut.probability
        );
        // The file holds four decimals.
        assert!(
            (got - cut.probability).abs() <= 0.000_05 + f32::EPSILON,
            "{} cut at {}: {got} against Pipecat's {} on the same input",
            cut.name,
            cut.samples,
            cut.probability
        );
    }
}

/// End to end, our features included: they are within 1e-4 of Pipecat's numpy (mel.rs),
/// and 0.02 is what a difference that small may move the probability on this machine.
const TOLERANCE: f32 = 0.02;

#[test]
fn the_probabilities_match_pipecats_own_smart_turn_on_the_same_cuts_on_this_machine() {
    let mut model = SmartTurn::load(&installed()).unwrap();
    for cut in cuts(&here().join("smart_turn.txt")) {
        let audio = samples(&cut.name);
        let got = model.probability(&audio[..cut.samples]).unwrap();
        eprintln!(
            "{} [..{}]: {got:.4} (Pipecat {:.4})",
            cut.name, cut.samples, cut.probability
        );
        assert!(
            (got - cut.probability).abs() <= TOLERANCE,
            "{} cut at {}: {got} against Pipecat's {} here",
            cut.name,
            cut.samples,
            cut.probability
        );
    }
}

/// A copy of the installed files with the model replaced by `bytes`.
fn with_model(name: &str, bytes: &[u8]) -> Files {
    let files = installed();
    let model = scratch().join(name);
    std::fs::write(&model, bytes).unwrap();
    Files { model, ..files }
}

fn load_error(files: &Files) -> String {
    match SmartTurn::load(files) {
        Ok(_) => panic!("{} loaded", files.model.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_missing_truncated_or_wrong_model_is_named_with_the_fetch_command() {
    let whole = std::fs::read(installed().model).unwrap();
    let missing = Files {
        model: PathBuf::from("/nonexistent/smart-turn-v3.2-cpu.onnx"),
        ..installed()
    };
    let e = load_error(&missing);
    assert!(
        e.contains("/nonexistent/smart-turn-v3.2-cpu.onnx") && e.contains("not installed"),
        "{e}"
    );
    let truncated = with_model("truncated.onnx", &whole[..whole.len() / 2]);
    let e = load_error(&truncated);
    assert!(
        e.contains("truncated") && e.contains("truncated.onnx"),
        "{e}"
    );
    assert!(e.contains("yazses model fetch smart-turn"), "{e}");
    let mut changed = whole.clone();
    changed[whole.len() / 2] ^= 0xff;
    let e = load_error(&with_model("changed.onnx", &changed));
    assert!(e.contains("changed.onnx") && e.contains("SHA-256"), "{e}");
    assert!(e.contains("yazses model fetch smart-turn"), "{e}");
}

#[test]
fn a_runtime_library_that_will_not_load_is_named() {
    let garbage = scratch().join("libonnxruntime-garbage.so");
    std::fs::write(&garbage, b"not a shared object").unwrap();
    let files = Files {
        runtime: Some(garbage.clone()),
        fetched_runtime: false,
        ..installed()
    };
    // Run in a child process: one process loads one runtime, and the other tests load
    // the good one.
    if std::env::var_os("YAZSES_TEST_BAD_RUNTIME_CHILD").is_some() {
        let e = SmartTurn::load(&files).err().expect("garbage loaded");
        assert!(matches!(e, ProsodyError::Runtime { .. }), "{e}");
        assert!(
            e.to_string().contains(&garbage.display().to_string()),
            "{e}"
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_runtime_library_that_will_not_load_is_named",
            "--nocapture",
        ])
        .env("YAZSES_TEST_BAD_RUNTIME_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
