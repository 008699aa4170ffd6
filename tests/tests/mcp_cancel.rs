//! `notifications/cancelled` stops a transcription in progress: the server's CPU use
//! drops to idle within seconds instead of finishing the work, and the session goes on.
//! Needs the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use yazses_tests::{imported_model, repo_root, scratch, write_wav, yazses_bin};

/// User plus system CPU time of a process, in clock ticks (Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // utime and stime are fields 14 and 15 of stat; after the name, 12 and 13 (0-based 11, 12).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn a_cancelled_transcription_stops_using_the_cpu_and_the_session_goes_on() {
    // Three minutes of speech: long enough to be cancelled mid-way.
    let reader = hound::WavReader::open(repo_root().join("fixtures/speech/answer.wav")).unwrap();
    let one: Vec<i16> = reader.into_samples::<i16>().map(Result::unwrap).collect();
    let long = scratch().join(format!("long-{}.wav", std::process::id()));
    write_wav(&long, &one.repeat(30));
    let cfg = scratch().join(format!("cancel-{}.toml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "[transcribe]\nmodel = {:?}\n",
            imported_model().display().to_string()
        ),
    )
    .unwrap();

    let mut child = Command::new(yazses_bin())
        .args(["--config", cfg.to_str().unwrap(), "mcp-server"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut recv = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "cancel-test", "version": "1"}}}),
    );
    recv();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "transcribe", "arguments": {"path": long.to_str().unwrap()},
        "_meta": {"progressToken": "p"}}}),
    );
    // Wait until whisper is working: the first progress notification.
    let started = Instant::now();
    loop {
        let v = recv();
        assert_ne!(v["id"], 2, "finished before it could be cancelled: {v}");
        if v["method"] == "notifications/progress" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
    }
    let busy_before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(500));
    let busy = cpu_ticks(pid) - busy_before;
    assert!(
        busy >= 20,
        "the transcription was not using the CPU ({busy} ticks in 0.5 s)"
    );

    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "test"}}),
    );
    // whisper checks the flag between its steps (here, a few seconds apart); the work
    // must stop well before the three minutes of audio are done.
    let cancelled_at = Instant::now();
    let stopped_after = loop {
        let before = cpu_ticks(pid);
        std::thread::sleep(Duration::from_millis(500));
        if cpu_ticks(pid) - before <= 5 {
            break cancelled_at.elapsed();
        }
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(10),
            "still computing 10 s after the cancel"
        );
    };
    eprintln!("the transcription stopped {stopped_after:?} after the cancel");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}));
    loop {
        let v = recv();
        if v["id"] == 3 {
            assert!(v["result"]["tools"].is_array(), "{v}");
            break;
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
