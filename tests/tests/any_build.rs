//! The checks every build of yazses must pass, whatever it runs on. They run the build
//! `YAZSES_TEST_BIN` names (a command: `./ci.sh windows` passes a script that starts the
//! Windows build under Wine, `./ci.sh aarch64` one that starts the arm64 build under
//! qemu-aarch64), or without it this workspace's own, so Linux, Windows and aarch64 run the
//! same test bodies.
//!
//! Each build is held against what does not depend on it (the golden detector reports,
//! words the recording holds, the error texts) and, where builds may round differently,
//! against this workspace's own build. `YAZSES_TEST_SLOW_RUNNER=1` (an emulator that runs
//! whisper's vector code in software) transcribes the short recording only.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use yazses_tests::{repo_root, scratch, yazses_bin};

/// The build under test.
fn under_test() -> PathBuf {
    std::env::var_os("YAZSES_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(yazses_bin)
}

/// A config file of the tests' own: a file microphone read as fast as it decodes, so no
/// user's config reaches the build under test.
fn config() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = scratch().join(format!("any-build-{}.toml", std::process::id()));
        std::fs::write(&path, "[audio]\nfile_realtime = false\n").expect("write the config");
        path
    })
}

/// `bin` with `args` after `--config`, from the repository root.
fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("--config")
        .arg(config())
        .args(args)
        .current_dir(repo_root())
        .env_remove("YAZSES_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", bin.display()))
}

/// Its stdout, with Windows line ends made plain; the run must have succeeded.
fn stdout(bin: &Path, args: &[&str]) -> String {
    let out = run(bin, args);
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8 output")
        .replace("\r\n", "\n")
}

/// A transcript's words: SIMD rounding may flip a case or a comma between builds, never a
/// word.
fn words(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_whitespace())
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_detector_gives_the_golden_report_for_every_fixture() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("fixtures/vad/manifest.json")).unwrap(),
    )
    .unwrap();
    for entry in manifest["files"].as_array().expect("files") {
        let name = entry["file"].as_str().unwrap();
        let report: Value = serde_json::from_str(&stdout(
            &under_test(),
            &["vad", "--json", &format!("fixtures/vad/{name}")],
        ))
        .expect("vad --json prints JSON");
        let golden = repo_root()
            .join("fixtures/vad/expected")
            .join(name.replace(".wav", ".json"));
        let golden: Value =
            serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
        assert_eq!(report, golden, "{name}");
    }
}

#[test]
fn a_file_capture_stops_where_this_workspaces_build_stops_to_the_millisecond() {
    for wav in [
        "fixtures/speech/answer.wav",
        "fixtures/speech/thinking.flac",
    ] {
        let args = [
            "listen",
            "--source",
            "file",
            "--file",
            wav,
            "--no-transcribe",
            "--json",
        ];
        let got: Value = serde_json::from_str(&stdout(&under_test(), &args)).unwrap();
        assert_eq!(got["stopped_because"], "end_of_speech", "{wav}: {got}");
        assert!(
            got["audio_ms"].as_u64().is_some_and(|ms| ms > 1000),
            "{wav}: {got}"
        );
        let want: Value = serde_json::from_str(&stdout(&yazses_bin(), &args)).unwrap();
        assert_eq!(got, want, "{wav}");
    }
}

/// The bad files of the checks below, written once per test process.
fn bad_files() -> [(PathBuf, &'static str); 3] {
    let dir = scratch().join(format!("any-build-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hello = std::fs::read(repo_root().join("fixtures/speech/hello.wav")).unwrap();
    std::fs::write(dir.join("truncated.wav"), &hello[..30_000]).unwrap();
    std::fs::write(dir.join("corrupt.wav"), b"RIFFxxxxWAVEjunk").unwrap();
    [
        (dir.join("missing.wav"), "cannot read"),
        (dir.join("corrupt.wav"), "is not a readable WAV file"),
        (dir.join("truncated.wav"), "is truncated"),
    ]
}

/// Runs `args` then the file, and expects a failing status and `says` on stderr.
fn refused(args: &[&str], file: &Path, says: &str) {
    let mut all = args.to_vec();
    all.push(file.to_str().unwrap());
    let out = run(&under_test(), &all);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{all:?} succeeded: {err}");
    assert!(err.contains(says), "{all:?} said: {err}");
}

#[test]
fn a_bad_file_is_refused_in_words_by_a_capture() {
    for (file, says) in bad_files() {
        refused(
            &["listen", "--source", "file", "--no-transcribe", "--file"],
            &file,
            says,
        );
    }
}

#[cfg(feature = "real-model")]
mod with_the_model {
    use super::*;
    use yazses_tests::{env_path, imported_model};

    #[test]
    fn a_bad_file_is_refused_in_words_by_transcribe() {
        let model = imported_model().to_str().unwrap();
        for (file, says) in bad_files() {
            refused(&["transcribe", "--model", model], &file, says);
        }
    }

    #[test]
    fn recordings_are_heard_with_this_workspaces_words() {
        let model = imported_model().to_str().unwrap();
        let mut recordings = vec![(
            repo_root().join("fixtures/speech/hello.wav"),
            "spoken by machine",
        )];
        if std::env::var_os("YAZSES_TEST_SLOW_RUNNER").is_none_or(|v| v != "1") {
            recordings.push((env_path("YAZSES_TEST_JFK"), "ask not what your country"));
        }
        for (wav, holds) in recordings {
            let args = ["transcribe", "--model", model, wav.to_str().unwrap()];
            let heard = words(&stdout(&under_test(), &args));
            assert!(heard.contains(holds), "{}: {heard}", wav.display());
            assert_eq!(
                heard,
                words(&stdout(&yazses_bin(), &args)),
                "{}",
                wav.display()
            );
        }
    }
}
