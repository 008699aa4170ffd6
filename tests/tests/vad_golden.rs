//! The detector and the policy on generated speech with known boundaries
//! (`fixtures/vad`, made by `bench/vad/speechset.py --set fixtures` with espeak-ng and sox).
//!
//! Two checks per file: the decisions match the golden report byte for byte (any change
//! to the detector shows up as a reviewed diff), and they agree with the truth the
//! generator recorded, within stated tolerances.

use serde_json::Value;
use yazses::analysis::analyze;
use yazses::audio::read_wav;
use yazses_core::end::End;
use yazses_core::endpoint::EndpointConfig;
use yazses_core::vad::Vad;
use yazses_tests::{assert_golden, repo_root};

fn manifest() -> Vec<Value> {
    let path = repo_root().join("fixtures/vad/manifest.json");
    let text = std::fs::read_to_string(&path).expect("fixtures/vad/manifest.json");
    let v: Value = serde_json::from_str(&text).expect("manifest is JSON");
    v["files"].as_array().expect("files").clone()
}

#[test]
fn fixture_reports_match_their_golden_files() {
    let files = manifest();
    assert!(files.len() >= 4);
    for entry in files {
        let name = entry["file"].as_str().unwrap();
        let audio = read_wav(&repo_root().join("fixtures/vad").join(name)).unwrap();
        let report = analyze(&audio.samples, Vad::DEFAULT, EndpointConfig::default()).report;
        let mut json = serde_json::to_string_pretty(&report).unwrap();
        json.push('\n');
        let golden = repo_root()
            .join("fixtures/vad/expected")
            .join(name.replace(".wav", ".json"));
        assert_golden(&golden, &json);
    }
}

#[test]
fn speech_fixtures_start_where_speech_starts_and_stop_1_2_s_after_it_ends() {
    for entry in manifest().into_iter().filter(|e| e["kind"] == "speech") {
        let name = entry["file"].as_str().unwrap();
        let true_start = entry["true_start_ms"].as_u64().unwrap();
        let true_end = entry["true_end_ms"].as_u64().unwrap();
        let audio = read_wav(&repo_root().join("fixtures/vad").join(name)).unwrap();
        let a = analyze(&audio.samples, Vad::DEFAULT, EndpointConfig::default())
            .report
            .autostop;
        assert_eq!(a.stopped_because, End::EndOfSpeech, "{name}");
        let start = a.speech_start_ms.expect("speech started");
        assert!(
            start + 50 >= true_start && start <= true_start + 150,
            "{name}: speech counted from {start} ms, truth {true_start} ms"
        );
        // The end silence is timed from the last voiced frame, and the last syllable's soft
        // tail (the truth counts it down to 40 dB under the loudest frame) may end under
        // the threshold: so the stop may come up to 100 ms before the true end plus the
        // full end silence, 250 ms below 10 dB SNR, where more of the tail is under the
        // noise; and at most 300 ms after it. A cut at the 0.6 s pause would come more
        // than half a second early.
        let slack = if entry["snr"].as_u64().is_some_and(|snr| snr < 10) {
            250
        } else {
            100
        };
        assert!(
            a.stop_at_ms + slack >= true_end + 1200 && a.stop_at_ms <= true_end + 1500,
            "{name}: stopped at {} ms, truth ends at {true_end} ms",
            a.stop_at_ms
        );
    }
}

#[test]
fn noise_only_fixtures_never_start_speech_and_give_up_at_8_s() {
    for entry in manifest().into_iter().filter(|e| e["kind"] == "noise") {
        let name = entry["file"].as_str().unwrap();
        let audio = read_wav(&repo_root().join("fixtures/vad").join(name)).unwrap();
        let a = analyze(&audio.samples, Vad::DEFAULT, EndpointConfig::default())
            .report
            .autostop;
        assert_eq!(
            (a.stopped_because, a.stop_at_ms, a.speech_start_ms),
            (End::NoSpeech, 8000, None),
            "{name}"
        );
    }
}
