//! What `yazses mcp-server` writes to its log: even at
//! `YAZSES_LOG=trace`, never what the user said nor what a file contains unless
//! `YAZSES_LOG_CONTENT=1` asks for it; and a cancelled transcription is not an error.
//! Needs the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use yazses_tests::{env_path, imported_model, repo_root, runtime_dir, scratch, yazses_bin};

/// Runs a server over `lines` (written with `pause` between them), returns (stdout, stderr).
fn serve(env: &[(&str, &str)], lines: &[String], pause: Duration) -> (String, String) {
    let cfg = scratch().join(format!("logs-{}.toml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "[mcp]\nask_human = true\n[audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = false\n\
             [speak]\ncommand = [\"true\"]\n[transcribe]\nmodel = {:?}\n",
            repo_root().join("fixtures/speech/answer.wav").display().to_string(),
            imported_model().display().to_string()
        ),
    )
    .unwrap();
    let mut child = Command::new(yazses_bin())
        .args(["--config", cfg.to_str().unwrap(), "mcp-server"])
        .env("YAZSES_RUNTIME_DIR", runtime_dir("logs"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(pause);
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn session(calls: &[serde_json::Value]) -> Vec<String> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "log-test", "version": "1"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ];
    lines.extend(calls.iter().map(|c| c.to_string()));
    lines
}

#[test]
fn transcripts_and_answers_stay_out_of_the_log_at_every_level_unless_asked_for() {
    let lines = session(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ask_human", "arguments": {"question": "Which model?"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "transcribe", "arguments": {"path": env_path("YAZSES_TEST_JFK")}}}),
    ]);
    let said = ["smaller model", "your country"];
    let (stdout, log) = serve(&[("YAZSES_LOG", "trace")], &lines, Duration::from_secs(4));
    for words in said {
        assert!(stdout.contains(words), "the answer itself: {stdout}");
        assert!(!log.contains(words), "{words:?} reached the log");
    }
    assert!(
        log.contains("transcribed"),
        "the log is at trace level: {log}"
    );
    let (_, log) = serve(
        &[("YAZSES_LOG", "trace"), ("YAZSES_LOG_CONTENT", "1")],
        &lines,
        Duration::from_secs(4),
    );
    for words in said {
        assert!(log.contains(words), "{words:?} missing though asked for");
    }
}

#[test]
fn a_cancelled_transcription_is_not_logged_as_an_error() {
    let lines = session(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "transcribe",
            "arguments": {"path": repo_root().join("fixtures/speech/sentences.flac")}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1, "reason": "changed my mind"}}),
    ]);
    let (_, log) = serve(&[("YAZSES_LOG", "info")], &lines, Duration::from_secs(2));
    assert!(log.contains("model loaded"), "{log}");
    assert!(!log.contains("ERROR"), "{log}");
}
