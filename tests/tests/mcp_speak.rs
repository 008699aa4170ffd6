//! Speaking a question through a real `yazses mcp-server`: a
//! speech command that hangs is stopped at its timeout, with what it started, and the
//! question is refused without listening; a server that is told to stop (stdin closed, or
//! SIGTERM) takes a hung speech command down with it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use yazses_tests::stdio_client::StdioClient;
use yazses_tests::{repo_root, runtime_dir, scratch};

/// A config whose speech command starts a long `sleep` (as a synthesiser starts a player),
/// writes its pid to `pidfile`, and waits for it.
fn hanging_config(name: &str, pidfile: &Path, timeout_s: f64) -> PathBuf {
    let path = scratch().join(format!("speak-{name}-{}.toml", std::process::id()));
    let _ = std::fs::remove_file(pidfile);
    std::fs::write(
        &path,
        format!(
            "[mcp]\nask_human = true\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n\
             [speak]\ntimeout_s = {timeout_s}\n\
             command = [\"sh\", \"-c\", \"sleep 300 & echo $! > {}; wait\", \"speak\"]\n",
            repo_root()
                .join("fixtures/speech/answer.wav")
                .display()
                .to_string(),
            pidfile.display(),
        ),
    )
    .unwrap();
    path
}

/// Whether a process runs (a killed one waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The pid the hung speech command wrote, once it has.
fn sleeper(pidfile: &Path) -> u32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never spoke");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_hung_speech_command_is_stopped_and_the_question_refused_without_listening() {
    let pidfile = scratch().join(format!("speak-timeout-{}.pid", std::process::id()));
    let cfg = hanging_config("timeout", &pidfile, 1.5);
    let mut client = StdioClient::start(&cfg, &runtime_dir("speak-timeout"), "speak-test");
    let asked = Instant::now();
    client.call(1, "ask_human", json!({"question": "Ship it?"}));
    let r = client.response(1);
    assert!(
        asked.elapsed() < Duration::from_secs(6),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("could not be spoken") && text.contains("after 1 s"),
        "{text}"
    );
    assert!(text.contains("nothing was listened for"), "{text}");
    assert!(gone_within(sleeper(&pidfile), Duration::from_secs(2)));
    // The microphone is free again: the next question gets as far as speaking.
    let _ = std::fs::remove_file(&pidfile);
    client.call(2, "ask_human", json!({"question": "And now?"}));
    sleeper(&pidfile);
}

#[test]
fn a_server_told_to_stop_takes_a_hung_speech_command_with_it() {
    for (name, stop) in [("stdin", "close stdin"), ("sigterm", "SIGTERM")] {
        let pidfile = scratch().join(format!("speak-{name}-{}.pid", std::process::id()));
        let cfg = hanging_config(name, &pidfile, 0.0);
        let mut client = StdioClient::start(&cfg, &runtime_dir(name), "speak-test");
        client.call(1, "ask_human", json!({"question": "Still there?"}));
        let pid = sleeper(&pidfile);
        if name == "stdin" {
            client.close_stdin();
        } else {
            std::process::Command::new("kill")
                .args(["-TERM", &client.child.id().to_string()])
                .status()
                .unwrap();
        }
        let exited = Instant::now();
        let status = loop {
            if let Some(status) = client.child.try_wait().unwrap() {
                break status;
            }
            // A question in flight is cancelled when stdin closes.
            assert!(
                exited.elapsed() < Duration::from_secs(8),
                "{stop}: the server did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{stop}: {status}");
        assert!(
            gone_within(pid, Duration::from_secs(2)),
            "{stop}: the speech command outlived the server"
        );
    }
}

/// espeak-ng exits 0 when it finds no audio output; the question must not be reported
/// as said, nor the microphone opened for an answer to a question nobody heard.
#[test]
fn espeak_ng_without_a_sound_output_is_not_reported_as_spoken() {
    let cfg = scratch().join(format!("speak-no-sound-{}.toml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "[mcp]\nask_human = true\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n\
             [speak]\ncommand = [\"espeak-ng\"]\n",
            repo_root()
                .join("fixtures/speech/answer.wav")
                .display()
                .to_string(),
        ),
    )
    .unwrap();
    // An ALSA configuration with no devices: a machine without a sound card.
    let alsa = scratch().join("speak-no-sound.asound.conf");
    std::fs::write(&alsa, "").unwrap();
    let mut client = StdioClient::start_with(
        &cfg,
        &runtime_dir("speak-no-sound"),
        "speak-test",
        &[("ALSA_CONFIG_PATH", &alsa)],
    );
    client.call(1, "ask_human", json!({"question": "Can you hear me?"}));
    let r = client.response(1);
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("could not be spoken") && text.contains("no sound output"),
        "{text}"
    );
    assert!(text.contains("[speak] enabled = false"), "{text}");
    assert!(text.contains("nothing was listened for"), "{text}");
}
