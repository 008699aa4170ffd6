//! The checks every build of yazses must pass, whatever it runs on. They run the build
//! `YAZSES_TEST_BIN` names (a command: `./ci.sh windows` passes a script that starts the
//! Windows build under Wine, `./ci.sh aarch64` one that starts the arm64 build under
//! qemu-aarch64), or without it this workspace's own, so Linux, Windows and aarch64 run the
//! same test bodies.
//!
//! Each build is held against what does not depend on it (the golden detector reports,
//! words the recording holds, the error texts) and, where builds may round differently,
//! against this workspace's own build. `YAZSES_TEST_SLOW_RUNNER=1` (an emulator that runs
//! whisper's vector code in software) transcribes the short recording only;
//! `YAZSES_TEST_NO_SERIAL_PORTS=<why>` leaves out the dongle on a serial port, for a runner
//! that cannot open one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
#[cfg(feature = "real-model")]
use std::time::{Duration, Instant};

use serde_json::Value;
use yazses_tests::pty::PtyPair;
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

/// `bin` with `args` after `--config`, from the repository root, not yet started.
fn command(bin: &Path, args: &[&str]) -> Command {
    command_in(bin, config(), args)
}

/// `bin` with `args` after `--config config`, from the repository root, not yet started.
fn command_in(bin: &Path, config: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin);
    command
        .arg("--config")
        .arg(config)
        .args(args)
        .current_dir(repo_root())
        .env_remove("YAZSES_LOG");
    command
}

/// `bin` with `args` after `--config`, from the repository root.
fn run(bin: &Path, args: &[&str]) -> Output {
    command(bin, args)
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", bin.display()))
}

/// Whether the build under test is a Windows one: `YAZSES_TEST_TARGET_OS=windows` (as
/// `./ci.sh windows` sets for a build under Wine), else the system this test runs on.
fn windows_build() -> bool {
    std::env::var("YAZSES_TEST_TARGET_OS").map_or(cfg!(windows), |os| os == "windows")
}

/// Whether the build runs on an emulator too slow for long transcriptions.
#[cfg(feature = "real-model")]
fn slow_runner() -> bool {
    std::env::var_os("YAZSES_TEST_SLOW_RUNNER").is_some_and(|v| v == "1")
}

/// Whether the build under test is a Windows one run under Wine on this system.
fn under_wine() -> bool {
    windows_build() && !cfg!(windows)
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

#[test]
fn a_file_as_the_runtime_directory_is_refused_in_words() {
    let file = scratch().join(format!("any-build-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let out = command(&under_test(), &["status"])
        .env("YAZSES_RUNTIME_DIR", &file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "status ran in a file: {err}");
    assert!(
        err.contains("cannot be used: it is not a directory"),
        "{err}"
    );
}

/// The port name the build under test opens for the pty end `host_end`: the path itself,
/// or under Wine COM7, linked in the prefix's `dosdevices` as Wine maps serial ports.
fn serial_port(host_end: &Path) -> String {
    if !under_wine() {
        return host_end.display().to_string();
    }
    let prefix = std::env::var_os("WINEPREFIX").expect("WINEPREFIX names the Wine prefix");
    let link = Path::new(&prefix).join("dosdevices/com7");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(std::fs::canonicalize(host_end).unwrap(), &link).unwrap();
    "COM7".into()
}

/// A port name that names no port on the build's system.
fn no_port() -> &'static str {
    if windows_build() {
        "COM9"
    } else {
        "/dev/yazses-no-such-port"
    }
}

/// The dongle on a serial port (the simulator over a socat pty pair): the capture ends
/// where the dongle's own detector says, an unplug mid-capture is an error that says so,
/// and a port that is not there is refused naming it.
#[test]
fn a_dongle_on_a_serial_port_ends_the_capture_and_its_faults_are_said() {
    if let Ok(why) = std::env::var("YAZSES_TEST_NO_SERIAL_PORTS") {
        eprintln!("the dongle is not tested on this runner: {why}");
        return;
    }
    let sim = Path::new(env!("CARGO_BIN_EXE_yazses-dongle-sim"));
    let answer = repo_root().join("fixtures/speech/answer.wav");
    let pty = PtyPair::new("any-build");
    let port = serial_port(&pty.host);
    let mut played = pty.simulate(sim, &answer, &[]);
    // With the model (not on an emulator), the capture is transcribed too.
    let model = capture_model();
    let heard_args = match model {
        Some(path) => serial_listen(&port, &["--json", "--model", path]),
        None => serial_listen(&port, &["--json", "--no-transcribe"]),
    };
    let heard: Value = serde_json::from_str(&stdout(&under_test(), &heard_args)).unwrap();
    assert_eq!(heard["stopped_because"], "end_of_speech", "{heard}");
    if model.is_some() {
        assert!(
            words(heard["text"].as_str().unwrap_or("")).contains("smaller model"),
            "{heard}"
        );
    }
    assert!(played.wait().unwrap().success());

    let mut unplugged = pty.simulate(sim, &answer, &["--disconnect-after-ms", "2000"]);
    let out = run(&under_test(), &serial_listen(&port, &["--no-transcribe"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "went on through an unplug: {err}");
    assert!(err.contains("still plugged in"), "{err}");
    let _ = unplugged.wait();
    drop(pty);

    let out = run(
        &under_test(),
        &serial_listen(no_port(), &["--no-transcribe"]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "opened {}: {err}", no_port());
    assert!(
        err.contains(&format!("cannot open the dongle's port {}", no_port())),
        "{err}"
    );
}

/// `listen` from the dongle on `port`, then `extra`.
fn serial_listen<'a>(port: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["listen", "--source", "serial", "--serial-port", port];
    args.extend(extra);
    args
}

/// The model a capture is transcribed with, where the build under test can do it in
/// reasonable time (built with the test model, not on an emulator).
fn capture_model() -> Option<&'static str> {
    #[cfg(feature = "real-model")]
    if !slow_runner() {
        return Some(yazses_tests::imported_model().to_str().unwrap());
    }
    None
}

#[cfg(feature = "real-model")]
mod with_the_model {
    use super::*;
    use yazses_tests::{client_check, env_path, imported_model, runtime_dir};

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
        if !slow_runner() {
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

    /// `path` as the build under test names it: a Windows build under Wine sees this system's
    /// files on drive Z:.
    fn build_path(path: &Path) -> String {
        if under_wine() {
            format!("Z:{}", path.display()).replace('/', "\\")
        } else {
            path.display().to_string()
        }
    }

    /// A config of one test's own: the model, and `body`.
    fn config_with(name: &str, body: &str) -> PathBuf {
        let path = scratch().join(format!("any-build-{name}-{}.toml", std::process::id()));
        let model = imported_model().display().to_string();
        std::fs::write(&path, format!("[transcribe]\nmodel = {model:?}\n{body}")).unwrap();
        path
    }

    /// A `[speak]` command that appends each spoken text to `said`, in the build's shell.
    fn speak_into(said: &Path) -> String {
        if windows_build() {
            format!(
                "[speak]\ncommand = [\"cmd\", \"/c\", 'echo %YAZSES_SPEAK_TEXT%>> {}']\n",
                build_path(said)
            )
        } else {
            client_check::speak_into_file(said)
        }
    }

    /// The MCP Python SDK's client (`tests/mcp/client_check.py`) against the build's
    /// `mcp-server`, in the initialize-handshake mode every client speaks.
    fn mcp_client(scenario: &str, config: &Path, said: &Path) {
        let mut check = client_check::command(&under_test(), config, "legacy", scenario);
        check
            .args(["--jfk", &build_path(&env_path("YAZSES_TEST_JFK"))])
            .args(["--said", said.to_str().unwrap()])
            .arg("--sentences")
            .arg(build_path(
                &repo_root().join("fixtures/speech/sentences.flac"),
            ));
        client_check::passes(&mut check, scenario);
    }

    /// A real MCP client drives the build's server through both tools and every restraint
    /// (transcribe alone, the tools' schemas and the refused `ask_human`, on an emulator);
    /// then two servers at once share one microphone and one hourly budget.
    #[test]
    fn an_mcp_client_is_served_through_both_tools_and_one_budget() {
        let said = scratch().join(format!("any-build-said-{}.txt", std::process::id()));
        let _ = std::fs::remove_file(&said);
        if slow_runner() {
            mcp_client("off", &config_with("mcp-off", &speak_into(&said)), &said);
            return;
        }
        let answer = repo_root().join("fixtures/speech/answer.wav");
        let on = config_with(
            "mcp-on",
            &format!(
                "[mcp]\nask_human = true\nask_human_per_hour = 2\n\
                 [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n{}",
                build_path(&answer),
                speak_into(&said)
            ),
        );
        mcp_client("on", &on, &said);
        std::fs::write(&said, "").unwrap();
        mcp_client("shared", &on, &said);
    }

    /// `yazses dictate` with the `command` trigger, driven over its control channel (a Unix
    /// socket, a named pipe on Windows) by other processes of the build: idle, start; while
    /// it hears jfk.wav another process sees the microphone held and a `listen` waits for
    /// it, then hears; the dictation prints the words; a second dictation is refused.
    #[test]
    fn a_dictation_is_driven_through_its_control_channel() {
        if slow_runner() {
            return;
        }
        let jfk = build_path(&env_path("YAZSES_TEST_JFK"));
        let cfg = config_with(
            "dictate",
            &format!(
                "[audio]\nsource = \"file\"\nfile = {jfk:?}\n\
                 [dictate]\ntrigger = [\"command\"]\noutput = \"stdout\"\n"
            ),
        );
        let runtime = runtime_dir("any-dictate");
        let bin = under_test();
        let yazses = |args: &[&str]| {
            let mut c = command_in(&bin, &cfg, args);
            c.env("YAZSES_RUNTIME_DIR", &runtime);
            c
        };
        let said = |args: &[&str]| {
            let out = yazses(args).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            text.trim().to_owned()
        };
        let mut dictation = yazses(&["dictate"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        struct Killed(std::process::Child);
        impl Drop for Killed {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let stdout = dictation.stdout.take().unwrap();
        let dictation = Killed(dictation);
        let deadline = Instant::now() + Duration::from_secs(60);
        while said(&["dictate", "status"]) != "idle" {
            assert!(
                Instant::now() < deadline,
                "the dictation never answered on its control channel: {}",
                said(&["dictate", "status"])
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        said(&["dictate", "start"]);
        let status = said(&["status"]);
        assert!(status.contains("held by yazses dictate"), "{status}");
        let listen = yazses(&["listen"]).output().unwrap();
        let (heard, waited) = (
            String::from_utf8_lossy(&listen.stdout),
            String::from_utf8_lossy(&listen.stderr),
        );
        assert!(waited.contains("waiting for the microphone"), "{waited}");
        assert!(words(&heard).contains("your country"), "{heard}: {waited}");
        let (line_tx, line_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
            let _ = line_tx.send(line);
        });
        let line = line_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the dictation printed nothing within a minute");
        assert!(words(&line).contains("your country"), "dictated: {line}");
        // One that were not refused would wait for a trigger: it is given 30 s.
        let mut second = Killed(
            yazses(&["dictate"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while second.0.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "a second dictation was not refused"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut err = String::new();
        std::io::Read::read_to_string(&mut second.0.stderr.take().unwrap(), &mut err).unwrap();
        assert!(err.contains("already running"), "{err}");
        drop(dictation);
    }
}
