//! The dongle end to end over a real pseudo-terminal: `socat` makes a pty pair, the
//! dongle simulator (the firmware's state machine, `yazses-dongle-sim`) streams a
//! recording into one end with faults injected, and `yazses listen --source serial`
//! reads the other end.
//!
//! Needs `socat` (`.ci/run` installs it). The tests that transcribe need the real model
//! (`--features real-model`, which `./ci.sh test` turns on).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use yazses_tests::pty::PtyPair;
use yazses_tests::{repo_root, scratch, yazses_bin};

/// The simulator cargo built for these tests.
fn simulator() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim"))
}

trait Listen {
    fn listen(&self, extra: &[&str]) -> Output;
}

impl Listen for PtyPair {
    fn listen(&self, extra: &[&str]) -> Output {
        let config = scratch().join("serial-test-config.toml");
        std::fs::write(&config, "").unwrap();
        Command::new(yazses_bin())
            .arg("--config")
            .arg(&config)
            .args(["listen", "--source", "serial", "--json", "--serial-port"])
            .arg(&self.host)
            .args(extra)
            .env(
                "YAZSES_RUNTIME_DIR",
                yazses_tests::runtime_dir(&self.host.file_name().unwrap().to_string_lossy()),
            )
            .stdin(Stdio::null())
            .output()
            .expect("yazses runs")
    }
}

fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures/vad").join(name)
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "yazses listen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

fn golden_stop(name: &str) -> (u64, u64) {
    let path = repo_root()
        .join("fixtures/vad/expected")
        .join(name.replace(".wav", ".json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        v["autostop"]["stop_at_ms"].as_u64().unwrap(),
        v["autostop"]["speech_start_ms"].as_u64().unwrap(),
    )
}

#[test]
fn the_dongle_ends_the_capture_where_the_hosts_own_analysis_would() {
    let name = "utt00_pink_10db.wav";
    let pty = PtyPair::new("exact");
    let mut sim = pty.simulate(simulator(), &fixture(name), &[]);
    let v = json(&pty.listen(&["--no-transcribe"]));
    assert!(sim.wait().unwrap().success());
    // The chip's policy ran over the same frames as `yazses vad`'s: the same stop, to the
    // frame, and the same start of speech on the host's side of the link.
    let (stop_at, speech_start) = golden_stop(name);
    assert_eq!(v["ended_by_source"], true, "{v}");
    assert_eq!(v["stopped_because"], "end_of_speech", "{v}");
    assert_eq!(v["listen_ms"], stop_at, "{v}");
    assert_eq!(v["speech_start_ms"], speech_start, "{v}");
    assert_eq!(v["link"]["corrupt_frames"], 0);
    assert_eq!(v["link"]["lost_frames"], 0);
    // Pre-roll from 300 ms before speech to the stop.
    assert_eq!(v["audio_ms"], stop_at - (speech_start - 300), "{v}");
}

/// The dongle's own reason reaches the result as it was sent: a button let go of mid-answer
/// is "released", not the detector's "end_of_speech".
#[test]
fn a_button_let_go_of_mid_answer_ends_the_capture_as_released() {
    let pty = PtyPair::new("released");
    // The host's capture is running when the button goes down at 0.5 s; it comes up at
    // 2 s, mid-sentence (the answer is spoken from about 1 s to 4 s).
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &["--press-ms", "500", "--release-ms", "2000"],
    );
    let v = json(&pty.listen(&["--no-transcribe"]));
    let _ = sim.kill();
    let _ = sim.wait();
    assert_eq!(v["ended_by_source"], true, "{v}");
    assert_eq!(v["stopped_because"], "released", "{v}");
    let listened = v["listen_ms"].as_u64().unwrap();
    assert!((1400..=2100).contains(&listened), "{v}");
}

#[test]
fn five_percent_corrupt_frames_are_dropped_counted_and_the_capture_still_ends() {
    let pty = PtyPair::new("corrupt");
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &["--corrupt", "0.05", "--seed", "7"],
    );
    let v = json(&pty.listen(&["--no-transcribe"]));
    assert!(sim.wait().unwrap().success());
    let corrupt = v["link"]["corrupt_frames"].as_u64().unwrap();
    // 1,512 frames (audio and detector decisions) at 5 %: about 76 spoiled.
    assert!((30..=130).contains(&corrupt), "{v}");
    assert!(v["link"]["lost_frames"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["ended_by_source"], true, "{v}");
    assert_eq!(v["stopped_because"], "end_of_speech", "{v}");
}

#[test]
fn an_unplug_mid_utterance_is_a_clear_error_not_a_hang() {
    let pty = PtyPair::new("unplug");
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &["--disconnect-after-ms", "2500"],
    );
    let started = Instant::now();
    let out = pty.listen(&["--no-transcribe"]);
    let took = started.elapsed();
    let _ = sim.wait();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("yazses: error:") && err.contains("dongle"),
        "{err}"
    );
    assert!(err.contains(&pty.host.display().to_string()), "{err}");
    // 2.5 s of audio at 4x, then at most the 2 s silence limit.
    assert!(took < Duration::from_secs(6), "took {took:?}");
}

#[test]
fn garbage_mid_capture_ends_it_with_an_error_that_says_so() {
    let pty = PtyPair::new("garbage");
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &["--garbage-after-ms", "2000"],
    );
    let out = pty.listen(&["--no-transcribe"]);
    let _ = sim.kill();
    let _ = sim.wait();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no valid frame"), "{err}");
}

#[test]
fn a_port_with_nothing_on_it_is_refused_at_hello() {
    let pty = PtyPair::new("nobody");
    let started = Instant::now();
    let out = pty.listen(&["--no-transcribe"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not answer Hello"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_dongle_says_who_it_is() {
    let pty = PtyPair::new("hello");
    let mut sim = pty.simulate(simulator(), &fixture("utt00_clean.wav"), &[]);
    let info = yazses::source::dongle::probe(&pty.host.display().to_string()).unwrap();
    assert_eq!(info.board, "host-simulator");
    assert_eq!(info.protocol, yazses_core::wire::PROTOCOL_VERSION);
    assert_eq!(info.sample_rate, 16_000);
    let _ = sim.kill();
    let _ = sim.wait();
}

#[cfg(feature = "real-model")]
mod transcribed {
    use super::*;
    use yazses_tests::imported_model;
    use yazses_tests::wer::wer;

    const SENTENCE: &str = "The quick brown fox jumps over the lazy dog and then we can decide";

    fn transcript(name: &str, faults: &[&str]) -> Value {
        let pty = PtyPair::new(name);
        let mut sim = pty.simulate(simulator(), &fixture(name), faults);
        let model = imported_model().display().to_string();
        let v = json(&pty.listen(&["--model", &model]));
        assert!(sim.wait().unwrap().success());
        v
    }

    #[test]
    fn speech_with_a_pause_and_a_noise_tail_comes_back_whole() {
        let v = transcript("utt00_pink_10db.wav", &[]);
        assert_eq!(v["heard"], true, "{v}");
        let text = v["text"].as_str().unwrap();
        // tiny.en on espeak-ng speech in pink noise; the words after the 0.6 s pause
        // ("and then we can decide") must be there: the pause did not end the capture.
        let e = wer(SENTENCE, text);
        assert!(e <= 0.45, "WER {e:.2}: {text}");
        assert!(text.to_lowercase().contains("decide"), "{text}");
    }

    #[test]
    fn a_stream_with_five_percent_corrupt_frames_is_still_understood() {
        let v = transcript("utt00_clean.wav", &["--corrupt", "0.05", "--seed", "7"]);
        let text = v["text"].as_str().unwrap();
        let e = wer(SENTENCE, text);
        assert!(e <= 0.45, "WER {e:.2}: {text}");
        assert!(v["link"]["corrupt_frames"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_replugged_dongle_is_picked_up_by_the_same_process() {
    use std::sync::atomic::AtomicBool;
    use yazses::capture::{CaptureError, listen};
    use yazses::source::dongle::SerialSource;
    use yazses_core::endpoint::EndpointConfig;
    use yazses_core::vad::Vad;

    let endpoint = EndpointConfig::default();
    let capture = |pty: &PtyPair| -> Result<_, CaptureError> {
        let mut source = SerialSource::open(&pty.host.display().to_string(), &endpoint)?;
        listen(&mut source, Vad::DEFAULT, endpoint, &AtomicBool::new(false))
    };
    // First plug: unplugged mid-capture.
    let pty = PtyPair::new("replug");
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &["--disconnect-after-ms", "1500"],
    );
    assert!(capture(&pty).is_err());
    let _ = sim.wait();
    let path = pty.host.clone();
    drop(pty);
    // Plugged back in at the same path: the next capture in this process works.
    let pty = PtyPair::new("replug");
    assert_eq!(pty.host, path);
    let mut sim = pty.simulate(simulator(), &fixture("utt00_clean.wav"), &[]);
    let u = capture(&pty).expect("the replugged dongle captures");
    assert!(sim.wait().unwrap().success());
    assert!(u.ended_by_source);
    assert!(!u.samples.is_empty());
}

/// A 16 kHz recording whose sample `i` is `i`: any frame says where in it it was taken.
fn ramp_wav() -> PathBuf {
    let path = scratch().join("ramp-16k.wav");
    let samples: Vec<i16> = (0..30_000).map(|i| i as i16).collect();
    yazses_tests::write_wav(&path, &samples);
    path
}

/// A client killed mid-capture sends no `Stop`, so its capture goes on
/// streaming until the next client's `Start` ends it, and with the bus' latency its audio
/// is still arriving after that `Start`. None of it may become the new capture's start.
#[test]
fn audio_of_a_capture_killed_mid_stream_never_starts_the_next_one() {
    use yazses::source::FrameSource;
    use yazses::source::dongle::SerialSource;
    use yazses_core::endpoint::EndpointConfig;

    let pty = PtyPair::new("stale");
    let mut sim = pty.simulate(
        simulator(),
        &ramp_wav(),
        &["--speed", "1", "--latency-ms", "120", "--captures", "2"],
    );
    // The first client: a real `yazses listen`, killed (SIGKILL: no Stop) mid-capture.
    let config = scratch().join("serial-stale-config.toml");
    std::fs::write(&config, "").unwrap();
    let mut first = Command::new(yazses_bin())
        .arg("--config")
        .arg(&config)
        .args([
            "listen",
            "--source",
            "serial",
            "--no-transcribe",
            "--serial-port",
        ])
        .arg(&pty.host)
        .env("YAZSES_RUNTIME_DIR", yazses_tests::runtime_dir("stale"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    first.kill().unwrap();
    first.wait().unwrap();
    // The next capture, on the same dongle.
    let mut source =
        SerialSource::open(&pty.host.display().to_string(), &EndpointConfig::default())
            .expect("the second capture opens");
    for n in 0..20 {
        let frame = source.next_frame().unwrap().expect("a frame");
        let expected: Vec<i16> = (n * 160..(n + 1) * 160).map(|i| i as i16).collect();
        assert_eq!(frame.to_vec(), expected, "frame {n} of the new capture");
    }
    let stats = source.link_stats();
    // The situation really happened: the first capture's audio arrived after the Start.
    assert!(stats.stale_frames > 0, "{stats:?}");
    assert_eq!(stats.lost_frames, 0);
    drop(source);
    assert!(sim.wait().unwrap().success());
}

/// A dongle speaking another protocol version is refused with both
/// versions named, and what to update.
#[test]
fn a_dongle_of_another_protocol_version_is_refused_naming_both_versions() {
    let ours = yazses_core::wire::PROTOCOL_VERSION;
    for (theirs, advice) in [(ours - 1, "flash the dongle"), (ours + 1, "update yazses")] {
        let pty = PtyPair::new(&format!("v{theirs}"));
        let mut sim = pty.simulate(
            simulator(),
            &fixture("utt00_clean.wav"),
            &["--protocol", &theirs.to_string()],
        );
        let out = pty.listen(&["--no-transcribe"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("speaks wire protocol version {theirs}"))
                && err.contains(&format!("this yazses speaks version {ours}"))
                && err.contains(advice),
            "{err}"
        );
        let _ = sim.kill();
        let _ = sim.wait();
    }
}

/// The host suspends the bus mid-capture (it went to sleep) and resumes
/// it. The capture is reported cut short, not passed off as an answer, and the same
/// dongle, without a replug, serves the next capture normally.
#[test]
fn a_suspend_mid_capture_cuts_it_short_and_after_the_resume_the_dongle_works_on() {
    let pty = PtyPair::new("suspend");
    let mut sim = pty.simulate(
        simulator(),
        &fixture("utt00_clean.wav"),
        &[
            "--suspend-after-ms",
            "1000",
            "--resume-after-ms",
            "1200",
            "--captures",
            "2",
        ],
    );
    let cut = pty.listen(&["--no-transcribe"]);
    assert!(!cut.status.success());
    let err = String::from_utf8_lossy(&cut.stderr);
    assert!(
        err.contains("cut short") && err.contains("suspended the USB bus"),
        "{err}"
    );
    let v = json(&pty.listen(&["--no-transcribe"]));
    assert_eq!(v["ended_by_source"], true, "{v}");
    assert_eq!(v["link"]["stale_frames"], 0, "{v}");
    assert!(sim.wait().unwrap().success());
}
