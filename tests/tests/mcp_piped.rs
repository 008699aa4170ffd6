//! `yazses mcp-server` fed by a script: every request written at once, then the input
//! closed. Each request that was read is answered before the server stops, however long
//! it takes (the MCP SDK alone gives up on answers a few seconds after the end of input),
//! except a question to the user: the end of input is also how a client stops its
//! server, and a question whose answer nobody will take is not asked.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use yazses_tests::{runtime_dir, scratch, write_wav, yazses_bin};

/// Runs `yazses --config CONFIG mcp-server` with the handshake and `call` as its whole
/// input, closed at once; every line it printed, and how long it ran.
fn piped(name: &str, config: &Path, call: Value) -> (Vec<Value>, Duration) {
    let (lines, took, _) = piped_with_log(name, config, call);
    (lines, took)
}

/// [`piped`], with what the server wrote on stderr.
fn piped_with_log(name: &str, config: &Path, call: Value) -> (Vec<Value>, Duration, String) {
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "a-script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call,
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let started = Instant::now();
    let mut child = Command::new(yazses_bin())
        .args(["--config", config.to_str().unwrap(), "mcp-server"])
        .env("YAZSES_RUNTIME_DIR", runtime_dir(name))
        .env_remove("YAZSES_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yazses starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("timed out draining"), "{stderr}");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries JSON-RPC only"))
        .collect();
    (lines, took, stderr.into_owned())
}

/// The answer to request `id` among `lines`.
fn answer(lines: &[Value], id: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no answer to request {id}: {lines:?}"))
}

/// A question still being asked when the input ends is stopped (its listening would last
/// 8 s of real time: nobody answers), and the server exits at once.
#[test]
fn a_question_piped_in_is_stopped_when_the_input_ends() {
    let quiet = scratch().join("mcp-piped-quiet.wav");
    write_wav(&quiet, &vec![0i16; 16_000]);
    let config = scratch().join("mcp-piped-ask.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp]\nask_human = true\n[speak]\ncommand = [\"true\"]\n\
             [audio]\nsource = \"file\"\nfile = {:?}\nfile_realtime = true\n",
            quiet.display().to_string()
        ),
    )
    .unwrap();
    let (lines, took) = piped(
        "piped-ask",
        &config,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask_human", "arguments": {"question": "Ready?"}}}),
    );
    assert!(took < Duration::from_secs(6), "{took:?}");
    assert!(lines.iter().all(|l| l["id"] != 2), "{lines:?}");
    answer(&lines, 1);
}

/// A request the server refuses is logged in a sentence, not in the SDK's debug form.
#[test]
fn a_refused_request_is_logged_in_words() {
    let config = scratch().join("mcp-piped-refused.toml");
    std::fs::write(&config, "").unwrap();
    let (lines, _, log) = piped_with_log(
        "piped-refused",
        &config,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "no_such_tool", "arguments": {}}}),
    );
    assert_eq!(answer(&lines, 2)["error"]["message"], "tool not found");
    assert!(log.contains("refused a request: tool not found"), "{log}");
    assert!(!log.contains("ErrorData"), "{log}");
}

/// The issue's own case: a transcription piped in, then the end of input.
#[cfg(feature = "real-model")]
#[test]
fn a_transcription_piped_in_before_the_input_ends_is_still_answered() {
    let config = scratch().join("mcp-piped-transcribe.toml");
    std::fs::write(
        &config,
        format!(
            "[transcribe]\nmodel = {:?}\n",
            yazses_tests::imported_model().display().to_string()
        ),
    )
    .unwrap();
    // 30 s of speech: longer to read than the SDK's own 5 s wait after the end of input.
    let wav = yazses_tests::repo_root().join("fixtures/speech/sentences.flac");
    let (lines, _) = piped(
        "piped-transcribe",
        &config,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "transcribe", "arguments": {"path": wav.to_str().unwrap()}}}),
    );
    let result = &answer(&lines, 2)["result"];
    assert_ne!(result["isError"], true, "{result}");
    let text = result["structuredContent"]["text"].as_str().unwrap();
    let truth =
        std::fs::read_to_string(yazses_tests::repo_root().join("fixtures/speech/sentences.txt"))
            .unwrap();
    let rate = yazses_tests::wer::wer(&truth, text);
    assert!(rate < 0.3, "WER {rate:.2}: {text}");
}
