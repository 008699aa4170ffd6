//! The host's half of the bit-exact check: the core's per-frame trace of
//! `fixtures/qemu/speech.raw` on x86-64 is the golden file `fixtures/qemu/decisions.txt`.
//! The firmware workspace's QEMU test (`firmware/qemu-core`) runs the same core over the
//! same clip on a Cortex-M4 and a Cortex-M0 and compares every line with the same file, so
//! a difference between the targets fails one side or the other.

use std::fmt::Write;

use yazses_core::autostop::Autostop;
use yazses_core::endpoint::{EndpointConfig, StopReason};
use yazses_core::frame::{FRAME_SAMPLES, as_frame};
use yazses_core::time::Instant;
use yazses_core::vad::Vad;
use yazses_tests::{assert_golden, repo_root};

#[test]
fn the_trace_of_the_cortex_m_clip_matches_its_golden_file() {
    let bytes = std::fs::read(repo_root().join("fixtures/qemu/speech.raw")).unwrap();
    assert_eq!(bytes.len() % (2 * FRAME_SAMPLES), 0, "whole frames only");
    let samples: Vec<i16> = bytes
        .chunks_exact(2)
        .map(|p| i16::from_le_bytes([p[0], p[1]]))
        .collect();
    let mut capture = Autostop::new(Vad::DEFAULT, EndpointConfig::default(), Instant::ZERO);
    let mut trace = String::new();
    let mut stop = None;
    for chunk in samples.chunks_exact(FRAME_SAMPLES) {
        let report = capture.push_frame(as_frame(chunk).unwrap());
        stop = stop.or(report.decision.stop());
        writeln!(trace, "{report}").unwrap();
    }
    let stop = stop.expect("the clip ends its capture");
    assert_eq!(stop.reason, StopReason::EndOfSpeech);
    // The sentence ends at 4.0 s into the clip (4.2 s in the source file).
    let end = stop.speech_end.unwrap().total_millis();
    assert!((3900..=4300).contains(&end), "speech ended at {end} ms");
    assert_golden(&repo_root().join("fixtures/qemu/decisions.txt"), &trace);
}
