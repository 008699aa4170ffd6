//! `yazses listen` as a user types it: which source the flags pick, what a wrong pair of
//! flags is told, and what a capture without a transcript reports. No model is needed:
//! every run here is `--no-transcribe` or refused before capture.

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use yazses_tests::{repo_root, runtime_dir, scratch, yazses_bin};

/// `yazses listen ARGS` with an empty config file and a runtime directory of its own.
fn listen(name: &str, args: &[&str]) -> Output {
    let config = scratch().join(format!("listen-cli-{name}.toml"));
    std::fs::write(&config, "").unwrap();
    Command::new(yazses_bin())
        .arg("--config")
        .arg(&config)
        .arg("listen")
        .args(args)
        .env(
            "YAZSES_RUNTIME_DIR",
            runtime_dir(&format!("listen-cli-{name}")),
        )
        .env_remove("YAZSES_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("yazses runs")
}

fn hello() -> String {
    repo_root()
        .join("fixtures/speech/hello.wav")
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn file_alone_plays_the_recording_as_the_microphone() {
    let out = listen(
        "file-alone",
        &["--file", &hello(), "--no-transcribe", "--json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stopped_because"], "end_of_speech", "{v}");
    // The detector heard speech; nothing was transcribed, so the text is null, not "".
    assert_eq!(v["heard"], true, "{v}");
    assert!(v["speech_start_ms"].as_u64().is_some(), "{v}");
    assert_eq!(v["text"], Value::Null, "{v}");
}

#[test]
fn a_capture_without_a_transcript_is_reported_in_words() {
    let out = listen("report", &["--file", &hello(), "--no-transcribe"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("speech from 0."), "{stdout}");
    assert!(
        stdout.contains("because the speaker stopped talking"),
        "{stdout}"
    );
    assert!(!stderr.contains("nothing was said"), "{stderr}");
    assert!(!format!("{stdout}{stderr}").contains("EndOfSpeech"));
}

#[test]
fn silence_is_reported_as_no_speech_without_rust_names() {
    let quiet = scratch().join("listen-cli-quiet.wav");
    yazses_tests::write_wav(&quiet, &vec![0i16; 16_000]);
    let out = listen(
        "quiet",
        &[
            "--file",
            quiet.to_str().unwrap(),
            "--no-transcribe",
            "--no-speech-ms",
            "500",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("no speech; stopped at"), "{stdout}");
    assert!(!stdout.contains("NoSpeech"), "{stdout}");
}

/// A script reading `$(yazses listen)` gets no line at all when nobody spoke, not an
/// empty one it could take for an answer; stderr says why.
#[test]
fn hearing_nothing_prints_nothing_on_stdout() {
    let quiet = scratch().join("listen-cli-quiet-words.wav");
    yazses_tests::write_wav(&quiet, &vec![0i16; 16_000]);
    let out = listen(
        "quiet-words",
        &[
            "--file",
            quiet.to_str().unwrap(),
            "--turn",
            "fixed",
            "--no-speech-ms",
            "500",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(stderr.contains("nothing was said"), "{stderr}");
}

#[test]
fn a_file_with_another_source_is_refused_naming_both() {
    let out = listen("conflict", &["--source", "cpal", "--file", &hello()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--file") && stderr.contains("--source cpal"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn the_file_source_without_a_file_asks_for_one_in_flag_terms() {
    let out = listen("no-file", &["--source", "file"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("add --file FILE"), "{stderr}");
    // Not "<config path>: audio.file = \"\" is out of range", about a file the user
    // may never have written.
    assert!(!stderr.contains("out of range"), "{stderr}");
}

#[test]
fn no_microphone_is_one_sentence_that_says_what_to_try() {
    // An ALSA configuration with no devices at all: the machine has no sound card.
    let empty = scratch().join("listen-cli-no-alsa-devices.conf");
    std::fs::write(&empty, "").unwrap();
    let config = scratch().join("listen-cli-cpal.toml");
    std::fs::write(&config, "").unwrap();
    let out = Command::new(yazses_bin())
        .arg("--config")
        .arg(&config)
        .args(["listen", "--source", "cpal", "--no-transcribe"])
        .env("ALSA_CONFIG_PATH", &empty)
        .env("YAZSES_RUNTIME_DIR", runtime_dir("listen-cli-cpal"))
        .env_remove("YAZSES_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // alsa-lib's own complaints go to the debug log, not the screen.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("`yazses devices`") && stderr.contains("--file FILE"),
        "{stderr}"
    );
}
